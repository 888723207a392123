//! Paired significance tests over per-query metric values, defined as scipy.stats defines them so that values can be
//! checked against it: `ttest_rel`, `wilcoxon` (zero_method "wilcox", no continuity correction, exact distribution
//! for n ≤ 50 without ties or zeros, else the normal approximation with tie correction), `binomtest` (sign test),
//! `permutation_test` (paired, sign flips; exact enumeration for n ≤ 20) and a percentile bootstrap interval.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
use statrs::function::factorial::ln_binomial;

/// Direction of the alternative hypothesis about the mean (or median) of `a − b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Alternative {
    /// `a` and `b` differ.
    #[default]
    TwoSided,
    /// `a` is better (larger) than `b`.
    Greater,
    /// `a` is worse (smaller) than `b`.
    Less,
}

impl Alternative {
    /// The name `--alternative` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::TwoSided => "two-sided",
            Self::Greater => "greater",
            Self::Less => "less",
        }
    }
}

impl std::str::FromStr for Alternative {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "two-sided" | "two" | "2" => Ok(Self::TwoSided),
            "greater" | "one" | "1" => Ok(Self::Greater),
            "less" => Ok(Self::Less),
            _ => Err(format!(
                "unknown alternative `{s}`; expected two-sided, greater or less"
            )),
        }
    }
}

/// The outcome of a test.
#[derive(Debug, Clone, PartialEq)]
pub struct TestResult {
    /// Test name (`ttest`, `wilcoxon`, `sign`, `permutation`).
    pub test: &'static str,
    /// The statistic: t; Wilcoxon's T (min of the signed-rank sums for two-sided, W+ otherwise); the number of
    /// positive differences (sign); the mean difference (permutation).
    pub statistic: f64,
    /// The p-value.
    pub p_value: f64,
    /// Pairs used (after dropping zero differences for Wilcoxon and sign).
    pub n: usize,
    /// The alternative tested.
    pub alternative: Alternative,
    /// How the p-value was obtained (e.g. "exact", "normal approximation", "monte carlo").
    pub method: &'static str,
}

fn diffs(a: &[f64], b: &[f64]) -> Vec<f64> {
    assert_eq!(a.len(), b.len(), "paired samples must have equal length");
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

/// Paired t-test on `a − b` (scipy `ttest_rel`). When every difference is equal the statistic is undefined; the
/// result then reports t = 0 and p = 1 (no evidence of a difference).
pub fn paired_t_test(a: &[f64], b: &[f64], alt: Alternative) -> TestResult {
    let d = diffs(a, b);
    let n = d.len();
    let mean = d.iter().sum::<f64>() / n as f64;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    let se = (var / n as f64).sqrt();
    if n < 2 || se == 0.0 || !se.is_finite() {
        return TestResult {
            test: "ttest",
            statistic: 0.0,
            p_value: 1.0,
            n,
            alternative: alt,
            method: "degenerate",
        };
    }
    let t = mean / se;
    let dist = StudentsT::new(0.0, 1.0, n as f64 - 1.0).expect("df > 0");
    let p = match alt {
        Alternative::TwoSided => 2.0 * dist.cdf(-t.abs()),
        Alternative::Greater => dist.cdf(-t),
        Alternative::Less => dist.cdf(t),
    };
    TestResult {
        test: "ttest",
        statistic: t,
        p_value: p.min(1.0),
        n,
        alternative: alt,
        method: "student t",
    }
}

/// Average ranks (1-based) of `v`, ties sharing their mean rank; also the tie-group sizes.
fn average_ranks(v: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut ranks = vec![0.0; v.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = r;
        }
        if j > i {
            ties.push(j - i + 1);
        }
        i = j + 1;
    }
    (ranks, ties)
}

/// Exact null distribution of W+ for n untied ranks: counts of subsets of {1..n} by sum.
fn signed_rank_counts(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut c = vec![0.0f64; max + 1];
    c[0] = 1.0;
    for k in 1..=n {
        for s in (k..=max).rev() {
            c[s] += c[s - k];
        }
    }
    c
}

