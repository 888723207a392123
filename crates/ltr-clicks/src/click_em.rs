//! Position bias from plain click logs by expectation-maximisation (Wang, Golbandi, Bendersky, Metzler & Najork,
//! WSDM 2018, "Position Bias Estimation for Unbiased Learning to Rank in Personal Search").
//!
//! The position-based model says a click happens when the document is examined (probability θ_k of its displayed
//! rank k) and relevant (probability γ of the query–document pair): P(click) = θ_k·γ. EM alternates the posterior
//! of (examined, relevant) for every unclicked impression with a maximisation: θ_k is the expected share of
//! examined impressions at rank k; γ is either one free value per (qid, docid) (*standard EM*), or — the paper's
//! **regression EM** — a logistic regression on the document's features fitted to the expected relevance, which
//! shares strength across documents and generalises to pairs seen at one rank only.
//!
//! θ_k and γ are identified only up to a common scale, so the estimate is reported relative to rank 1
//! (p_k/p_1), like the swap estimate ([`crate::estimate_propensities`]). Per-(qid, docid) EM needs each document
//! at several ranks (rankers changing over time, interventions); regression EM needs features that explain
//! relevance. Intervals come from a Poisson bootstrap over sessions (seeded, so reproducible).

use std::collections::HashMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Poisson};
use rayon::prelude::*;

use ltr_data::{DataError, Dataset, Result};

use crate::click_log_reader::{by_session, DocumentIndex, Sessions};
use crate::clicks::{ClickRecord, PropensityEstimate};

/// How EM models relevance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelevanceModel {
    /// One free relevance probability per (qid, docid): standard EM.
    PerDocument,
    /// A logistic regression on the document's features (regression EM; needs the feature file).
    Regression,
}

impl RelevanceModel {
    /// The model of a `ltr clicks propensity --method` name: `em` (per document) or `regression-em`.
    pub fn parse(method: &str) -> Result<Self> {
        match method {
            "em" => Ok(Self::PerDocument),
            "regression-em" => Ok(Self::Regression),
            other => Err(DataError::Invalid(format!(
                "unknown EM method `{other}` (expected em or regression-em)"
            ))),
        }
    }
}

/// Settings of [`estimate_propensities_em`].
#[derive(Debug, Clone, PartialEq)]
pub struct EmSettings {
    /// The relevance model.
    pub relevance: RelevanceModel,
    /// EM iterations at most.
    pub max_iter: usize,
    /// Stop when no θ_k/θ_1 moves by more than this.
    pub tol: f64,
    /// Bootstrap replicates for the intervals (0: no intervals).
    pub bootstrap: usize,
    /// Interval half-width in bootstrap standard deviations (1.96: 95%).
    pub z: f64,
    /// Seed of the bootstrap.
    pub seed: u64,
}

impl Default for EmSettings {
    fn default() -> Self {
        Self {
            relevance: RelevanceModel::Regression,
            max_iter: 20_000,
            tol: 1e-8,
            bootstrap: 20,
            z: 1.96,
            seed: 1,
        }
    }
}

/// One (document, rank) cell of the log: impressions and clicks.
#[derive(Debug, Clone, Copy)]
struct Cell {
    doc: usize,
    rank: usize,
    shown: f64,
    clicks: f64,
}

/// The log as cells, with per-session membership for the bootstrap.
struct Cells {
    docs: usize,
    ranks: usize,
    /// (doc, rank) of every impression, and whether it was clicked, grouped by session.
    sessions: Vec<Vec<(usize, usize, bool)>>,
    doc_rows: Vec<Option<usize>>,
}

fn cells_of(sessions: &mut Sessions<'_>, features: Option<&Dataset>) -> Result<Cells> {
    let mut index = DocumentIndex::default();
    let mut cells = Vec::new();
    let mut ranks = 0;
    sessions(&mut |s| {
        let mut v = Vec::with_capacity(s.len());
        for r in s {
            let (d, _) = index.id(&r.qid, &r.docid);
            ranks = ranks.max(r.rank as usize);
            v.push((d, r.rank as usize - 1, r.clicked));
        }
        cells.push(v);
        Ok(())
    })?;
    if cells.is_empty() {
        return Err(DataError::Invalid("the click log is empty".into()));
    }
    let mut doc_rows = vec![None; index.len()];
    if let Some(ds) = features {
        let rows = crate::click_training::rows_by_document(ds);
        for (q, d, k) in index.iter() {
            doc_rows[k] = Some(*rows.get(&(q, d.to_string())).ok_or_else(|| {
                DataError::Invalid(format!(
                    "document `{d}` of qid `{q}` in the click log is not in the feature file"
                ))
            })? as usize);
        }
    }
    Ok(Cells {
        docs: index.len(),
        ranks,
        sessions: cells,
        doc_rows,
    })
}

