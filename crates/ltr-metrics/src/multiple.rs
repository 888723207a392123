//! Comparing many runs at once: a mean and percentile bootstrap interval per run, every pair's difference with a
//! p-value that accounts for the number of pairs, a paired effect size, and the verdict against a baseline.
//!
//! The p-values come either from the randomised Tukey HSD test (Carterette 2012, "Multiple testing in statistical
//! analysis of systems-based IR experiments", TOIS 30(1); Sakai 2014): in each of B trials every query's values are
//! permuted across the runs, and the trial keeps the largest difference between two runs' means; a pair's p-value is
//! the share of trials whose largest difference is at least the pair's observed |difference|. Or from a paired test
//! per pair ([`TestKind`]) adjusted over all pairs with Holm, Bonferroni or Benjamini–Hochberg (as statsmodels'
//! `multipletests` methods `holm`, `bonferroni`, `fdr_bh`).

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::evaluate::EvalError;
use crate::significance::{
    holm_adjust, mean_ci, paired_t_test, permutation_test, sign_test, wilcoxon, Alternative,
    TestKind,
};

/// How the pairs of a many-run comparison are tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManyTest {
    /// Randomised Tukey HSD over all runs at once (its p-values already account for every pair).
    TukeyHsd,
    /// A paired test per pair, then a [`Correction`].
    Paired(TestKind),
}

impl ManyTest {
    /// The name `--test` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::TukeyHsd => "tukey-hsd",
            Self::Paired(TestKind::TTest) => "ttest",
            Self::Paired(TestKind::Wilcoxon) => "wilcoxon",
            Self::Paired(TestKind::Sign) => "sign",
            Self::Paired(TestKind::Permutation) => "permutation",
        }
    }
}

impl std::str::FromStr for ManyTest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "tukey-hsd" | "tukey" | "hsd" => Ok(Self::TukeyHsd),
            other => other.parse().map(Self::Paired).map_err(|_| {
                format!(
                    "unknown test `{s}`; expected tukey-hsd, ttest, wilcoxon, sign or permutation"
                )
            }),
        }
    }
}

/// A correction of p-values for testing many pairs at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Correction {
    /// Holm's step-down family-wise correction.
    #[default]
    Holm,
    /// Bonferroni: each p-value times the number of pairs.
    Bonferroni,
    /// Benjamini–Hochberg's false discovery rate step-up.
    BenjaminiHochberg,
    /// None: the raw p-values.
    None,
}

impl Correction {
    /// The name `--correction` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Holm => "holm",
            Self::Bonferroni => "bonferroni",
            Self::BenjaminiHochberg => "bh",
            Self::None => "none",
        }
    }

    /// Adjust `p` (input order kept; a NaN stays NaN and is not counted as a hypothesis).
    pub fn adjust(self, p: &[f64]) -> Vec<f64> {
        match self {
            Self::Holm => holm_adjust(p),
            Self::Bonferroni => bonferroni_adjust(p),
            Self::BenjaminiHochberg => bh_adjust(p),
            Self::None => p.to_vec(),
        }
    }
}

impl std::str::FromStr for Correction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "holm" => Ok(Self::Holm),
            "bonferroni" => Ok(Self::Bonferroni),
            "bh" | "fdr_bh" | "benjamini-hochberg" => Ok(Self::BenjaminiHochberg),
            "none" => Ok(Self::None),
            _ => Err(format!(
                "unknown correction `{s}`; expected holm, bonferroni, bh or none"
            )),
        }
    }
}

/// Bonferroni's correction: min(1, m·p) with m the number of non-NaN p-values.
pub fn bonferroni_adjust(p: &[f64]) -> Vec<f64> {
    let m = p.iter().filter(|x| !x.is_nan()).count() as f64;
    p.iter().map(|&x| (x * m).min(1.0)).collect()
}

/// Benjamini–Hochberg's step-up adjustment (statsmodels' `fdr_bh`): sorted ascending, the i-th smallest (from 1)
/// becomes min over j ≥ i of min(1, m·p₍ⱼ₎/j). Returned in the input order; NaN stays NaN and is not counted.
pub fn bh_adjust(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&x, &y| p[x].total_cmp(&p[y]).then(x.cmp(&y)));
    let m = order.len();
    let mut out = vec![f64::NAN; p.len()];
    let mut running = 1.0f64;
    for (j, &i) in order.iter().enumerate().rev() {
        running = running.min(m as f64 * p[i] / (j + 1) as f64);
        out[i] = running;
    }
    out
}

