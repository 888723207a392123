//! How much memory a training run will need, estimated from the data's shape before it starts (`ltr train` logs
//! it, `ltr inspect` lists it per algorithm). The working set of each algorithm is written down as bytes per
//! document, per pair and per feature value, read off its code; the Newton RankSVM figure is checked against the
//! measured peak of `ltr train` on 3.77 M documents (BENCHMARKS.md).

use ltr_core::Params;
use ltr_data::Dataset;

use crate::spec::SpecReader;
use crate::Grid;

/// A training run's memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MemoryEstimate {
    /// The training data as loaded.
    pub dataset: u64,
    /// The copy that stored preprocessing (normalisation, feature selection, log1p) makes of it (0 without).
    pub preprocessed: u64,
    /// The algorithm's own arrays: per-document scores and gradients, pair records, threshold buckets, models.
    pub working: u64,
    /// Bytes of the training data the algorithm frees before its working set is whole, when the data is handed
    /// over to it (one setting, as `ltr train` runs; [`crate::Handover`]): the trees' f32 features, freed as they
    /// are binned ([`Memory::frees_features`]). 0 for the other algorithms and for a grid of several settings.
    pub freed: u64,
    /// A copy of the per-value part that the algorithm builds only in what it freed ([`Memory::row_copy_from`]):
    /// the trees' row-major bins of large data. 0 where the data is borrowed or too small.
    pub row_copy: u64,
}

impl MemoryEstimate {
    /// The peak: the preprocessed copy and the larger of the data as loaded and what the algorithm holds once it
    /// has freed what it frees (without freeing: everything together).
    pub fn total(&self) -> u64 {
        self.preprocessed
            + self
                .dataset
                .max((self.dataset + self.working + self.row_copy).saturating_sub(self.freed))
    }
    /// The estimate for data the caller keeps (borrowed, not handed over): nothing is freed, and no row copy is
    /// built.
    pub fn borrowed(self) -> Self {
        Self {
            freed: 0,
            row_copy: 0,
            ..self
        }
    }
}

/// An algorithm's working set as its registry row states it, read off its code: bytes per training document, per
/// different-label pair and per feature value (n × d), and the other layout it switches to by the data's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// Bytes per training document.
    pub per_doc: u64,
    /// Bytes per different-label pair of a query (pairs are counted only when this is not 0).
    pub per_pair: u64,
    /// Bytes per feature value (n × d).
    pub per_value: u64,
    /// Another layout the algorithm picks by the data's size.
    pub switch: Switch,
    /// More bytes per feature value under a setting: the trees' binned cells above `max-bin` 255.
    pub wide: Option<WideValues>,
    /// Whether the algorithm frees the training data's feature matrix while it builds its per-value part, when the
    /// data is handed over (the trees bin a block of rows at a time and free its f32 values).
    pub frees_features: bool,
    /// From this many feature values (n × d), when the data is handed over and the values take `per_value` bytes
    /// (not the [`Memory::wide`] form), the algorithm also keeps a row-major copy of them: `per_value` more bytes a
    /// value (the trees' [`ltr_trees::ROWS_FROM_CELLS`]).
    pub row_copy_from: Option<u64>,
    /// The working set of one setting computed from its parameters and the data (the neural rows: layer widths,
    /// batch and slate sizes, attention), replacing the per-document, pair and value terms; `None` when the
    /// setting cannot be read (the fit will refuse it).
    pub sized: Option<SizedBy>,
}

/// A row's own working-set estimate of a setting (see [`Memory::sized`]).
pub type SizedFn = fn(&SpecReader<'_>, &Dataset) -> Option<u64>;

/// A [`SizedFn`] that compares equal to itself (by address; no other function is ever compared with it).
#[derive(Clone, Copy)]
pub struct SizedBy(pub SizedFn);

impl PartialEq for SizedBy {
    fn eq(&self, other: &Self) -> bool {
        self.0 as usize == other.0 as usize
    }
}

impl Eq for SizedBy {}

impl std::fmt::Debug for SizedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SizedBy(fn)")
    }
}