/// Wilcoxon signed-rank test on `a − b` (scipy `wilcoxon` defaults).
pub fn wilcoxon(a: &[f64], b: &[f64], alt: Alternative) -> TestResult {
    let all = diffs(a, b);
    let had_zeros = all.contains(&0.0);
    let d: Vec<f64> = all.into_iter().filter(|&x| x != 0.0).collect();
    let n = d.len();
    if n == 0 {
        return TestResult {
            test: "wilcoxon",
            statistic: 0.0,
            p_value: 1.0,
            n,
            alternative: alt,
            method: "degenerate",
        };
    }
    let abs: Vec<f64> = d.iter().map(|x| x.abs()).collect();
    let (ranks, ties) = average_ranks(&abs);
    let r_plus: f64 = d
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let r_minus: f64 = d
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x < 0.0)
        .map(|(_, r)| r)
        .sum();
    let statistic = if alt == Alternative::TwoSided {
        r_plus.min(r_minus)
    } else {
        r_plus
    };
    if n <= 50 && ties.is_empty() && !had_zeros {
        let counts = signed_rank_counts(n);
        let total: f64 = counts.iter().sum();
        let cdf = |w: f64| counts.iter().take(w.floor() as usize + 1).sum::<f64>() / total; // P(W+ ≤ w)
        let sf = |w: f64| 1.0 - if w >= 1.0 { cdf(w - 1.0) } else { 0.0 }; // P(W+ ≥ w)
        let p = match alt {
            Alternative::TwoSided => 2.0 * cdf(r_plus).min(sf(r_plus)),
            Alternative::Greater => sf(r_plus),
            Alternative::Less => cdf(r_plus),
        };
        return TestResult {
            test: "wilcoxon",
            statistic,
            p_value: p.min(1.0),
            n,
            alternative: alt,
            method: "exact",
        };
    }
    let nf = n as f64;
    let mn = nf * (nf + 1.0) / 4.0;
    let tie_term: f64 = ties
        .iter()
        .map(|&t| (t as f64).powi(3) - t as f64)
        .sum::<f64>()
        / 48.0;
    let se = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term).sqrt();
    let normal = Normal::new(0.0, 1.0).expect("standard normal");
    let z = (r_plus - mn) / se;
    let p = match alt {
        Alternative::TwoSided => 2.0 * normal.cdf(-z.abs()),
        Alternative::Greater => normal.cdf(-z),
        Alternative::Less => normal.cdf(z),
    };
    TestResult {
        test: "wilcoxon",
        statistic,
        p_value: p.min(1.0),
        n,
        alternative: alt,
        method: "normal approximation",
    }
}

fn binom_cdf(k: usize, n: usize) -> f64 {
    // P(X ≤ k) for X ~ Binomial(n, 1/2), summed in log space per term.
    (0..=k.min(n))
        .map(|i| (ln_binomial(n as u64, i as u64) - n as f64 * std::f64::consts::LN_2).exp())
        .sum::<f64>()
        .min(1.0)
}

/// Sign test: exact binomial test of the number of positive differences among the non-zero ones (scipy
/// `binomtest(k, n, 0.5)`).
pub fn sign_test(a: &[f64], b: &[f64], alt: Alternative) -> TestResult {
    let d = diffs(a, b);
    let pos = d.iter().filter(|&&x| x > 0.0).count();
    let neg = d.iter().filter(|&&x| x < 0.0).count();
    let n = pos + neg;
    let p = if n == 0 {
        1.0
    } else {
        match alt {
            Alternative::TwoSided => {
                if pos * 2 == n {
                    1.0
                } else {
                    2.0 * binom_cdf(pos.min(neg), n)
                }
            }
            Alternative::Greater => binom_cdf(neg, n), // P(X ≥ pos) = P(X ≤ n − pos)
            Alternative::Less => binom_cdf(pos, n),
        }
    };
    TestResult {
        test: "sign",
        statistic: pos as f64,
        p_value: p.min(1.0),
        n,
        alternative: alt,
        method: "exact",
    }
}

