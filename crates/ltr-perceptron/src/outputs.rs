//! What a perceptron run returns: the last, pocket, average or voted hypothesis, or a committee (seed 000).

use ltr_core::{Aggregation, LinearModel, Model, RankAggregate};

use crate::engine::Observer;

/// The pocket perceptron: the hypothesis with the longest run of correctly ranked pairs (ties keep the older).
#[derive(Debug, Clone, Default)]
pub struct Pocket {
    best: Option<(Vec<f64>, u64)>,
}

impl Pocket {
    fn offer(best: &mut Option<(Vec<f64>, u64)>, w: &[f64], c: u64) {
        if best.as_ref().is_none_or(|(_, bc)| c > *bc) {
            *best = Some((w.to_vec(), c));
        }
    }
    /// The pocket model if training stopped now with live hypothesis (w, c).
    pub fn snapshot(&self, w: &[f64], c: u64) -> LinearModel {
        let mut b = self.best.clone();
        Self::offer(&mut b, w, c);
        LinearModel::new(b.map_or_else(|| w.to_vec(), |(w, _)| w))
    }
}

/// The average perceptron: Σ c_i w^i / Σ c_i, accumulated in hypothesis order.
#[derive(Debug, Clone, Default)]
pub struct Average {
    acc: Vec<f64>,
    total: u64,
}

impl Average {
    fn add(acc: &mut Vec<f64>, total: &mut u64, w: &[f64], c: u64) {
        if acc.is_empty() {
            acc.resize(w.len(), 0.0);
        }
        if c > 0 {
            for (a, x) in acc.iter_mut().zip(w) {
                *a += c as f64 * x;
            }
            *total += c;
        }
    }
    /// The average model if training stopped now.
    pub fn snapshot(&self, w: &[f64], c: u64) -> LinearModel {
        let (mut acc, mut total) = (self.acc.clone(), self.total);
        Self::add(&mut acc, &mut total, w, c);
        if total == 0 {
            return LinearModel::new(w.to_vec());
        }
        LinearModel::new(acc.iter().map(|a| a / total as f64).collect())
    }
}

/// The voted perceptron (Freund & Schapire): every hypothesis with c_i > 0 votes with weight c_i; selective voting
/// drops hypotheses with index below `from`. Rankings are combined by weighted BordaCount (each document earns, from
/// each voter, c_i per document it beats), since pairwise majority votes need not be transitive.
#[derive(Debug, Clone, Default)]
pub struct Voted {
    /// Hypotheses with index < from do not vote.
    pub from: usize,
    members: Vec<(Vec<f64>, u64)>,
}

