//! Tests of `src/generate_web.rs`.

use ltr_data::*;

#[test]
fn raw_heavy_tailed_skewed_and_reproducible_at_any_thread_count() {
    let cfg = WebConfig {
        queries: 60,
        ..Default::default()
    };
    let a = generate_web(&cfg).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let b = pool.install(|| generate_web(&cfg).unwrap());
    assert_eq!(a.labels(), b.labels());
    assert!((0..a.n_docs()).all(|i| (0..136).all(|j| a.row(i).get(j) == b.row(i).get(j))));
    let d = a.n_features();
    let col = |j: usize| {
        (0..a.n_docs())
            .map(|i| a.row(i).get(j))
            .collect::<Vec<f32>>()
    };
    let max = |j: usize| col(j).into_iter().fold(f32::MIN, f32::max);
    assert!(
        max(3) > 1000.0 && max(0) > 50.0,
        "raw scales: {} {}",
        max(3),
        max(0)
    );
    assert!(col(d - 1).iter().all(|&v| v == 0.0) && col(d - 2).iter().all(|&v| v == 1.0));
    assert_eq!(col(d - 3), col(1));
    let share = |g: f32| a.labels().iter().filter(|&&l| l == g).count() as f64 / a.n_docs() as f64;
    assert!((share(0.0) - 0.514).abs() < 0.02 && (share(1.0) - 0.325).abs() < 0.02);
    assert!(share(4.0) > 0.0 && share(4.0) < 0.02, "{}", share(4.0));
    // Too few features to hold the constant and duplicate columns are refused.
    assert!(generate_web(&WebConfig { features: 7, ..cfg }).is_err());
}