/// Bytes per feature value when an integer parameter exceeds a bound, in place of [`Memory::per_value`]. Counted
/// for every feature: an upper bound where only some features take the wider form (above `max-bin` 255, a feature
/// of more than 256 bins, its missing bin included, takes two bytes a cell; one of fewer keeps one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WideValues {
    /// The parameter (its registry name; the row's spec gives its default).
    pub param: &'static str,
    /// Values up to this keep `per_value`.
    pub above: u64,
    /// Bytes per feature value above it.
    pub per_value: u64,
}

/// The layout an algorithm switches to by the data's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Always the one layout.
    Never,
    /// From this many documents, these bytes per document (RSVM-IR solves by Newton from a million).
    FromDocs(u64, u64),
    /// The perceptron loop's own rule for its default pair order (`PairOrder::Auto`): above its pair threshold it
    /// streams the pairs, with these bytes per document and per pair.
    StreamedPairs(u64, u64),
}

impl Memory {
    /// `per_doc` bytes per document, nothing else.
    pub const fn per_doc(per_doc: u64) -> Self {
        Self {
            per_doc,
            per_pair: 0,
            per_value: 0,
            switch: Switch::Never,
            wide: None,
            frees_features: false,
            row_copy_from: None,
            sized: None,
        }
    }
    /// Bytes per document, per pair and per feature value.
    pub const fn new(per_doc: u64, per_pair: u64, per_value: u64) -> Self {
        Self {
            per_doc,
            per_pair,
            per_value,
            switch: Switch::Never,
            wide: None,
            frees_features: false,
            row_copy_from: None,
            sized: None,
        }
    }
    /// The same, with the working set computed by `f` per setting (the largest over a grid).
    pub const fn sized_by(self, f: SizedFn) -> Self {
        Self {
            sized: Some(SizedBy(f)),
            ..self
        }
    }
    /// The same, freeing the feature matrix when the data is handed over ([`Memory::frees_features`]).
    pub const fn freeing_features(self) -> Self {
        Self {
            frees_features: true,
            ..self
        }
    }
    /// The same, keeping a row-major copy of the per-value part from `cells` values when handed over
    /// ([`Memory::row_copy_from`]).
    pub const fn row_copy_from(self, cells: u64) -> Self {
        Self {
            row_copy_from: Some(cells),
            ..self
        }
    }
    /// The same, with another layout by the data's size.
    pub const fn switching(self, switch: Switch) -> Self {
        Self { switch, ..self }
    }
    /// The same, with `per_value` bytes per feature value when the integer parameter `param` is above `above`.
    pub const fn wide_above(self, param: &'static str, above: u64, per_value: u64) -> Self {
        Self {
            wide: Some(WideValues {
                param,
                above,
                per_value,
            }),
            ..self
        }
    }
    /// The bytes of the row-major copy of `cells` feature values of `per_value` bytes, handed over
    /// ([`Memory::row_copy_from`]).
    // pub for the tests in tests/unit/memory.rs; not API.
    #[doc(hidden)]
    pub fn row_copy(&self, cells: u64) -> u64 {
        match self.row_copy_from {
            Some(from) if cells >= from => cells * self.per_value,
            _ => 0,
        }
    }
    /// (per document, per pair, per value) on `n_docs` documents and (when asked) `pairs` pairs.
    // pub for the tests in tests/unit/memory.rs; not API.
    #[doc(hidden)]
    pub fn coefficients(&self, n_docs: u64, pairs: u64) -> (u64, u64, u64) {
        match self.switch {
            Switch::FromDocs(from, per_doc) if n_docs >= from => (per_doc, 0, self.per_value),
            Switch::StreamedPairs(per_doc, per_pair)
                if matches!(
                    ltr_perceptron::PairOrder::Auto(0).resolve_for(pairs),
                    ltr_perceptron::PairOrder::Streamed(_)
                ) =>
            {
                (per_doc, per_pair, self.per_value)
            }
            _ => (self.per_doc, self.per_pair, self.per_value),
        }
    }
}

/// The estimate for `algorithm` on `train` under the settings of `grid` (the largest any of them needs: a grid
/// trains each in turn); `preprocess_copies` when the stored preprocessing will transform it (a z-score or min–max
/// copy is dense: n × d f32).
pub fn memory_estimate(
    algorithm: &str,
    train: &Dataset,
    preprocess_copies: bool,
    grid: &Grid,
) -> MemoryEstimate {
    estimate(algorithm, train, preprocess_copies, grid, || {
        pair_count(train)
    })
}

