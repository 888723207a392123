//! SLAM listwise large-margin surrogates (Chaudhuri & Tewari 2015 — seed 002; algorithms.md §3.2–3.4):
//! φ_v(s, R) = Σ_i v_i · max(0, max_j 1\[R_i > R_j\] (Δ_ij + s_j − s_i)), with Δ_ij = Δ (the paper's theory) or
//! (R_i − R_j)·Δ (the authors' code). Value and subgradient in O(m·K) for m documents and K grades.

/// The margin Δ_ij.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Margin {
    /// Δ for every pair (the analysis uses Δ = 1).
    Constant(f64),
    /// (R_i − R_j)·Δ (the MATLAB code; use with Δ = 1 to reproduce the plots).
    RelevanceScaled(f64),
}

/// Which ranking measure the weights bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// NDCG over the whole list (v^NDCG).
    Ndcg,
    /// NDCG@k (v^{NDCG_k}: weights only on the ideal top k).
    NdcgAt(usize),
    /// Average precision, binary relevance R > 0 (v^AP).
    Ap,
}

fn gain(r: f32) -> f64 {
    ltr_metrics::Gain::Exponential.of(r)
}

fn disc(p: usize) -> f64 {
    1.0 / ((p + 1) as f64).log2()
}

/// The weight vector v(R) of a measure, one weight per document in input order. With `tie_average`, documents of
/// one grade share the mean of the position weights their grade occupies (so v does not depend on the arbitrary
/// order within a grade). A list without relevant documents gets all-zero weights.
pub fn weights(r: &[f32], measure: Measure, tie_average: bool) -> Vec<f64> {
    let m = r.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| r[b].total_cmp(&r[a]).then(a.cmp(&b)));
    let mut v = vec![0.0; m];
    match measure {
        Measure::Ap => {
            let rel = r.iter().filter(|&&x| x > 0.0).count();
            if rel > 0 {
                for (i, &x) in r.iter().enumerate() {
                    if x > 0.0 {
                        v[i] = 1.0 / rel as f64;
                    }
                }
            }
            return v;
        }
        Measure::Ndcg | Measure::NdcgAt(_) => {
            let k = match measure {
                Measure::NdcgAt(k) => k.min(m),
                _ => m,
            };
            let z: f64 = order
                .iter()
                .take(k)
                .enumerate()
                .map(|(p, &d)| gain(r[d]) * disc(p + 1))
                .sum();
            if z <= 0.0 {
                return v;
            }
            let pos_w = |p: usize, d: usize| {
                if p < k {
                    gain(r[d]) * disc(p + 1) / z
                } else {
                    0.0
                }
            };
            if !tie_average {
                for (p, &d) in order.iter().enumerate() {
                    v[d] = pos_w(p, d);
                }
            } else {
                let mut a = 0;
                while a < m {
                    let mut b = a;
                    while b < m && r[order[b]] == r[order[a]] {
                        b += 1;
                    }
                    let mean = (a..b).map(|p| pos_w(p, order[p])).sum::<f64>() / (b - a) as f64;
                    for &d in &order[a..b] {
                        v[d] = mean;
                    }
                    a = b;
                }
            }
        }
    }
    v
}

/// The distinct grades of `r` (ascending) and each document's grade index.
pub(crate) fn grade_levels(r: &[f32]) -> (Vec<f32>, Vec<usize>) {
    let mut levels: Vec<f32> = r.to_vec();
    levels.sort_by(f32::total_cmp);
    levels.dedup();
    let lev = r
        .iter()
        .map(|x| {
            levels
                .binary_search_by(|l| l.total_cmp(x))
                .expect("present")
        })
        .collect();
    (levels, lev)
}