/// xxh3 of the LETOR text `write_letor_to` gives for a generated set: the bytes a user's file would hold.
fn letor_hash(cfg: &WebConfig) -> u64 {
    let mut bytes = Vec::new();
    write_letor_to(&generate_web(cfg).unwrap(), &mut bytes).unwrap();
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

#[test]
fn nonlinearity_zero_is_the_original_profile_byte_for_byte() {
    // Hashes of the generator before `nonlinearity` existed (b791418), on a 20-feature set and on a
    // 136-feature one.
    let small = WebConfig {
        queries: 12,
        min_docs: 5,
        max_docs: 30,
        features: 20,
        noise: 0.6,
        seed: 11,
        nonlinearity: 0.0,
    };
    assert_eq!(letor_hash(&small), 0xf6b183d1_2f2e61a3);
    let wide = WebConfig {
        queries: 3,
        seed: 42,
        ..Default::default()
    };
    assert_eq!(
        wide.nonlinearity, 0.0,
        "the library default stays the original profile"
    );
    assert_eq!(letor_hash(&wide), 0x6c800ef2_b04c9102);
}

#[test]
fn nonlinear_profile_is_reproducible_and_changes_only_the_grades() {
    let linear = WebConfig {
        queries: 16,
        features: 40,
        noise: 0.6,
        seed: 5,
        ..Default::default()
    };
    let cfg = WebConfig {
        nonlinearity: WebConfig::CALIBRATED_NONLINEARITY,
        ..linear.clone()
    };
    let a = generate_web(&cfg).unwrap();
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut bytes_a = Vec::new();
    write_letor_to(&a, &mut bytes_a).unwrap();
    let mut bytes_b = Vec::new();
    write_letor_to(
        &one_thread.install(|| generate_web(&cfg).unwrap()),
        &mut bytes_b,
    )
    .unwrap();
    assert!(
        bytes_a == bytes_b,
        "same seed, 1 thread against the pool: different bytes"
    );
    let old = generate_web(&linear).unwrap();
    assert_eq!(a.query_offsets(), old.query_offsets());
    assert!(
        (0..a.n_docs()).all(|i| (0..a.n_features()).all(|j| a.row(i).get(j) == old.row(i).get(j)))
    );
    let moved = (0..a.n_docs())
        .filter(|&i| a.labels()[i] != old.labels()[i])
        .count();
    // Measured: 363 of 1,835 grades move at the calibrated nonlinearity.
    assert!(
        moved * 10 > a.n_docs(),
        "only {moved} of {} grades moved",
        a.n_docs()
    );
    // Grades still follow MSLR's shares: they come from each query's ranking, whatever the relevance.
    let share = |ds: &Dataset, g: f32| ds.labels().iter().filter(|&&l| l == g).count();
    for g in 0..5 {
        assert_eq!(share(&a, g as f32), share(&old, g as f32), "grade {g}");
    }
}

/// The link score's effect on the grade, split by whether the title matches: the mean grade of documents
/// whose link score (column 3) is above its median minus that of those below, among documents whose title
/// match (column 7) is in its top third, minus the same difference among the rest. A grade additive in the
/// features (what a linear ranker can express) has the same link effect in both groups.
fn title_gates_link_score(ds: &Dataset) -> f64 {
    let column = |j: usize| {
        (0..ds.n_docs())
            .map(|i| ds.row(i).get(j))
            .collect::<Vec<f32>>()
    };
    let quantile = |v: &[f32], q: f64| {
        let mut s = v.to_vec();
        s.sort_by(f32::total_cmp);
        s[((s.len() - 1) as f64 * q) as usize]
    };
    let (title, link) = (column(TITLE_MATCH), column(LINK_SCORE));
    let (title_level, link_median) = (quantile(&title, 2.0 / 3.0), quantile(&link, 0.5));
    let mut sums = [[0.0f64; 2]; 2];
    let mut counts = [[0usize; 2]; 2];
    for i in 0..ds.n_docs() {
        let (t, l) = (
            usize::from(title[i] > title_level),
            usize::from(link[i] > link_median),
        );
        sums[t][l] += f64::from(ds.labels()[i]);
        counts[t][l] += 1;
    }
    let mean = |t: usize, l: usize| sums[t][l] / counts[t][l] as f64;
    (mean(1, 1) - mean(1, 0)) - (mean(0, 1) - mean(0, 0))
}

#[test]
fn a_title_match_gates_the_link_score_only_when_nonlinear() {
    let cfg = |nonlinearity| WebConfig {
        queries: 40,
        noise: 0.6,
        seed: 3,
        nonlinearity,
        ..Default::default()
    };
    let linear = title_gates_link_score(&generate_web(&cfg(0.0)).unwrap());
    let calibrated =
        title_gates_link_score(&generate_web(&cfg(WebConfig::CALIBRATED_NONLINEARITY)).unwrap());
    let full = title_gates_link_score(&generate_web(&cfg(1.0)).unwrap());
    // Measured: 0.015, 0.246 and 0.575 grades.
    assert!(linear.abs() < 0.08, "linear profile: {linear}");
    assert!(calibrated > 0.15, "calibrated profile: {calibrated}");
    assert!(
        full > 0.4 && full > 2.0 * calibrated,
        "fully non-linear profile: {full}"
    );
}

#[test]
fn nonlinearity_outside_zero_to_one_or_with_too_few_features_is_refused() {
    for bad in [-0.1, 1.5, f64::NAN, f64::INFINITY] {
        let err = generate_web(&WebConfig {
            queries: 2,
            nonlinearity: bad,
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("nonlinearity must lie in [0, 1]") && err.contains(&format!("got {bad}")),
            "{bad}: {err}"
        );
    }
    let few = WebConfig {
        queries: 2,
        features: WebConfig::MIN_NONLINEAR_FEATURES - 1,
        nonlinearity: 0.5,
        ..Default::default()
    };
    let err = generate_web(&few).unwrap_err().to_string();
    assert!(
        err.contains("needs features >= 14") && err.contains("got 13"),
        "{err}"
    );
    // The original profile keeps its own floor of 8 features, and both ends of the range are accepted.
    assert!(generate_web(&WebConfig {
        nonlinearity: 0.0,
        ..few.clone()
    })
    .is_ok());
    for edge in [0.0, 1.0] {
        assert!(generate_web(&WebConfig {
            queries: 2,
            nonlinearity: edge,
            ..Default::default()
        })
        .is_ok());
    }
}
