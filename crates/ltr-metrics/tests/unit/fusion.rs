use ltr_metrics::*;

fn runs() -> Vec<Vec<RunQuery>> {
    let q = |docs: &[(&str, f64)]| vec![RunQuery::with_docs("q1", docs.iter().copied())];
    vec![
        q(&[("d1", 3.0), ("d2", 2.0), ("d3", 1.0)]),
        q(&[("d2", 0.9), ("d4", 0.5)]),
    ]
}

fn fused(method: FusionMethod, norm: FusionNorm, w: &[f64]) -> Vec<(String, f64)> {
    let out = fuse(&runs(), method, norm, w);
    assert_eq!(out.len(), 1);
    out[0].docs().map(|(d, s)| (d.to_string(), s)).collect()
}

fn check(got: Vec<(String, f64)>, want: &[(&str, f64)]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((d, s), (wd, ws)) in got.iter().zip(want) {
        assert_eq!(d, wd, "{got:?}");
        assert!((s - ws).abs() < 1e-12, "{d}: {s} vs {ws}");
    }
}

// Run A ranks d1 (3.0), d2 (2.0), d3 (1.0); run B ranks d2 (0.9), d4 (0.5). Each expectation is worked out by
// hand from the method's definition.
#[test]
fn each_method_matches_a_hand_computation() {
    use FusionMethod::*;
    use FusionNorm as N;
    let one = [1.0, 1.0];
    check(
        fused(CombSum, N::None, &one),
        &[("d1", 3.0), ("d2", 2.9), ("d3", 1.0), ("d4", 0.5)],
    );
    // min-max: A → 1, 0.5, 0; B → 1, 0. d4 and d3 tie at 0: docid descending puts d4 first.
    check(
        fused(CombSum, N::MinMax, &one),
        &[("d2", 1.5), ("d1", 1.0), ("d4", 0.0), ("d3", 0.0)],
    );
    check(
        fused(CombMnz, N::MinMax, &one),
        &[("d2", 3.0), ("d1", 1.0), ("d4", 0.0), ("d3", 0.0)],
    );
    check(
        fused(CombMax, N::None, &one),
        &[("d1", 3.0), ("d2", 2.0), ("d3", 1.0), ("d4", 0.5)],
    );
    check(
        fused(Rrf { k: 60.0 }, N::None, &one),
        &[
            ("d2", 1.0 / 62.0 + 1.0 / 61.0),
            ("d1", 1.0 / 61.0),
            ("d4", 1.0 / 62.0),
            ("d3", 1.0 / 63.0),
        ],
    );
    // Borda: A gives 3, 2, 1; B gives 2, 1.
    check(
        fused(Borda, N::None, &one),
        &[("d2", 4.0), ("d1", 3.0), ("d4", 1.0), ("d3", 1.0)],
    );
    // wsum: 0.5 · A + 2 · B.
    check(
        fused(CombSum, N::None, &[0.5, 2.0]),
        &[("d2", 2.8), ("d1", 1.5), ("d4", 1.0), ("d3", 0.5)],
    );
    // rank: A → 1, 2/3, 1/3; B → 1, 1/2.
    check(
        fused(CombSum, N::Rank, &one),
        &[
            ("d2", 5.0 / 3.0),
            ("d1", 1.0),
            ("d4", 0.5),
            ("d3", 1.0 / 3.0),
        ],
    );
    // z-score: A has mean 2, sd √(2/3); B mean 0.7, sd 0.2.
    let z = 1.0 / (2.0f64 / 3.0).sqrt();
    check(
        fused(CombSum, N::ZScore, &one),
        &[("d1", z), ("d2", 1.0), ("d4", -1.0), ("d3", -z)],
    );
    // sum: A → 1/2, 1/3, 1/6; B → 9/14, 5/14.
    check(
        fused(CombSum, N::Sum, &one),
        &[
            ("d2", 1.0 / 3.0 + 9.0 / 14.0),
            ("d1", 0.5),
            ("d4", 5.0 / 14.0),
            ("d3", 1.0 / 6.0),
        ],
    );
}

#[test]
fn tuned_weights_favour_the_run_that_ranks_the_relevant_document_first() {
    // Only d1 is relevant; run A ranks it first, run B lacks it. Under min-max CombSUM d1 (wA) beats d2
    // (wA/2 + wB) when wA > 2 wB.
    let mut qrels = Qrels::new();
    qrels.insert("q1", "d1", 1.0);
    qrels.insert("q1", "d2", 0.0);
    let (w, score) = tune_weights(
        &runs(),
        FusionMethod::CombSum,
        FusionNorm::MinMax,
        &qrels,
        Metric::Rr(None),
        &Convention::TREC,
    )
    .unwrap();
    assert_eq!(score, 1.0);
    // The grid runs the last weight fastest: (0, 0.1) … (0, 1) rank d2 first, (0.1, 0) is the first with RR 1.
    assert_eq!(w, vec![0.1, 0.0], "the first grid point that reaches RR 1");
}
