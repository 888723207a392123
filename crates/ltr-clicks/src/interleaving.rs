//! Interleaving: comparing two rankers online by one merged list per session and the clicks on it — team-draft
//! (Radlinski, Kurup & Joachims, CIKM 2008), balanced (Joachims 2003) and probabilistic interleaving (Hofmann,
//! Whiteson & de Rijke, CIKM 2011, credit by the observed assignment) — against a simulated position-based or
//! cascade user.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// An interleaving method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interleaving {
    /// Team-draft: the team with fewer picks (a coin on ties) adds its best document not yet shown; a click
    /// credits the team that contributed the document.
    TeamDraft,
    /// Balanced: A's and B's lists are merged from the top, a coin deciding who leads; a session's credit compares
    /// the clicks in A's and B's top k, k the smallest depth at which either list holds the lowest click.
    Balanced,
    /// Probabilistic: each slot picks a ranker by a coin and a document from its softmax over ranks, P ∝ r^−τ
    /// (τ = 3) over the documents not yet shown; a click credits the ranker that picked the document.
    Probabilistic,
}

/// The simulated user: clicks on a displayed list of grades.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InterleavingUser {
    /// Cascade (stop after the first click) instead of position-based.
    pub cascade: bool,
    /// Position bias: rank r is examined with (1/r)^η (position-based).
    pub eta: f64,
    /// Click probability of an examined document of grade 0 (ε₋).
    pub eps_minus: f64,
    /// Click probability of an examined document of the top grade (ε₊).
    pub eps_plus: f64,
    /// The top grade.
    pub max_grade: f64,
}

impl InterleavingUser {
    /// A position-based (or cascade) user with the simulator's default click noise: ε₋ = 0.1, ε₊ = 1, the top grade
    /// 0 until [`interleave_judged`] reads it from the data.
    pub fn new(cascade: bool, eta: f64) -> Self {
        Self {
            cascade,
            eta,
            eps_minus: 0.1,
            eps_plus: 1.0,
            max_grade: 0.0,
        }
    }

    fn click_prob(&self, grade: f64) -> f64 {
        self.eps_minus
            + (self.eps_plus - self.eps_minus) * (grade.max(0.0).exp2() - 1.0)
                / (self.max_grade.max(1.0).exp2() - 1.0)
    }
}

/// Win, tie and loss counts of ranker A against B.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Sessions where A got more credit.
    pub wins: u64,
    /// Sessions with equal credit (no clicks included).
    pub ties: u64,
    /// Sessions where B got more credit.
    pub losses: u64,
}

/// One session: merge `a` and `b` (document indices, best first) into `k` displayed documents, draw the user's
/// clicks on `grades[doc]`, and return A's credit minus B's (its sign is the session's outcome).
pub fn interleave_session(
    method: Interleaving,
    a: &[usize],
    b: &[usize],
    k: usize,
    grades: &[f64],
    user: &InterleavingUser,
    rng: &mut impl Rng,
) -> i64 {
    let k = k.min(a.len().max(b.len()));
    // The displayed list, and for each slot the team that placed it (true: A).
    let mut shown: Vec<usize> = Vec::with_capacity(k);
    let mut team: Vec<bool> = Vec::with_capacity(k);
    let used = |shown: &[usize], d: usize| shown.contains(&d);
    match method {
        Interleaving::TeamDraft => {
            let (mut na, mut nb) = (0, 0);
            while shown.len() < k {
                let a_turn = na < nb || (na == nb && rng.random::<bool>());
                let (list, other) = if a_turn { (a, b) } else { (b, a) };
                let pick = list
                    .iter()
                    .chain(other)
                    .copied()
                    .find(|&d| !used(&shown, d));
                let Some(d) = pick else { break };
                shown.push(d);
                team.push(a_turn);
                if a_turn {
                    na += 1;
                } else {
                    nb += 1;
                }
            }
        }
        Interleaving::Balanced => {
            let a_first = rng.random::<bool>();
            let (mut ia, mut ib) = (0, 0);
            while shown.len() < k && (ia < a.len() || ib < b.len()) {
                let a_turn = ib >= b.len() || (ia < a.len() && (ia < ib || (ia == ib && a_first)));
                let d = if a_turn { a[ia] } else { b[ib] };
                if a_turn {
                    ia += 1;
                } else {
                    ib += 1;
                }
                if !used(&shown, d) {
                    shown.push(d);
                    team.push(a_turn);
                }
            }
        }
        Interleaving::Probabilistic => {
            while shown.len() < k {
                let a_turn = rng.random::<bool>();
                let list = if a_turn { a } else { b };
                let free: Vec<(usize, f64)> = list
                    .iter()
                    .enumerate()
                    .filter(|(_, &d)| !used(&shown, d))
                    .map(|(r, &d)| (d, ((r + 1) as f64).powi(-3)))
                    .collect();
                if free.is_empty() {
                    break;
                }
                let total: f64 = free.iter().map(|x| x.1).sum();
                let mut u = rng.random::<f64>() * total;
                let mut pick = free[free.len() - 1].0;
                for &(d, w) in &free {
                    if u < w {
                        pick = d;
                        break;
                    }
                    u -= w;
                }
                shown.push(pick);
                team.push(a_turn);
            }
        }
    }
    // The user's clicks.
    let mut clicks = vec![false; shown.len()];
    for (i, &d) in shown.iter().enumerate() {
        let examined = user.cascade || rng.random::<f64>() < (1.0 / (i + 1) as f64).powf(user.eta);
        if examined && rng.random::<f64>() < user.click_prob(grades[d]) {
            clicks[i] = true;
            if user.cascade {
                break;
            }
        }
    }
    match method {
        Interleaving::TeamDraft | Interleaving::Probabilistic => clicks
            .iter()
            .zip(&team)
            .filter(|(c, _)| **c)
            .map(|(_, &t)| if t { 1 } else { -1 })
            .sum(),
        Interleaving::Balanced => {
            let Some(lowest) = clicks.iter().rposition(|&c| c) else {
                return 0;
            };
            let d = shown[lowest];
            let rank_in = |l: &[usize]| l.iter().position(|&x| x == d).unwrap_or(usize::MAX);
            let depth = rank_in(a).min(rank_in(b)) + 1;
            let count = |l: &[usize]| {
                let top = &l[..depth.min(l.len())];
                shown
                    .iter()
                    .zip(&clicks)
                    .filter(|(d, c)| **c && top.contains(d))
                    .count() as i64
            };
            count(a) - count(b)
        }
    }
}