/// Arithmetic mean (NaN for none).
fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Cohen's d for paired samples: the mean of the differences `a − b` over their sample standard deviation (n − 1).
/// NaN when it is undefined: fewer than two pairs, or all differences equal.
pub fn cohens_d(a: &[f64], b: &[f64]) -> f64 {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    if d.len() < 2 {
        return f64::NAN;
    }
    let m = mean(&d);
    let sd = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (d.len() - 1) as f64).sqrt();
    if sd > 0.0 {
        m / sd
    } else {
        f64::NAN
    }
}

/// Randomised Tukey HSD p-values of every pair of runs: `runs[r][q]` is run r's value on query q (all of equal
/// length). Returns a symmetric matrix with 1 on the diagonal. `trials` seeded trials each permute every query's
/// values across the runs (uniformly, independently per query) and keep max − min of the runs' means; a pair's p is
/// the share of trials whose maximum is ≥ the pair's observed |difference of means| (up to 1e-12 relative, so
/// that the identity permutation always counts despite summation order).
pub fn tukey_hsd(runs: &[Vec<f64>], trials: usize, seed: u64) -> Vec<Vec<f64>> {
    let k = runs.len();
    let n = runs.first().map_or(0, Vec::len);
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|q| runs.iter().map(|r| r[q]).collect())
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut idx: Vec<usize> = (0..k).collect();
    let mut sums = vec![0.0f64; k];
    let mut maxima: Vec<f64> = Vec::with_capacity(trials);
    for _ in 0..trials {
        sums.iter_mut().for_each(|s| *s = 0.0);
        for row in &rows {
            idx.shuffle(&mut rng);
            for (s, &i) in sums.iter_mut().zip(&idx) {
                *s += row[i];
            }
        }
        let (lo, hi) = sums
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| {
                (lo.min(s), hi.max(s))
            });
        maxima.push((hi - lo) / n as f64);
    }
    maxima.sort_by(f64::total_cmp);
    let means: Vec<f64> = runs.iter().map(|r| mean(r)).collect();
    let mut p = vec![vec![1.0; k]; k];
    for i in 0..k {
        for j in i + 1..k {
            let obs = (means[i] - means[j]).abs();
            let cut = obs - 1e-12 * obs.max(1e-300);
            let at_least = trials - maxima.partition_point(|&m| m < cut);
            let v = if trials == 0 {
                f64::NAN
            } else {
                at_least as f64 / trials as f64
            };
            p[i][j] = v;
            p[j][i] = v;
        }
    }
    p
}

/// Settings of [`compare_runs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ManyOptions {
    /// How pairs are tested.
    pub test: ManyTest,
    /// The correction of paired tests' p-values over all pairs (not applied to Tukey HSD, whose p-values already
    /// account for them).
    pub correction: Correction,
    /// Significance level of the verdicts.
    pub alpha: f64,
    /// Bootstrap resamples of each run's interval.
    pub resamples: usize,
    /// Randomisation trials of Tukey HSD and of the permutation test (when it cannot enumerate: n > 20).
    pub trials: usize,
    /// Seed of the bootstrap and the randomisations.
    pub seed: u64,
    /// Whether larger values are better (false for measures such as OER).
    pub higher_is_better: bool,
}

impl Default for ManyOptions {
    fn default() -> Self {
        Self {
            test: ManyTest::TukeyHsd,
            correction: Correction::Holm,
            alpha: 0.05,
            resamples: 10_000,
            trials: 10_000,
            seed: 1,
            higher_is_better: true,
        }
    }
}

/// One run's summary.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run's name.
    pub name: String,
    /// Mean over the compared queries.
    pub mean: f64,
    /// Percentile bootstrap 95% interval of the mean.
    pub ci: (f64, f64),
}

/// One pair of runs, `a` < `b` (indices into [`ManyComparison::runs`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PairResult {
    /// The first run.
    pub a: usize,
    /// The second run.
    pub b: usize,
    /// mean(a) − mean(b).
    pub difference: f64,
    /// The test's p-value (Tukey HSD's, or the paired test's before correction).
    pub p_value: f64,
    /// The p-value the verdict uses: Tukey HSD's, or the paired test's after the correction.
    pub p_adjusted: f64,
    /// Cohen's d of the per-query differences a − b.
    pub effect_size: f64,
    /// Whether `p_adjusted` < α.
    pub significant: bool,
}