/// Paired randomisation test of the mean difference: all 2^n sign flips when n ≤ 20 (exact), else `resamples`
/// seeded random flips with p = (b + 1)/(N + 1). Two-sided p = 2·min(one-sided), as scipy's `permutation_test`.
pub fn permutation_test(
    a: &[f64],
    b: &[f64],
    alt: Alternative,
    resamples: usize,
    seed: u64,
) -> TestResult {
    let d = diffs(a, b);
    let n = d.len();
    let obs = d.iter().sum::<f64>() / n as f64;
    let gamma = (obs * 1e-14).abs();
    let (mut ge, mut le, total, method);
    if n <= 20 {
        ge = 0usize;
        le = 0usize;
        for mask in 0u32..(1u32 << n) {
            let m: f64 = d
                .iter()
                .enumerate()
                .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                .sum::<f64>()
                / n as f64;
            if m >= obs - gamma {
                ge += 1;
            }
            if m <= obs + gamma {
                le += 1;
            }
        }
        total = (1u64 << n) as f64;
        method = "exact";
    } else {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        ge = 1;
        le = 1;
        for _ in 0..resamples {
            let m: f64 = d
                .iter()
                .map(|x| if rng.random::<bool>() { -x } else { *x })
                .sum::<f64>()
                / n as f64;
            if m >= obs - gamma {
                ge += 1;
            }
            if m <= obs + gamma {
                le += 1;
            }
        }
        total = (resamples + 1) as f64;
        method = "monte carlo";
    }
    let (pg, pl) = (ge as f64 / total, le as f64 / total);
    let p = match alt {
        Alternative::TwoSided => 2.0 * pg.min(pl),
        Alternative::Greater => pg,
        Alternative::Less => pl,
    };
    TestResult {
        test: "permutation",
        statistic: obs,
        p_value: p.min(1.0),
        n,
        alternative: alt,
        method,
    }
}

/// Percentile bootstrap confidence interval of the mean of `a − b` at `level` (e.g. 0.95), with `resamples`
/// seeded resamples of the query pairs ([`mean_ci`] of the differences).
pub fn bootstrap_ci(a: &[f64], b: &[f64], level: f64, resamples: usize, seed: u64) -> (f64, f64) {
    mean_ci(&diffs(a, b), level, resamples, seed)
}