/// Aggregate sessions (each counted `weight[s]` times) into (doc, rank) cells.
fn aggregate(c: &Cells, weight: Option<&[f64]>) -> Vec<Cell> {
    let mut map: HashMap<(usize, usize), (f64, f64)> = HashMap::new();
    for (s, session) in c.sessions.iter().enumerate() {
        let w = weight.map_or(1.0, |w| w[s]);
        if w == 0.0 {
            continue;
        }
        for &(d, k, clicked) in session {
            let e = map.entry((d, k)).or_insert((0.0, 0.0));
            e.0 += w;
            e.1 += if clicked { w } else { 0.0 };
        }
    }
    let mut v: Vec<Cell> = map
        .into_iter()
        .map(|((doc, rank), (shown, clicks))| Cell {
            doc,
            rank,
            shown,
            clicks,
        })
        .collect();
    // A fixed order: sums below are then the same at any thread count and across runs.
    v.sort_unstable_by_key(|c| (c.doc, c.rank));
    v
}

pub(crate) fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// Weighted logistic regression of soft labels `r` (expected relevant impressions) out of `n` impressions per
/// document, warm-started at `w` (last element: the intercept), by gradient steps with an Armijo line search.
pub(crate) fn fit_logistic(x: &[Vec<f32>], r: &[f64], n: &[f64], w: &mut [f64], steps: usize) {
    let d = w.len() - 1;
    let total: f64 = n.iter().sum();
    let loss_grad = |w: &[f64], grad: Option<&mut [f64]>| {
        // Fixed blocks summed in order: the same sums at any thread count.
        let parts: Vec<(f64, Vec<f64>)> = x
            .par_chunks(1024)
            .zip(r.par_chunks(1024))
            .zip(n.par_chunks(1024))
            .map(|((xb, rb), nb)| {
                let mut loss = 0.0;
                let mut g = vec![0.0; d + 1];
                for ((xi, &ri), &ni) in xb.iter().zip(rb).zip(nb) {
                    if ni == 0.0 {
                        continue;
                    }
                    let z = w[d] + xi.iter().zip(w).map(|(a, b)| *a as f64 * b).sum::<f64>();
                    let p = sigmoid(z).clamp(1e-12, 1.0 - 1e-12);
                    loss -= ri * p.ln() + (ni - ri) * (1.0 - p).ln();
                    let e = ni * p - ri;
                    for (gj, xj) in g.iter_mut().zip(xi) {
                        *gj += e * *xj as f64;
                    }
                    g[d] += e;
                }
                (loss, g)
            })
            .collect();
        let mut loss = 0.0;
        let mut g = vec![0.0; d + 1];
        for (l, gb) in parts {
            loss += l;
            g.iter_mut().zip(gb).for_each(|(a, b)| *a += b);
        }
        // A small ridge keeps separable data bounded.
        let ridge = 1e-4 * total;
        loss += 0.5 * ridge * w[..d].iter().map(|v| v * v).sum::<f64>();
        for j in 0..d {
            g[j] += ridge * w[j];
        }
        if let Some(out) = grad {
            out.copy_from_slice(&g);
        }
        loss / total
    };
    let mut g = vec![0.0; d + 1];
    let mut step = 1.0;
    for _ in 0..steps {
        let f0 = loss_grad(w, Some(&mut g));
        g.iter_mut().for_each(|v| *v /= total);
        let gg: f64 = g.iter().map(|v| v * v).sum();
        if gg < 1e-14 {
            break;
        }
        step *= 2.0;
        loop {
            let trial: Vec<f64> = w.iter().zip(&g).map(|(a, b)| a - step * b).collect();
            if loss_grad(&trial, None) <= f0 - 1e-4 * step * gg || step < 1e-12 {
                w.copy_from_slice(&trial);
                break;
            }
            step *= 0.5;
        }
    }
}

/// One EM problem: the cells, the relevance model and (for regression) the documents' features. Its state is one
/// vector — θ by rank, then γ by document (standard EM) or the logistic weights and intercept (regression EM) —
/// so that SQUAREM can extrapolate it.
struct Problem<'a> {
    cells: &'a [Cell],
    ranks: usize,
    docs: usize,
    /// Features by document (regression EM only).
    x: Vec<Vec<f32>>,
    relevance: RelevanceModel,
}

