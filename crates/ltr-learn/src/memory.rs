//! How much memory a training run will need, estimated from the data's shape before it starts (`ltr train` logs
//! it, `ltr inspect` lists it per algorithm). The working set of each algorithm is written down as bytes per
//! document, per pair and per feature value, read off its code; the Newton RankSVM figure is checked against the
//! measured peak of `ltr train` on 3.77 M documents (BENCHMARKS.md).

use ltr_data::Dataset;

/// A training run's memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MemoryEstimate {
    /// The training data as loaded.
    pub dataset: u64,
    /// The copy that stored preprocessing (normalisation, feature selection, log1p) makes of it (0 without).
    pub preprocessed: u64,
    /// The algorithm's own arrays: per-document scores and gradients, pair records, threshold buckets, models.
    pub working: u64,
}

impl MemoryEstimate {
    /// Everything together.
    pub fn total(&self) -> u64 {
        self.dataset + self.preprocessed + self.working
    }
}

/// Bytes per document, per different-label pair and per feature value (n × d) of each algorithm's working set on
/// `n_docs` training documents.
fn coefficients(algorithm: &str, n_docs: u64) -> (u64, u64, u64) {
    match algorithm {
        // From a million documents `rsvm-ir` solves by Newton unless told otherwise (one that asks for OCAS by
        // name then gets a little more than it needs).
        "rsvm-ir" if n_docs >= crate::algorithms::svm::NEWTON_FROM_DOCS => {
            coefficients("ranksvm", n_docs)
        }
        // Newton: scores, score gradient, sort order, Hessian product and the line search's copies.
        "ranksvm" | "propensity-ranksvm" => (72, 0, 0),
        // One Newton at a time on one grade pair, with every finished base ranker's scores kept for the
        // aggregation (measured peaks: 2.49 GiB on 3.77 M documents, 6.40 GiB on 10 M).
        "mhr" => (112, 0, 0),
        // OCAS / cutting plane: scores, plane coefficients, sort order.
        "rsvm-ir" => (40, 0, 0),
        // Pair records of 16 bytes, shuffled per epoch (two row numbers, the query, a mistake counter), built from
        // a pair set of 12 bytes a pair that is alive at the same time (measured: 6.5 GiB on 3.77 M documents).
        // Above `STREAM_PAIRS_ABOVE` pairs the default streams them instead (`streamed_perceptron`).
        "perceptron" | "committee-perceptron" => (16, 30, 0),
        // Scores, potentials and levels per document; each cell's bucket among its feature's thresholds (one
        // byte up to 255 thresholds, the default 10; `thresholds=0` presorts columns instead, 8 bytes a cell).
        "rankboost" => (24, 0, 1),
        // One running restart: scores and trial scores, a line search's crossing points (about one per document,
        // 16 bytes, plus its bucket number). From 1 M documents the restarts take turns (two side by side passed
        // 1.3× the data on 3.77 M documents); below, one per thread runs, on data small enough not to matter. Dense
        // data is read in place (measured on 3.77 M documents, one restart: 2.60 GB peak for 2.23 GB of data).
        "coordinate-ascent" => (96, 0, 0),
        // Scores, each document's weak-ranker values and the ensemble's scores, one measure value per feature and
        // query (measured peaks: 2.30 GiB on 3.77 M documents, 6.02 GiB on 10 M).
        "adarank" => (64, 0, 0),
        "sigmoid" => (48, 0, 0),
        "listnet" => (48, 0, 0),
        // Scores, trial scores and lambdas, each document's gain, and the epoch's frozen ranking (order and rank,
        // 8 bytes); the pairs are enumerated from it on every pass, never stored (measured on 3.77 M documents,
        // 5 epochs: 2.27 GiB peak for 2.08 GiB of data).
        "lambdarank" => (56, 0, 0),
        // Tree ensembles: each cell's bin (one byte, 255 bins at most) and, while binning, one column of f32
        // values per thread (sparse data: a transposed f32 copy of all columns); per document its score,
        // gradient, hessian, its place in the leaf partition (4 B) and the partition's scratch (4 B); histograms
        // are per leaf and feature, not per document.
        "lambdamart" | "mart" => (40, 0, 1),
        // No scores or gradients a round: the labels as gradients and hessians, each tree's document bag.
        "random-forest" => (24, 0, 1),
        _ => (16, 0, 0),
    }
}

/// The estimate for `algorithm` on `train`; `preprocess_copies` when the stored preprocessing will transform it
/// (a z-score or min–max copy is dense: n × d f32).
pub fn memory_estimate(
    algorithm: &str,
    train: &Dataset,
    preprocess_copies: bool,
) -> MemoryEstimate {
    estimate(algorithm, train, preprocess_copies, || pair_count(train))
}