impl Voted {
    /// A voter collection starting at hypothesis `from`.
    pub fn new(from: usize) -> Self {
        Self {
            from,
            members: Vec::new(),
        }
    }
    /// The voted model if training stopped now.
    pub fn snapshot(&self, index: usize, w: &[f64], c: u64) -> Model {
        let mut members: Vec<LinearModel> = self
            .members
            .iter()
            .map(|(w, _)| LinearModel::new(w.clone()))
            .collect();
        let mut weights: Vec<f64> = self.members.iter().map(|(_, c)| *c as f64).collect();
        if c > 0 && index >= self.from {
            members.push(LinearModel::new(w.to_vec()));
            weights.push(c as f64);
        }
        if members.is_empty() {
            return Model::Linear(LinearModel::new(w.to_vec()));
        }
        Model::Aggregate(RankAggregate {
            members,
            weights,
            method: Aggregation::Borda,
        })
    }
    /// Number of voters so far.
    pub fn len(&self) -> usize {
        self.members.len()
    }
    /// True when nobody voted yet.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// The committee K of seed 000 Table 2: the `size` hypotheses with the largest success counts. A retiring
/// hypothesis joins when |K| < size or its count beats the smallest in K (strict, so ties keep the older member);
/// then the member with the smallest count (the newest among equals) leaves.
#[derive(Debug, Clone)]
pub struct Committee {
    size: usize,
    /// (weights, success count, hypothesis index); storage order is arbitrary (evicted slots are reused).
    members: Vec<(Vec<f64>, u64, usize)>,
    /// Smallest success count in the committee (valid when non-empty).
    min_c: u64,
}

impl Committee {
    /// An empty committee of at most `size` members.
    pub fn new(size: usize) -> Self {
        Self {
            size: size.max(1),
            members: Vec::new(),
            min_c: 0,
        }
    }
    pub(crate) fn offer(&mut self, w: &[f64], c: u64, index: usize) {
        if self.members.len() < self.size {
            self.members.push((w.to_vec(), c, index));
        } else if c > self.min_c {
            // Evict the member with the smallest count; among equals the newest (the largest hypothesis index),
            // so ties keep the older member. Its buffer is reused: no allocation once the committee is full.
            let slot = (0..self.members.len())
                .filter(|&k| self.members[k].1 == self.min_c)
                .max_by_key(|&k| self.members[k].2)
                .expect("a member has the minimum");
            let m = &mut self.members[slot];
            m.0.copy_from_slice(w);
            m.1 = c;
            m.2 = index;
        } else {
            return;
        }
        self.min_c = self.members.iter().map(|m| m.1).min().expect("non-empty");
    }
    /// The members (weights, success count) if training stopped now, optionally offering the live hypothesis,
    /// in hypothesis order.
    pub fn snapshot(
        &self,
        index: usize,
        w: &[f64],
        c: u64,
        offer_final: bool,
    ) -> Vec<(Vec<f64>, u64)> {
        self.snapshot_indexed(index, w, c, offer_final)
            .into_iter()
            .map(|(_, w, c)| (w, c))
            .collect()
    }
    /// As [`Committee::snapshot`], with each member's hypothesis index (a hypothesis never changes once made, so the
    /// index identifies its weights).
    pub fn snapshot_indexed(
        &self,
        index: usize,
        w: &[f64],
        c: u64,
        offer_final: bool,
    ) -> Vec<(usize, Vec<f64>, u64)> {
        let mut k = self.clone();
        if offer_final {
            k.offer(w, c, index);
        }
        let mut m = k.members;
        m.sort_by_key(|x| x.2);
        m.into_iter().map(|(w, c, i)| (i, w, c)).collect()
    }
}

/// Collects any subset of the outputs during one run.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// Pocket, if recorded.
    pub pocket: Option<Pocket>,
    /// Average, if recorded.
    pub average: Option<Average>,
    /// Voted, if recorded.
    pub voted: Option<Voted>,
    /// Committee, if recorded.
    pub committee: Option<Committee>,
}

impl Observer for Recorder {
    fn retire(&mut self, index: usize, w: &[f64], c: u64) {
        if let Some(p) = &mut self.pocket {
            Pocket::offer(&mut p.best, w, c);
        }
        if let Some(a) = &mut self.average {
            Average::add(&mut a.acc, &mut a.total, w, c);
        }
        if let Some(v) = &mut self.voted {
            if c > 0 && index >= v.from {
                v.members.push((w.to_vec(), c));
            }
        }
        if let Some(k) = &mut self.committee {
            k.offer(w, c, index);
        }
    }
}

/// Σ a_k w_k / Σ a_k, accumulated in member order (a single member is returned unchanged).
pub fn weighted_average(
    members: &[Vec<f64>],
    weights: &[f64],
    normalize_members: bool,
) -> LinearModel {
    let d = members.first().map_or(0, Vec::len);
    if members.len() == 1 && !normalize_members {
        return LinearModel::new(members[0].clone());
    }
    let mut acc = vec![0.0; d];
    let mut total = 0.0;
    for (w, &a) in members.iter().zip(weights) {
        let scale = if normalize_members {
            let n = w.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > 0.0 {
                1.0 / n
            } else {
                0.0
            }
        } else {
            1.0
        };
        for (s, x) in acc.iter_mut().zip(w) {
            *s += a * (x * scale);
        }
        total += a;
    }
    if total > 0.0 {
        acc.iter_mut().for_each(|x| *x /= total);
    }
    LinearModel::new(acc)
}