impl Problem<'_> {
    fn gamma(&self, state: &[f64]) -> Vec<f64> {
        let rest = &state[self.ranks..];
        match self.relevance {
            RelevanceModel::PerDocument => rest.to_vec(),
            RelevanceModel::Regression => {
                let dim = rest.len() - 1;
                self.x
                    .par_iter()
                    .map(|xi| {
                        let z = rest[dim]
                            + xi.iter().zip(rest).map(|(a, b)| *a as f64 * b).sum::<f64>();
                        sigmoid(z).clamp(1e-9, 1.0 - 1e-9)
                    })
                    .collect()
            }
        }
    }

    fn log_likelihood(&self, state: &[f64]) -> f64 {
        let gamma = self.gamma(state);
        self.cells
            .iter()
            .map(|c| {
                let p = (state[c.rank] * gamma[c.doc]).clamp(1e-300, 1.0 - 1e-12);
                c.clicks * p.ln() + (c.shown - c.clicks) * (1.0 - p).ln()
            })
            .sum()
    }

    /// Keep a (possibly extrapolated) state inside the parameter space.
    fn project(&self, state: &mut [f64]) {
        for t in &mut state[..self.ranks] {
            *t = t.clamp(1e-9, 1.0);
        }
        if self.relevance == RelevanceModel::PerDocument {
            for g in &mut state[self.ranks..] {
                *g = g.clamp(1e-9, 1.0 - 1e-9);
            }
        }
    }

    /// One EM step.
    fn step(&self, state: &[f64]) -> Vec<f64> {
        let (theta, gamma) = (&state[..self.ranks], self.gamma(state));
        let mut ex = vec![0.0; self.ranks];
        let mut shown_k = vec![0.0; self.ranks];
        let mut rel = vec![0.0; self.docs];
        let mut shown_d = vec![0.0; self.docs];
        for cell in self.cells {
            let (t, g): (f64, f64) = (theta[cell.rank], gamma[cell.doc]);
            let unclicked = cell.shown - cell.clicks;
            let denom = (1.0 - t * g).max(1e-300);
            ex[cell.rank] += cell.clicks + unclicked * t * (1.0 - g) / denom;
            rel[cell.doc] += cell.clicks + unclicked * (1.0 - t) * g / denom;
            shown_k[cell.rank] += cell.shown;
            shown_d[cell.doc] += cell.shown;
        }
        let mut next = state.to_vec();
        for k in 0..self.ranks {
            if shown_k[k] > 0.0 {
                next[k] = (ex[k] / shown_k[k]).clamp(1e-9, 1.0);
            }
        }
        // θ and γ are identified only up to a common scale; fix θ_1 = 1 (moving along that ridge changes no
        // likelihood), so that γ ≤ 1 never binds where the truth does not.
        let t1 = next[0];
        next[..self.ranks]
            .iter_mut()
            .for_each(|t| *t = (*t / t1).min(1.0));
        rel.iter_mut().for_each(|r| *r *= t1);
        match self.relevance {
            RelevanceModel::PerDocument => {
                for d in 0..self.docs {
                    if shown_d[d] > 0.0 {
                        next[self.ranks + d] = (rel[d] / shown_d[d]).clamp(1e-9, 1.0 - 1e-9);
                    }
                }
            }
            RelevanceModel::Regression => {
                fit_logistic(&self.x, &rel, &shown_d, &mut next[self.ranks..], 5);
            }
        }
        next
    }
}

/// EM on cells, accelerated by SQUAREM (Varadhan & Roland 2008: two EM steps give a direction and a step
/// length, the extrapolated point is stabilised by one more EM step, and plain EM is kept whenever the
/// extrapolation would lower the likelihood): θ relative to rank 1, and the EM steps taken.
fn em(
    cells: &[Cell],
    c: &Cells,
    features: Option<&Dataset>,
    s: &EmSettings,
) -> Result<(Vec<f64>, usize)> {
    let x: Vec<Vec<f32>> =
        match (s.relevance, features) {
            (RelevanceModel::Regression, Some(ds)) => c
                .doc_rows
                .iter()
                .map(|r| {
                    let row = ds.row(r.expect("joined"));
                    (0..ds.n_features()).map(|j| row.get(j)).collect()
                })
                .collect(),
            (RelevanceModel::Regression, None) => return Err(DataError::Invalid(
                "regression EM needs the feature file the log's documents join to (`ltr clicks \
                 propensity --features FILE`)"
                    .into(),
            )),
            _ => Vec::new(),
        };
    let p = Problem {
        cells,
        ranks: c.ranks,
        docs: c.docs,
        relevance: s.relevance,
        x,
    };
    let mut state = vec![0.5; c.ranks];
    match s.relevance {
        RelevanceModel::PerDocument => state.extend(std::iter::repeat_n(0.5, c.docs)),
        RelevanceModel::Regression => state.extend(std::iter::repeat_n(
            0.0,
            p.x.first().map_or(0, Vec::len) + 1,
        )),
    }
    let mut steps = 0;
    while steps < s.max_iter {
        let x1 = p.step(&state);
        let x2 = p.step(&x1);
        steps += 2;
        let r: Vec<f64> = x1.iter().zip(&state).map(|(a, b)| a - b).collect();
        let v: Vec<f64> = x2
            .iter()
            .zip(&x1)
            .zip(&r)
            .map(|((a, b), c)| a - b - c)
            .collect();
        let (rr, vv) = (norm(&r), norm(&v));
        let mut next = x2.clone();
        // Regression EM's M-step is itself approximate (a few gradient steps), which extrapolation amplifies:
        // it runs plain EM.
        if vv > 0.0 && p.relevance == RelevanceModel::PerDocument {
            let alpha = (-rr / vv).min(-1.0);
            let mut jump: Vec<f64> = state
                .iter()
                .zip(&r)
                .zip(&v)
                .map(|((x, r), v)| x - 2.0 * alpha * r + alpha * alpha * v)
                .collect();
            p.project(&mut jump);
            let stabilised = p.step(&jump);
            steps += 1;
            if p.log_likelihood(&stabilised) >= p.log_likelihood(&x2) {
                next = stabilised;
            }
        }
        let moved = next[..p.ranks]
            .iter()
            .zip(&state[..p.ranks])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        state = next;
        if moved < s.tol {
            break;
        }
    }
    let t1 = state[0];
    Ok((state[..p.ranks].iter().map(|t| t / t1).collect(), steps))
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// What [`estimate_propensities_em`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct EmEstimate {
    /// p_k/p_1 by rank, with bootstrap intervals (`sessions`: impressions at that rank).
    pub table: Vec<PropensityEstimate>,
    /// EM iterations of the estimate on the whole log.
    pub iterations: usize,
}