/// φ_v(s, R) and, if `grad` is given, a subgradient with respect to s written into it. For each document i the
/// worst violators are argmax_{j: R_j < R_i} (Δ_ij + s_j), found from per-grade maxima in O(m·K). When several
/// documents tie for the maximum (always so at w = 0), v_i is shared equally among all of them: every convex
/// combination is a valid subgradient, and the even split does not depend on the order of the documents in the file.
/// (Taking the first one instead pushes one arbitrary document down per query; on OHSUMED that first step alone
/// drops training NDCG@10 from 0.43 to 0.16.)
pub fn phi(s: &[f64], r: &[f32], v: &[f64], margin: Margin, mut grad: Option<&mut [f64]>) -> f64 {
    let m = s.len();
    let (levels, lev) = grade_levels(r);
    let k = levels.len();
    // Highest score per grade and how many documents of the grade reach it.
    let mut best: Vec<(f64, usize)> = vec![(f64::NEG_INFINITY, 0); k];
    for i in 0..m {
        let b = &mut best[lev[i]];
        if s[i] > b.0 {
            *b = (s[i], 1);
        } else if s[i] == b.0 {
            b.1 += 1;
        }
    }
    if let Some(g) = grad.as_deref_mut() {
        g.iter_mut().for_each(|x| *x = 0.0);
    }
    // Per-document share of each grade's maximisers, accumulated per grade, then spread once at the end.
    let mut share = vec![0.0f64; k];
    let mut total = 0.0;
    for i in 0..m {
        if v[i] == 0.0 || lev[i] == 0 {
            continue;
        }
        let margin_to = |l: usize| match margin {
            Margin::Constant(d) => d,
            Margin::RelevanceScaled(d) => (r[i] - levels[l]) as f64 * d,
        };
        let mut worst = f64::NEG_INFINITY;
        for l in 0..lev[i] {
            worst = worst.max(margin_to(l) + best[l].0 - s[i]);
        }
        if worst > 0.0 {
            total += v[i] * worst;
            if grad.is_some() {
                let tied: Vec<usize> = (0..lev[i])
                    .filter(|&l| margin_to(l) + best[l].0 - s[i] == worst)
                    .collect();
                let count: usize = tied.iter().map(|&l| best[l].1).sum();
                for l in tied {
                    share[l] += v[i] / count as f64;
                }
                if let Some(g) = grad.as_deref_mut() {
                    g[i] -= v[i];
                }
            }
        }
    }
    if let Some(g) = grad {
        for j in 0..m {
            if share[lev[j]] != 0.0 && s[j] == best[lev[j]].0 {
                g[j] += share[lev[j]];
            }
        }
    }
    total
}

/// φ by its O(m²) definition (for tests).
pub fn phi_explicit(s: &[f64], r: &[f32], v: &[f64], margin: Margin) -> f64 {
    let mut total = 0.0;
    for i in 0..s.len() {
        let mut worst: f64 = 0.0;
        for j in 0..s.len() {
            if r[i] > r[j] {
                let d = match margin {
                    Margin::Constant(d) => d,
                    Margin::RelevanceScaled(d) => (r[i] - r[j]) as f64 * d,
                };
                worst = worst.max(d + s[j] - s[i]);
            }
        }
        total += v[i] * worst;
    }
    total
}

/// Which violators a relevant document pays for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Violators {
    /// Its worst violator only: max_j (the paper's SLAM surrogate, Algorithm 1; the default).
    #[default]
    Worst,
    /// The mean hinge over every less relevant document — an extension, not in the paper: convex, but it does not
    /// upper-bound the RML (mean ≤ max), so Theorem 4's bound is lost. It spreads each relevant document's push-down
    /// over all its violators instead of the single top-scored one, which on query-normalised features is typically
    /// an outlier with near-maximal values (on OHSUMED the worst-violator update makes the weights rank *below* the
    /// file order; see `examples/slam_explore.rs`).
    Mean,
}