/// [`memory_estimate`] of every registered algorithm under its defaults, in listing order, counting the data's
/// pairs once.
pub fn memory_estimates(
    train: &Dataset,
    preprocess_copies: bool,
) -> Vec<(&'static str, MemoryEstimate)> {
    let pairs = std::cell::OnceCell::new();
    let defaults = Grid::default();
    crate::ALGORITHMS
        .iter()
        .map(|a| {
            let e = estimate(a.name, train, preprocess_copies, &defaults, || {
                *pairs.get_or_init(|| pair_count(train))
            });
            (a.name, e)
        })
        .collect()
}

fn pair_count(train: &Dataset) -> u64 {
    ltr_pairs::count_pairs_per_query(train).iter().sum()
}

/// Bytes per feature value under `grid`: the row's [`WideValues`] when some setting takes its parameter above the
/// bound, else `per_value`.
fn per_value_under(algorithm: &crate::Algorithm, per_value: u64, grid: &Grid) -> u64 {
    let Some(wide) = algorithm.memory.wide else {
        return per_value;
    };
    let above = grid.settings().iter().any(|setting| {
        let params = Params::new(setting.iter().map(|(k, v)| (k, v)));
        // A value the fit refuses never trains: it counts as the narrow layout.
        SpecReader::new(&params, algorithm.params)
            .int(wide.param)
            .is_ok_and(|v| v as u64 > wide.above)
    });
    if above {
        per_value.max(wide.per_value)
    } else {
        per_value
    }
}

/// Whether a setting of `grid` fails the parameter check of `algorithm`'s own sizing ([`Memory::sized_by`]): the
/// fit will refuse it with the reason, so no estimate is said for it (the generic one would be wrong).
pub(crate) fn sizing_refuses(algorithm: &str, train: &Dataset, grid: &Grid) -> bool {
    own_sizes(crate::find(algorithm), train, grid)
        .is_some_and(|sizes| sizes.iter().any(Option::is_none))
}

/// The working set of each setting of `grid` by the algorithm's own sizing ([`Memory::sized_by`]), `None` for a
/// setting whose parameters it refuses; `None` altogether without such a sizing.
fn own_sizes(
    row: Option<&crate::Algorithm>,
    train: &Dataset,
    grid: &Grid,
) -> Option<Vec<Option<u64>>> {
    let row = row?;
    let SizedBy(f) = row.memory.sized?;
    Some(
        grid.settings()
            .iter()
            .map(|setting| {
                let params = Params::new(setting.iter().map(|(k, v)| (k, v)));
                f(&SpecReader::new(&params, row.params), train)
            })
            .collect(),
    )
}

// pub for the tests in tests/unit/memory.rs; not API.
#[doc(hidden)]
pub fn estimate(
    algorithm: &str,
    train: &Dataset,
    preprocess_copies: bool,
    grid: &Grid,
    pairs: impl FnOnce() -> u64,
) -> MemoryEstimate {
    let n = train.n_docs() as u64;
    let row = crate::find(algorithm);
    let memory = row.map_or(Memory::per_doc(16), |a| a.memory);
    let d = train.n_features() as u64;
    let pairs = if memory.per_pair > 0 { pairs() } else { 0 };
    let (per_doc, per_pair, per_value) = memory.coefficients(n, pairs);
    let narrow = per_value;
    let per_value = row.map_or(per_value, |a| per_value_under(a, per_value, grid));
    let preprocessed = if preprocess_copies {
        n * d * 4 + n * 4 + train.n_queries() as u64 * 8
    } else {
        0
    };
    let sized = own_sizes(row, train, grid).and_then(|sizes| sizes.into_iter().flatten().max());
    let working = sized.unwrap_or(n * per_doc + pairs * per_pair + n * d * per_value);
    // Only one setting is handed over.
    let handed_over = memory.frees_features && grid.len() == 1;
    let freed = if handed_over {
        train.feature_memory_bytes()
    } else {
        0
    };
    let row_copy = match handed_over && per_value == narrow {
        true => memory.row_copy(n * d),
        false => 0,
    };
    MemoryEstimate {
        dataset: train.memory_bytes(),
        preprocessed,
        working,
        freed,
        row_copy,
    }
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