/// [`memory_estimate`] of every registered algorithm, in listing order, counting the data's pairs once.
pub fn memory_estimates(
    train: &Dataset,
    preprocess_copies: bool,
) -> Vec<(&'static str, MemoryEstimate)> {
    let pairs = std::cell::OnceCell::new();
    crate::ALGORITHMS
        .iter()
        .map(|a| {
            let e = estimate(a.name, train, preprocess_copies, || {
                *pairs.get_or_init(|| pair_count(train))
            });
            (a.name, e)
        })
        .collect()
}

fn pair_count(train: &Dataset) -> u64 {
    ltr_pairs::count_pairs_per_query(train).iter().sum()
}

fn estimate(
    algorithm: &str,
    train: &Dataset,
    preprocess_copies: bool,
    pairs: impl FnOnce() -> u64,
) -> MemoryEstimate {
    let n = train.n_docs() as u64;
    let (mut per_doc, mut per_pair, per_value) = coefficients(algorithm, n);
    let d = train.n_features() as u64;
    let pairs = if per_pair > 0 { pairs() } else { 0 };
    // The loop's own rule for the default order decides which layout the estimate describes.
    if matches!(algorithm, "perceptron" | "committee-perceptron")
        && matches!(
            ltr_perceptron::PairOrder::Auto(0).resolve_for(pairs),
            ltr_perceptron::PairOrder::Streamed(_)
        )
    {
        (per_doc, per_pair) = streamed_perceptron();
    }
    let preprocessed = if preprocess_copies {
        n * d * 4 + n * 4 + train.n_queries() as u64 * 8
    } else {
        0
    };
    MemoryEstimate {
        dataset: train.memory_bytes(),
        preprocessed,
        working: n * per_doc + pairs * per_pair + n * d * per_value,
    }
}

/// The perceptron's bytes per document and per pair when its pairs are streamed (the default above
/// `STREAM_PAIRS_ABOVE` pairs): each query's rows by grade (4 B) and their levels while the index is built (2 B),
/// scores and weights (16 B); the α-bound's counter of 2 bytes a pair.
fn streamed_perceptron() -> (u64, u64) {
    (22, 2)
}

/// `bytes` for people: `512 B`, `3.4 MB`, `2.1 GB`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 1e3 {
        format!("{bytes} B")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.2} GB", b / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let svm = memory_estimate("ranksvm", &ds, false);
        assert_eq!(svm.dataset, ds.memory_bytes());
        assert!(svm.dataset >= n * 5 * 4 + n * 4);
        assert_eq!(svm.working, n * 72);
        assert_eq!(svm.preprocessed, 0);
        let pairs: u64 = ltr_pairs::count_pairs_per_query(&ds).iter().sum();
        assert!(pairs > 0);
        assert_eq!(
            memory_estimate("perceptron", &ds, false).working,
            n * 16 + pairs * 30
        );
        assert_eq!(
            memory_estimate("rankboost", &ds, false).working,
            n * 24 + n * 5
        );
        let copy = memory_estimate("ranksvm", &ds, true);
        assert_eq!(copy.preprocessed, n * 5 * 4 + n * 4 + 10 * 8);
        assert_eq!(
            copy.total(),
            copy.dataset + copy.preprocessed + copy.working
        );
        assert_eq!(memory_estimate("rsvm-ir", &ds, false).working, n * 40);
        let newton = crate::algorithms::svm::NEWTON_FROM_DOCS;
        assert_eq!(coefficients("rsvm-ir", newton - 1), (40, 0, 0));
        assert_eq!(
            coefficients("rsvm-ir", newton),
            coefficients("ranksvm", newton),
            "Newton from a million documents"
        );
        let many = ltr_perceptron::STREAM_PAIRS_ABOVE + 1;
        assert_eq!(
            estimate("committee-perceptron", &ds, false, || many).working,
            n * 22 + many * 2,
            "streamed above the threshold"
        );
        assert_eq!(
            memory_estimate("lambdamart", &ds, false).working,
            n * 40 + n * 5
        );
        assert_eq!(coefficients("random-forest", n), (24, 0, 1));
        let all = memory_estimates(&ds, false);
        assert_eq!(all.len(), crate::ALGORITHMS.len());
        for (name, e) in all {
            assert_eq!(e, memory_estimate(name, &ds, false), "{name}");
        }
        assert_eq!(human_bytes(2_100_000_000), "2.10 GB");
        assert_eq!(human_bytes(3_400_000), "3.4 MB");
    }
}