/// φ^mean_v(s, R) = Σ_i v_i · (1/n_i) Σ_{j: R_j < R_i} max(0, Δ_ij + s_j − s_i), n_i = #{j: R_j < R_i}, and a
/// subgradient in `grad`. Each grade's scores are sorted once; every (document, lower grade) pair is one binary
/// search, so the cost is O(K² · m log m) for K grades, never O(m²).
pub fn phi_mean(
    s: &[f64],
    r: &[f32],
    v: &[f64],
    margin: Margin,
    mut grad: Option<&mut [f64]>,
) -> f64 {
    let m = s.len();
    let (levels, lev) = grade_levels(r);
    let k = levels.len();
    // Documents of each grade sorted by score, with prefix sums of the scores.
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); k];
    for i in 0..m {
        by_level[lev[i]].push(i);
    }
    for docs in &mut by_level {
        docs.sort_by(|&a, &b| s[a].total_cmp(&s[b]));
    }
    let prefix = prefix_sums(&by_level, s);
    let below: Vec<usize> = (0..k)
        .map(|l| by_level[..l].iter().map(Vec::len).sum())
        .collect();
    let delta = |hi: usize, lo: usize| match margin {
        Margin::Constant(d) => d,
        Margin::RelevanceScaled(d) => (levels[hi] - levels[lo]) as f64 * d,
    };
    if let Some(g) = grad.as_deref_mut() {
        g.iter_mut().for_each(|x| *x = 0.0);
    }
    let mut total = 0.0;
    // Per document i: a_i = v_i / n_i, the weight of each of its hinges.
    let a: Vec<f64> = (0..m)
        .map(|i| {
            if v[i] == 0.0 || below[lev[i]] == 0 {
                0.0
            } else {
                v[i] / below[lev[i]] as f64
            }
        })
        .collect();
    for i in 0..m {
        if a[i] == 0.0 {
            continue;
        }
        let li = lev[i];
        let mut active = 0usize;
        for l in 0..li {
            let d = delta(li, l);
            let docs = &by_level[l];
            // j violates i when (Δ + s_j) − s_i > 0: monotone in s_j, so the violators are a suffix.
            let first = docs.partition_point(|&j| (d + s[j]) - s[i] <= 0.0);
            let c = docs.len() - first;
            let sum = prefix[l][docs.len()] - prefix[l][first];
            total += a[i] * (c as f64 * (d - s[i]) + sum);
            active += c;
        }
        if let Some(g) = grad.as_deref_mut() {
            g[i] -= a[i] * active as f64;
        }
    }
    if let Some(g) = grad {
        // Document j is pushed down by every more relevant i it violates: (Δ + s_j) − s_i > 0, a prefix of the
        // higher grade sorted by s_i.
        let prefix_a = prefix_sums(&by_level, &a);
        for j in 0..m {
            let lj = lev[j];
            for h in lj + 1..k {
                let d = delta(h, lj);
                let docs = &by_level[h];
                let end = docs.partition_point(|&i| (d + s[j]) - s[i] > 0.0);
                g[j] += prefix_a[h][end];
            }
        }
    }
    total
}

/// Per group of document indices, the running sums 0, x[d₀], x[d₀] + x[d₁], … in the group's order.
fn prefix_sums(groups: &[Vec<usize>], x: &[f64]) -> Vec<Vec<f64>> {
    groups
        .iter()
        .map(|docs| {
            std::iter::once(0.0)
                .chain(docs.iter().scan(0.0, |acc, &d| {
                    *acc += x[d];
                    Some(*acc)
                }))
                .collect()
        })
        .collect()
}

/// φ^mean by its O(m²) definition (for tests).
pub fn phi_mean_explicit(s: &[f64], r: &[f32], v: &[f64], margin: Margin) -> f64 {
    let mut total = 0.0;
    for i in 0..s.len() {
        let lower: Vec<usize> = (0..s.len()).filter(|&j| r[j] < r[i]).collect();
        if lower.is_empty() {
            continue;
        }
        let sum: f64 = lower
            .iter()
            .map(|&j| {
                let d = match margin {
                    Margin::Constant(d) => d,
                    Margin::RelevanceScaled(d) => (r[i] - r[j]) as f64 * d,
                };
                ((d + s[j]) - s[i]).max(0.0)
            })
            .sum();
        total += v[i] * sum / lower.len() as f64;
    }
    total
}