/// `sessions` sessions over queries drawn uniformly: query q's documents have grades `grades[q]`, A's and B's
/// rankings `a[q]` and `b[q]` (document indices, best first); `k` displayed. Session s uses its own random stream
/// (the seed, stream s).
#[allow(clippy::too_many_arguments)]
pub fn interleave(
    method: Interleaving,
    a: &[Vec<usize>],
    b: &[Vec<usize>],
    grades: &[Vec<f64>],
    k: usize,
    user: &InterleavingUser,
    sessions: u64,
    seed: u64,
) -> Outcome {
    let mut out = Outcome::default();
    for s in 0..sessions {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(s);
        let q = rng.random_range(0..grades.len());
        match interleave_session(method, &a[q], &b[q], k, &grades[q], user, &mut rng).signum() {
            1 => out.wins += 1,
            -1 => out.losses += 1,
            _ => out.ties += 1,
        }
    }
    out
}

impl Interleaving {
    /// The method of a command-line name: `team-draft`, `balanced` or `probabilistic`.
    pub fn parse(name: &str) -> ltr_data::Result<Self> {
        match name {
            "team-draft" => Ok(Self::TeamDraft),
            "balanced" => Ok(Self::Balanced),
            "probabilistic" => Ok(Self::Probabilistic),
            other => Err(ltr_data::DataError::Invalid(format!(
                "unknown interleaving `{other}` (expected team-draft, balanced or probabilistic)"
            ))),
        }
    }
}

/// [`interleave`] on judged data: rankers A and B given as one score per row of `ds` (each query's documents by
/// descending score, ties in file order), the user's grades its labels (the top grade: the data's highest).
#[allow(clippy::too_many_arguments)]
pub fn interleave_judged(
    method: Interleaving,
    ds: &ltr_data::Dataset,
    a: &[f64],
    b: &[f64],
    k: usize,
    user: &InterleavingUser,
    sessions: u64,
    seed: u64,
) -> Outcome {
    let rank = |s: &[f64]| -> Vec<Vec<usize>> {
        ds.queries()
            .map(|q| {
                let r = q.rows();
                let mut o: Vec<usize> = (0..q.len()).collect();
                o.sort_by(|&x, &y| s[r.start + y].total_cmp(&s[r.start + x]).then(x.cmp(&y)));
                o
            })
            .collect()
    };
    let grades: Vec<Vec<f64>> = ds
        .queries()
        .map(|q| q.labels().iter().map(|&g| g as f64).collect())
        .collect();
    let user = InterleavingUser {
        max_grade: ds.labels().iter().fold(0.0f32, |m, &g| m.max(g)) as f64,
        ..*user
    };
    interleave(
        method,
        &rank(a),
        &rank(b),
        &grades,
        k,
        &user,
        sessions,
        seed,
    )
}