/// Relative propensities p_k/p_1 from a click log without interventions, by EM under the position-based model
/// (see the module documentation). `features` is needed for [`RelevanceModel::Regression`].
pub fn estimate_propensities_em(
    log: &[ClickRecord],
    features: Option<&Dataset>,
    settings: &EmSettings,
) -> Result<EmEstimate> {
    em_estimate(&mut by_session(log), features, settings)
}

/// [`estimate_propensities_em`] of the click log at `path` ([`crate::read_click_log`]'s format and checks), read a
/// session at a time: the same estimate, holding each impression as a (document, rank, click) triple instead of a
/// record with two strings.
pub fn estimate_propensities_em_from_log(
    path: &std::path::Path,
    features: Option<&Dataset>,
    settings: &EmSettings,
) -> Result<EmEstimate> {
    em_estimate(
        &mut |each| crate::for_each_click_session(path, each),
        features,
        settings,
    )
}

fn em_estimate(
    sessions: &mut Sessions<'_>,
    features: Option<&Dataset>,
    settings: &EmSettings,
) -> Result<EmEstimate> {
    let positive = |x: f64| x > 0.0 && x.is_finite();
    if settings.max_iter == 0 || !positive(settings.tol) || !positive(settings.z) {
        return Err(DataError::Invalid(
            "EM needs max_iter >= 1, tol > 0 and z > 0".into(),
        ));
    }
    let features = match settings.relevance {
        RelevanceModel::Regression => features,
        RelevanceModel::PerDocument => None,
    };
    let c = cells_of(sessions, features)?;
    let all = aggregate(&c, None);
    if !all.iter().any(|x| x.rank == 0 && x.clicks > 0.0) {
        return Err(DataError::Invalid(
            "no click at rank 1: propensities relative to rank 1 cannot be estimated".into(),
        ));
    }
    let (point, iterations) = em(&all, &c, features, settings)?;
    let replicates: Vec<Vec<f64>> = (0..settings.bootstrap)
        .into_par_iter()
        .map(|b| {
            let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
            rng.set_stream(b as u64);
            let poisson = Poisson::new(1.0).expect("rate 1");
            let w: Vec<f64> = (0..c.sessions.len())
                .map(|_| poisson.sample(&mut rng))
                .collect();
            em(&aggregate(&c, Some(&w)), &c, features, settings).map(|r| r.0)
        })
        .collect::<Result<_>>()?;
    let mut shown = vec![0usize; c.ranks];
    for s in &c.sessions {
        for &(_, k, _) in s {
            shown[k] += 1;
        }
    }
    let table = point
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let (lo, hi) = if replicates.len() >= 2 {
                let vals: Vec<f64> = replicates.iter().map(|r| r[k]).collect();
                let m = vals.iter().sum::<f64>() / vals.len() as f64;
                let sd = (vals.iter().map(|x| (x - m).powi(2)).sum::<f64>()
                    / (vals.len() - 1) as f64)
                    .sqrt();
                ((v - settings.z * sd).max(0.0), v + settings.z * sd)
            } else {
                (v, v)
            };
            PropensityEstimate {
                rank: k as u32 + 1,
                value: v,
                low: lo,
                high: hi,
                sessions: shown[k],
            }
        })
        .collect();
    Ok(EmEstimate { table, iterations })
}
