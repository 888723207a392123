//! `lambdamart ties=…` through the registry: document order stays the default bit for bit, and a seeded shuffle of
//! equal scores gives one model per seed, the same at one and two threads, and another model for another seed.

use ltr_data::{generate_web, WebConfig};
use ltr_learn::{train, Grid, TrainRequest, Trained};

fn grid(settings: &[&str]) -> Grid {
    Grid::parse(&settings.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

/// The model's text: its numbers printed shortest-round-trip, so equal text is equal bits.
fn model_text(t: &Trained) -> String {
    serde_json::to_string(&t.fitted.model).unwrap()
}

#[test]
fn ties_shuffle_by_seed_and_file_order_stays_the_default() {
    // Raw web data: integer counts and exact zeros, so trees of few leaves leave many scores tied.
    let data = generate_web(&WebConfig {
        queries: 30,
        min_docs: 10,
        max_docs: 40,
        seed: 4,
        ..Default::default()
    })
    .unwrap();
    let run = |ties: Option<&str>, seed: u64, threads: usize| {
        let mut settings = vec!["trees=8".to_string(), "leaves=7".to_string()];
        settings.extend(ties.map(|t| format!("ties={t}")));
        let settings: Vec<&str> = settings.iter().map(String::as_str).collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            model_text(
                &train(
                    "lambdamart",
                    &grid(&settings),
                    &TrainRequest::new(&data).seed(seed),
                )
                .unwrap(),
            )
        })
    };
    let default = run(None, 1, 1);
    assert_eq!(default, run(Some("file-order"), 1, 1));
    // Document order does not read the seed.
    assert_eq!(default, run(Some("file-order"), 2, 2));

    let one = run(Some("seeded-shuffle"), 1, 1);
    assert_eq!(one, run(Some("seeded-shuffle"), 1, 2));
    assert_ne!(one, default);
    let two = run(Some("seeded-shuffle"), 2, 2);
    assert_ne!(two, one);
    assert_eq!(two, run(Some("seeded-shuffle"), 2, 1));
}

/// A misspelt choice is refused, naming the parameter and the choices.
#[test]
fn ties_refuses_an_unknown_order() {
    let data = generate_web(&WebConfig {
        queries: 5,
        min_docs: 5,
        max_docs: 10,
        seed: 1,
        ..Default::default()
    })
    .unwrap();
    let err = train(
        "lambdamart",
        &grid(&["ties=random"]),
        &TrainRequest::new(&data),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("ties") && err.contains("seeded-shuffle"),
        "{err}"
    );
}