/// Percentile bootstrap interval of the mean of `v` at `level` (e.g. 0.95): `resamples` seeded resamples of the
/// values with replacement, quantiles interpolated linearly (numpy's default). The same seed draws the same
/// resampled positions for every list of the same length, so the runs of one comparison share their resamples.
pub fn mean_ci(v: &[f64], level: f64, resamples: usize, seed: u64) -> (f64, f64) {
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..resamples.max(1))
        .map(|_| (0..n).map(|_| v[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let pos = p * (means.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        means[lo] + (means[hi] - means[lo]) * (pos - lo as f64)
    };
    let alpha = (1.0 - level) / 2.0;
    (q(alpha), q(1.0 - alpha))
}

/// Holm's step-down correction of `p` for testing all its hypotheses at once (statsmodels' `multipletests(...,
/// method="holm")`): sorted ascending, the i-th smallest (from 0) becomes max over j ≤ i of min(1, (m − j)·p₍ⱼ₎).
/// Returned in the input order. A NaN p-value stays NaN and is left out of the others' count.
pub fn holm_adjust(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&x, &y| p[x].total_cmp(&p[y]).then(x.cmp(&y)));
    let m = order.len();
    let mut out = vec![f64::NAN; p.len()];
    let mut running = 0.0f64;
    for (j, &i) in order.iter().enumerate() {
        running = running.max(((m - j) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// The tests `ltr compare --test` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    /// Paired t-test.
    TTest,
    /// Wilcoxon signed-rank.
    Wilcoxon,
    /// Sign test.
    Sign,
    /// Paired randomisation test.
    Permutation,
}

impl std::str::FromStr for TestKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "ttest" | "t" | "t-test" => Ok(Self::TTest),
            "wilcoxon" => Ok(Self::Wilcoxon),
            "sign" => Ok(Self::Sign),
            "permutation" | "randomization" | "randomisation" => Ok(Self::Permutation),
            _ => Err(format!(
                "unknown test `{s}`; expected ttest, wilcoxon, sign or permutation"
            )),
        }
    }
}

/// Run the chosen test (permutation: 100,000 resamples when inexact).
pub fn run_test(kind: TestKind, a: &[f64], b: &[f64], alt: Alternative, seed: u64) -> TestResult {
    match kind {
        TestKind::TTest => paired_t_test(a, b, alt),
        TestKind::Wilcoxon => wilcoxon(a, b, alt),
        TestKind::Sign => sign_test(a, b, alt),
        TestKind::Permutation => permutation_test(a, b, alt, 100_000, seed),
    }
}

/// Two runs' per-query values compared: the test, the bootstrap interval of the difference, wins and losses
/// (what `ltr compare` prints for two score files and `ltrkit.compare` returns for two rankings).
#[derive(Debug, Clone, PartialEq)]
pub struct PairedComparison {
    /// Mean of `a`.
    pub mean_a: f64,
    /// Mean of `b`.
    pub mean_b: f64,
    /// The test's outcome.
    pub test: TestResult,
    /// 95% percentile bootstrap interval of the mean of `a − b` (10,000 resamples).
    pub ci95: (f64, f64),
    /// Queries where `a` is larger.
    pub wins: usize,
    /// Queries where `a` is smaller.
    pub losses: usize,
}

impl PairedComparison {
    /// Compare `a` with `b` (equal, non-zero lengths).
    pub fn new(a: &[f64], b: &[f64], kind: TestKind, alt: Alternative, seed: u64) -> Self {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        Self {
            mean_a: mean(a),
            mean_b: mean(b),
            test: run_test(kind, a, b, alt, seed),
            ci95: bootstrap_ci(a, b, 0.95, 10_000, seed),
            wins: a.iter().zip(b).filter(|(x, y)| x > y).count(),
            losses: a.iter().zip(b).filter(|(x, y)| x < y).count(),
        }
    }

    /// What `ltr compare` prints for two score files `files` (A, B; more are ignored): JSON (pretty, as `--json`) or text lines.
    pub fn render(
        &self,
        json: bool,
        measure: &str,
        convention: &str,
        queries: usize,
        files: &[std::path::PathBuf],
    ) -> String {
        let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        let t = &self.test;
        if json {
            let v = serde_json::json!({
                "metric": measure,
                "convention": convention,
                "queries": queries,
                "a": {"file": files[0], "mean": self.mean_a},
                "b": {"file": files[1], "mean": self.mean_b},
                "difference": self.mean_a - self.mean_b,
                "test": t.test,
                "alternative": t.alternative.name(),
                "method": t.method,
                "statistic": t.statistic,
                "p_value": t.p_value,
                "n": t.n,
                "wins": self.wins,
                "losses": self.losses,
                "bootstrap_ci95": [self.ci95.0, self.ci95.1],
            });
            return format!("{v:#}\n");
        }
        format!(
            "{measure} ({convention}), {queries} queries\nA {:.4}  {}\nB {:.4}  {}\nA − B = {:+.4}  (95% bootstrap CI \
             [{:+.4}, {:+.4}]); A wins {}, loses {}\n{} ({}, {}): statistic {:.4}, p = {:.4e}\n",
            self.mean_a,
            files[0],
            self.mean_b,
            files[1],
            self.mean_a - self.mean_b,
            self.ci95.0,
            self.ci95.1,
            self.wins,
            self.losses,
            t.test,
            t.alternative.name(),
            t.method,
            t.statistic,
            t.p_value
        )
    }
}
