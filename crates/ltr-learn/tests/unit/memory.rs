use ltr_learn::memory::estimate;
use ltr_learn::{human_bytes, memory_estimate, memory_estimates, Grid, MemoryEstimate};

#[test]
fn pairs_and_threshold_buckets_show_in_the_estimate() {
    let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 10,
        min_docs: 20,
        max_docs: 20,
        features: 5,
        ..Default::default()
    })
    .unwrap();
    let n = 200u64;
    let none = Grid::default();
    let svm = memory_estimate("ranksvm", &ds, false, &none);
    assert_eq!(svm.dataset, ds.memory_bytes());
    assert!(svm.dataset >= n * 5 * 4 + n * 4);
    assert_eq!(svm.working, n * 72);
    assert_eq!(svm.preprocessed, 0);
    let pairs: u64 = ltr_pairs::count_pairs_per_query(&ds).iter().sum();
    assert!(pairs > 0);
    assert_eq!(
        memory_estimate("perceptron", &ds, false, &none).working,
        n * 16 + pairs * 30
    );
    assert_eq!(
        memory_estimate("rankboost", &ds, false, &none).working,
        n * 24 + n * 5
    );
    let copy = memory_estimate("ranksvm", &ds, true, &none);
    assert_eq!(copy.preprocessed, n * 5 * 4 + n * 4 + 10 * 8);
    assert_eq!(
        copy.total(),
        copy.dataset + copy.preprocessed + copy.working
    );
    assert_eq!(
        memory_estimate("rsvm-ir", &ds, false, &none).working,
        n * 40
    );
    let newton = ltr_learn::algorithms::svm::NEWTON_FROM_DOCS;
    let row = |name: &str| ltr_learn::find(name).unwrap().memory;
    assert_eq!(row("rsvm-ir").coefficients(newton - 1, 0), (40, 0, 0));
    assert_eq!(
        row("rsvm-ir").coefficients(newton, 0),
        row("ranksvm").coefficients(newton, 0),
        "Newton from a million documents"
    );
    let many = ltr_perceptron::STREAM_PAIRS_ABOVE + 1;
    assert_eq!(
        estimate("committee-perceptron", &ds, false, &none, || many).working,
        n * 22 + many * 2,
        "streamed above the threshold"
    );
    let trees = memory_estimate("lambdamart", &ds, false, &none);
    assert_eq!(trees.working, n * 56 + n * 5);
    // Handed over, the trees free the f32 features as they bin them: the peak is the larger of the data and
    // the data without its features plus the working set; not with a grid, nor borrowed.
    assert_eq!(trees.freed, n * 5 * 4);
    assert_eq!(
        trees.total(),
        trees.dataset.max(trees.dataset + trees.working - n * 5 * 4)
    );
    assert!(trees.total() < trees.borrowed().total());
    assert_eq!(trees.borrowed().total(), trees.dataset + trees.working);
    // From ROWS_FROM_CELLS values the trees also keep their bins by rows, a byte a value, in what they freed.
    assert_eq!(trees.row_copy, 0, "too small for the row copy");
    let from = ltr_trees::ROWS_FROM_CELLS as u64;
    for algo in ["lambdamart", "mart", "random-forest"] {
        assert_eq!(row(algo).row_copy(from - 1), 0, "{algo}");
        assert_eq!(row(algo).row_copy(from), from, "{algo}");
    }
    let copied = MemoryEstimate {
        row_copy: 7,
        ..trees
    };
    assert_eq!(copied.borrowed(), trees.borrowed());
    assert_eq!(
        copied.total(),
        trees
            .dataset
            .max(trees.dataset + trees.working + 7 - n * 5 * 4)
    );
    let grid = Grid::parse(&["leaves=7,15"]).unwrap();
    assert_eq!(memory_estimate("mart", &ds, false, &grid).freed, 0);
    assert_eq!(svm.freed, 0);
    // Above max-bin 255 a feature of more than 256 bins takes two bytes a cell: counted for every feature (an
    // upper bound), under any setting of a grid that goes above 255, and not at 255 itself.
    let bins = |v: &str| Grid::parse(&[format!("max-bin={v}")]).unwrap();
    for (algo, per_doc) in [("lambdamart", 56), ("mart", 56), ("random-forest", 40)] {
        let working = |v: &str| memory_estimate(algo, &ds, false, &bins(v)).working;
        assert_eq!(working("255"), n * per_doc + n * 5, "{algo}");
        assert_eq!(working("256"), n * per_doc + n * 5 * 2, "{algo}");
        assert_eq!(working("16,1000"), n * per_doc + n * 5 * 2, "{algo}");
        assert_eq!(
            working("x"),
            working("255"),
            "{algo}: a value the fit refuses"
        );
    }
    assert_eq!(row("random-forest").coefficients(n, 0), (40, 0, 1));
    let all = memory_estimates(&ds, false);
    assert_eq!(all.len(), ltr_learn::ALGORITHMS.len());
    for (name, e) in all {
        assert_eq!(e, memory_estimate(name, &ds, false, &none), "{name}");
    }
    assert_eq!(human_bytes(2_100_000_000), "2.10 GB");
    assert_eq!(human_bytes(3_400_000), "3.4 MB");
}