/// The comparison of many runs on one measure ([`compare_runs`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ManyComparison {
    /// The measure's name.
    pub measure: String,
    /// Queries compared (shared by every run).
    pub queries: usize,
    /// The settings used.
    pub options: ManyOptions,
    /// Runs in the order given.
    pub runs: Vec<RunSummary>,
    /// Every pair (a < b), in row-major order.
    pub pairs: Vec<PairResult>,
    /// Index of the baseline run.
    pub baseline: usize,
}

impl ManyComparison {
    /// The pair of runs `i` and `j` (either order), or None when `i == j`.
    pub fn pair(&self, i: usize, j: usize) -> Option<&PairResult> {
        let (a, b) = (i.min(j), i.max(j));
        self.pairs.iter().find(|p| p.a == a && p.b == b)
    }

    /// Runs significantly better (`better`) or worse than the baseline at α, as indices.
    pub fn against_baseline(&self, better: bool) -> Vec<usize> {
        (0..self.runs.len())
            .filter(|&r| r != self.baseline)
            .filter(|&r| {
                let p = self.pair(r, self.baseline).expect("r is not the baseline");
                let d = self.runs[r].mean - self.runs[self.baseline].mean;
                let good = if self.options.higher_is_better {
                    d > 0.0
                } else {
                    d < 0.0
                };
                p.significant && good == better && d != 0.0
            })
            .collect()
    }
}

/// Names of runs read from files: each file's stem (`runs/bm25.trec` → `bm25`), or the paths as given when two
/// stems coincide.
pub fn run_names(paths: &[std::path::PathBuf]) -> Vec<String> {
    let stems: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string())
        })
        .collect();
    let unique = stems.iter().collect::<std::collections::HashSet<_>>().len() == stems.len();
    if unique {
        stems
    } else {
        paths.iter().map(|p| p.display().to_string()).collect()
    }
}

/// Find the baseline among `names`: `first`, or a name.
pub fn resolve_baseline(names: &[String], baseline: &str) -> Result<usize, EvalError> {
    if baseline == "first" && !names.iter().any(|n| n == "first") {
        return Ok(0);
    }
    names.iter().position(|n| n == baseline).ok_or_else(|| {
        EvalError::Runs(format!(
            "baseline `{baseline}` is none of the runs ({}); give a run's name or `first`",
            names.join(", ")
        ))
    })
}

/// Per-query values of many runs over the queries they all share: `qids[r]`/`values[r]` are run r's queries and
/// values. Returns the shared qids in the first run's order, each run's values on them, and how many queries each
/// run had that were dropped. An error when no query is shared.
#[allow(clippy::type_complexity)]
pub fn align_queries(
    names: &[String],
    qids: &[Vec<String>],
    values: &[Vec<f64>],
) -> Result<(Vec<String>, Vec<Vec<f64>>, Vec<usize>), EvalError> {
    use std::collections::{HashMap, HashSet};
    let sets: Vec<HashSet<&str>> = qids
        .iter()
        .map(|q| q.iter().map(String::as_str).collect())
        .collect();
    let shared: Vec<String> = qids
        .first()
        .into_iter()
        .flatten()
        .filter(|q| sets.iter().all(|s| s.contains(q.as_str())))
        .cloned()
        .collect();
    if shared.is_empty() {
        return Err(EvalError::Runs(format!(
            "the runs {} share no evaluated query",
            names.join(", ")
        )));
    }
    let aligned = qids
        .iter()
        .zip(values)
        .map(|(q, v)| {
            let at: HashMap<&str, f64> = q
                .iter()
                .map(String::as_str)
                .zip(v.iter().copied())
                .collect();
            shared.iter().map(|s| at[s.as_str()]).collect()
        })
        .collect();
    let dropped = qids.iter().map(|q| q.len() - shared.len()).collect();
    Ok((shared, aligned, dropped))
}

/// Many runs' values of one measure on the queries they all share, ready for [`compare_runs`].
#[derive(Debug, Clone, PartialEq)]
pub struct AlignedRuns {
    /// The runs' names ([`run_names`] of their files).
    pub names: Vec<String>,
    /// The shared queries, in the first run's order.
    pub qids: Vec<String>,
    /// `values[r][q]`: run r on shared query q.
    pub values: Vec<Vec<f64>>,
    /// How many evaluated queries of each run were left out.
    pub dropped: Vec<usize>,
}

