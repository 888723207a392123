//! Tests of `src/dla.rs`.

use ltr_core::{Fit, FitContext, ParamGuard};
use ltr_data::Dataset;
use ltr_listwise::dla::*;
use ltr_listwise::lambdarank::*;
use ltr_listwise::*;
use ltr_metrics::{Convention, Metric};

/// Sessions of 4 positions over 3 features, clicks by hand.
fn sessions() -> Dataset {
    let mut text = String::new();
    let clicks = [[1, 0, 1, 0], [0, 1, 0, 0], [1, 1, 0, 1]];
    for (q, c) in clicks.iter().enumerate() {
        for (k, &c) in c.iter().enumerate() {
            let f: Vec<f64> = (0..3)
                .map(|j| ((q * 7 + k * 3 + j) % 5) as f64 / 4.0)
                .collect();
            text.push_str(&format!("{c} qid:{q} 1:{} 2:{} 3:{}\n", f[0], f[1], f[2]));
        }
    }
    // One file per call: the tests run in parallel in one process, and a shared name let one test delete the
    // file another was about to read.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = std::env::temp_dir().join(format!("ltr-dla-{}-{call}.txt", std::process::id()));
    std::fs::write(&file, text).unwrap();
    let ds = ltr_data::read_dataset(&file, &Default::default()).unwrap();
    std::fs::remove_file(&file).unwrap();
    ds.with_positions(vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3])
        .unwrap()
        .with_query_weights(vec![2.0, 1.0, 3.0])
        .unwrap()
}

#[test]
fn each_towers_gradient_is_the_gradient_of_its_loss() {
    let data = sessions();
    let ctx = FitContext::new(1);
    let s = Sessions::new(&data, &ctx).unwrap();
    let w: [f64; 3] = [0.3, -0.7, 1.1];
    let phi: [f64; 4] = [0.0, -0.4, -0.9, -1.3];
    // The ranker: both losses, ω from `phi`.
    let lm = ListMeasure::new(Metric::Ndcg(Some(3)), Convention::STANDARD).unwrap();
    let measures: Vec<_> = (0..3)
        .map(|q| lm.query(&data.labels()[data.query_range(q)]).unwrap())
        .collect();
    for lambda in [false, true] {
        let weighted: Vec<f64> = s
            .clicks
            .iter()
            .zip(s.positions)
            .map(|(&c, &k)| c * (phi[0] - phi[k as usize]).exp())
            .collect();
        let total: f64 = weighted.iter().sum();
        let step = RankerStep {
            s: &s,
            weighted,
            total,
            lambda: lambda.then(|| (&measures[..], freeze(&data, &measures, &data.scores(&w)))),
            sigma: 1.5,
        };
        let loss = |w: &[f64]| step.losses(&data.scores(w), None).iter().sum::<f64>() / total;
        let mut lambdas = vec![0.0; data.n_docs()];
        step.losses(&data.scores(&w), Some(&mut lambdas));
        let g = data.transpose_times(&lambdas);
        for j in 0..3 {
            let (mut up, mut down) = (w, w);
            up[j] += 1e-6;
            down[j] -= 1e-6;
            let fd = (loss(&up) - loss(&down)) / 2e-6;
            assert!(
                (fd - g[j]).abs() < 1e-6,
                "lambda {lambda}, {j}: {fd} vs {}",
                g[j]
            );
        }
    }
    // The propensity tower, ρ from `w`, capped and not.
    for cap in [0.0, 1.5] {
        let tower = PropensityStep::new(&s, &data.scores(&w), cap);
        let mut g = vec![0.0; 4];
        tower.loss(&phi, Some(&mut g));
        for k in 0..4 {
            let (mut up, mut down) = (phi, phi);
            up[k] += 1e-6;
            down[k] -= 1e-6;
            let fd = (tower.loss(&up, None) - tower.loss(&down, None)) / 2e-6;
            assert!((fd - g[k]).abs() < 1e-6, "{k}: {fd} vs {}", g[k]);
        }
        // A shift of every logit changes nothing: the gradient sums to 0.
        assert!(g.iter().sum::<f64>().abs() < 1e-12);
    }
}

#[test]
fn sessions_without_positions_and_bad_settings_are_refused() {
    let data = sessions();
    let ctx = FitContext::new(1);
    let plain = Dataset::new(
        data.select_rows_matrix(&(0..12).collect::<Vec<_>>()),
        data.labels().to_vec(),
        data.query_offsets().to_vec(),
        data.qids().to_vec(),
    )
    .unwrap();
    let p = DlaParams::default().epochs(2).check().unwrap();
    let e = p.fit(&plain, &ctx).unwrap_err().to_string();
    assert!(e.contains("positions") && e.contains("--clicks"), "{e}");
    for bad in [
        DlaParams::default().max_weight(-1.0),
        DlaParams::default().propensity_steps(0),
        DlaParams::default().known_propensities(Some(vec![1.0, 0.0])),
        DlaParams::default().epochs(0),
    ] {
        assert!(bad.clone().check().is_err(), "{bad:?}");
    }
    let short = DlaParams::default()
        .known_propensities(Some(vec![1.0, 0.5]))
        .check()
        .unwrap();
    let e = short.fit(&data, &ctx).unwrap_err().to_string();
    assert!(
        e.contains("2 propensities") && e.contains("4 positions"),
        "{e}"
    );
    // Known propensities of 1 everywhere: the tower is not trained and reports them.
    let naive = DlaParams::default()
        .epochs(3)
        .known_propensities(Some(vec![1.0; 4]))
        .check()
        .unwrap()
        .fit(&data, &ctx)
        .unwrap();
    assert_eq!(dla_propensities(&naive).unwrap(), [1.0; 4]);
}