impl AlignedRuns {
    /// Align the first measure of each file's evaluation ([`align_queries`]).
    pub fn new(
        files: &[std::path::PathBuf],
        evals: Vec<crate::evaluate::Evaluation>,
    ) -> Result<Self, EvalError> {
        let names = run_names(files);
        let qids: Vec<Vec<String>> = evals.iter().map(|e| e.qids.clone()).collect();
        let values: Vec<Vec<f64>> = evals
            .into_iter()
            .map(|e| {
                e.results
                    .into_iter()
                    .next()
                    .map(|r| r.per_query)
                    .unwrap_or_default()
            })
            .collect();
        let (qids, values, dropped) = align_queries(&names, &qids, &values)?;
        Ok(Self {
            names,
            qids,
            values,
            dropped,
        })
    }

    /// One line per run that lost queries to the alignment.
    pub fn warnings(&self) -> Vec<String> {
        self.names
            .iter()
            .zip(&self.dropped)
            .filter(|(_, d)| **d > 0)
            .map(|(name, d)| {
                format!("{name}: {d} evaluated queries left out, not answered by every run")
            })
            .collect()
    }
}

/// Compare many runs' per-query values (`values[r][q]`, every run over the same queries in the same order) on a
/// measure named `measure`; `baseline` indexes `names`.
pub fn compare_runs(
    names: &[String],
    values: &[Vec<f64>],
    baseline: usize,
    measure: &str,
    opts: &ManyOptions,
) -> Result<ManyComparison, EvalError> {
    let k = values.len();
    let bad = |m: String| Err(EvalError::Runs(m));
    if k < 2 {
        return bad(format!(
            "comparing runs needs two or more, got {k}{}",
            names.first().map(|n| format!(" ({n})")).unwrap_or_default()
        ));
    }
    if names.len() != k || baseline >= k {
        return bad(format!(
            "{} names and baseline {baseline} for {k} runs",
            names.len()
        ));
    }
    let n = values[0].len();
    if let Some(r) = values.iter().position(|v| v.len() != n) {
        return bad(format!(
            "run {} has {} values but {} has {n}; runs must cover the same queries",
            names[r],
            values[r].len(),
            names[0]
        ));
    }
    if n == 0 {
        return bad("the runs have no query to compare".into());
    }
    if let Some(r) = values.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
        return bad(format!("run {} has a value that is not finite", names[r]));
    }
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return bad(format!("alpha must lie in (0, 1), got {}", opts.alpha));
    }
    if opts.resamples == 0 || opts.trials == 0 {
        return bad("resamples and trials must be at least 1".into());
    }
    let runs = names
        .iter()
        .zip(values)
        .map(|(name, v)| RunSummary {
            name: name.clone(),
            mean: mean(v),
            ci: mean_ci(v, 0.95, opts.resamples, opts.seed),
        })
        .collect::<Vec<_>>();
    let index: Vec<(usize, usize)> = (0..k)
        .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
        .collect();
    let (raw, adjusted) = match opts.test {
        ManyTest::TukeyHsd => {
            let m = tukey_hsd(values, opts.trials, opts.seed);
            let p: Vec<f64> = index.iter().map(|&(a, b)| m[a][b]).collect();
            (p.clone(), p)
        }
        ManyTest::Paired(kind) => {
            let p: Vec<f64> = index
                .iter()
                .map(|&(a, b)| {
                    let (x, y) = (&values[a], &values[b]);
                    let alt = Alternative::TwoSided;
                    match kind {
                        TestKind::TTest => paired_t_test(x, y, alt),
                        TestKind::Wilcoxon => wilcoxon(x, y, alt),
                        TestKind::Sign => sign_test(x, y, alt),
                        TestKind::Permutation => {
                            permutation_test(x, y, alt, opts.trials, opts.seed)
                        }
                    }
                    .p_value
                })
                .collect();
            let adj = opts.correction.adjust(&p);
            (p, adj)
        }
    };
    let pairs = index
        .iter()
        .zip(raw.iter().zip(&adjusted))
        .map(|(&(a, b), (&p_value, &p_adjusted))| PairResult {
            a,
            b,
            difference: runs[a].mean - runs[b].mean,
            p_value,
            p_adjusted,
            effect_size: cohens_d(&values[a], &values[b]),
            significant: p_adjusted < opts.alpha,
        })
        .collect();
    Ok(ManyComparison {
        measure: measure.to_string(),
        queries: n,
        options: *opts,
        runs,
        pairs,
        baseline,
    })
}
