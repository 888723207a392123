//! Fitting the click models of [`crate::click_models`] to a log: the cascade and DCM by counting (maximum
//! likelihood under their assumptions), PBM, UBM and DBN by expectation-maximisation. Every parameter carries
//! PyClick's prior (one success in two trials) and EM starts from ½ everywhere, so a fit is PyClick's to rounding
//! (see the module documentation of [`crate::click_models`] for the few places where it is not).

use ltr_data::{DataError, Result};

use crate::click_models::{
    dbn_forward, ubm_exam, ClickModelKind, ClickModelParams, FittedClickModel, SessionLog,
    SessionView, PROB_MIN,
};

/// Settings of [`fit_click_model`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClickModelFit {
    /// The family.
    pub kind: ClickModelKind,
    /// EM iterations (PBM, UBM, DBN; PyClick's default 50).
    pub iterations: usize,
    /// DCM by EM on its exact likelihood instead of PyClick's counting, which takes every last click to have
    /// ended the session (Guo, Liu & Wang's simplification); the user may have gone on and found nothing, with the
    /// posterior λ_l ∏_{j>l}(1 − α_j) / (1 − λ_l + λ_l ∏_{j>l}(1 − α_j)).
    pub dcm_by_em: bool,
}

impl ClickModelFit {
    /// A fit of `kind` with PyClick's 50 EM iterations.
    pub fn new(kind: ClickModelKind) -> Self {
        Self {
            kind,
            iterations: 50,
            dcm_by_em: false,
        }
    }
}

/// Sufficient statistics of one parameter: successes (expected) over trials, starting from PyClick's 1 / 2.
#[derive(Debug, Clone, Copy)]
struct Ratio {
    num: f64,
    den: f64,
}

impl Default for Ratio {
    fn default() -> Self {
        Ratio { num: 1.0, den: 2.0 }
    }
}

impl Ratio {
    fn add(&mut self, num: f64, den: f64) {
        self.num += num;
        self.den += den;
    }
    /// The maximum-likelihood value.
    fn value(self) -> f64 {
        self.num / self.den
    }
    /// The EM value, capped below 1 (PyClick's `ParamEM`).
    fn em_value(self) -> f64 {
        (self.num / self.den).min(1.0 - PROB_MIN)
    }
}

/// Fit a click model to a log.
///
/// ```
/// use ltr_clicks::{fit_click_model, ClickModelFit, ClickModelKind, ClickRecord, SessionLog};
///
/// let rec = |session, docid: &str, rank, clicked| ClickRecord {
///     session, qid: "q".into(), docid: docid.into(), rank, clicked, propensity: None, production_rank: None,
/// };
/// let log = SessionLog::from_records(&[rec(1, "a", 1, true), rec(1, "b", 2, false), rec(2, "a", 1, false),
///     rec(2, "b", 2, true)]);
/// let cascade = fit_click_model(&log, &ClickModelFit::new(ClickModelKind::Cascade)).unwrap();
/// // Attractiveness of `a`: (1 + one click) / (2 + two views), with PyClick's prior.
/// let ltr_clicks::ClickModelParams::Cascade { attr } = &cascade.params else { unreachable!() };
/// assert_eq!(attr[0], 0.5);
/// // `b` was seen once before a click (session 2): (1 + 1) / (2 + 1).
/// assert!((attr[1] - 2.0 / 3.0).abs() < 1e-12);
/// ```
pub fn fit_click_model(log: &SessionLog, fit: &ClickModelFit) -> Result<FittedClickModel> {
    if log.n_sessions() == 0 {
        return Err(DataError::Invalid(
            "no sessions to fit a click model to".into(),
        ));
    }
    let n_pairs = log.n_pairs();
    let ranks = log.max_len();
    let pairs: Vec<(String, String)> = (0..n_pairs)
        .map(|i| {
            let (q, d) = log.pair(i);
            (q.to_string(), d.to_string())
        })
        .collect();
    let (params, iterations) = match fit.kind {
        ClickModelKind::Cascade => {
            let mut attr = vec![Ratio::default(); n_pairs];
            for s in 0..log.n_sessions() {
                let (docs, clicks) = log.session(s);
                for (&d, &c) in docs.iter().zip(clicks) {
                    attr[d as usize].add(c as u8 as f64, 1.0);
                    if c {
                        break;
                    }
                }
            }
            let attr = attr.into_iter().map(Ratio::value).collect();
            (ClickModelParams::Cascade { attr }, 0)
        }
        ClickModelKind::Dcm if fit.dcm_by_em => {
            let mut attr = vec![0.5; n_pairs];
            let mut cont = vec![0.5; ranks];
            for _ in 0..fit.iterations {
                let mut new_attr = vec![Ratio::default(); n_pairs];
                let mut new_cont = vec![Ratio::default(); ranks];
                for s in 0..log.n_sessions() {
                    let (docs, clicks) = log.session(s);
                    let Some(last) = clicks.iter().rposition(|&c| c) else {
                        // No click: the cascade read every rank and found nothing attractive.
                        for &d in docs {
                            new_attr[d as usize].add(0.0, 1.0);
                        }
                        continue;
                    };
                    let none_below: f64 = docs[last + 1..]
                        .iter()
                        .map(|&d| 1.0 - attr[d as usize])
                        .product();
                    let lambda = cont[last];
                    // P(the user went on after the last click | the clicks).
                    let went_on = lambda * none_below / (1.0 - lambda + lambda * none_below);
                    for (r, (&d, &c)) in docs.iter().zip(clicks).enumerate() {
                        if r <= last {
                            new_attr[d as usize].add(c as u8 as f64, 1.0);
                            if c {
                                let num = if r == last { went_on } else { 1.0 };
                                new_cont[r].add(num, 1.0);
                            }
                        } else {
                            // Examined (went on) and not attracted, or not examined: attracted with α.
                            new_attr[d as usize].add((1.0 - went_on) * attr[d as usize], 1.0);
                        }
                    }
                }
                attr = new_attr.into_iter().map(Ratio::em_value).collect();
                cont = new_cont.into_iter().map(Ratio::em_value).collect();
            }
            (ClickModelParams::Dcm { attr, cont }, fit.iterations)
        }
        ClickModelKind::Dcm => {
            let mut attr = vec![Ratio::default(); n_pairs];
            let mut cont = vec![Ratio::default(); ranks];
            for s in 0..log.n_sessions() {
                let (docs, clicks) = log.session(s);
                let last = clicks.iter().rposition(|&c| c);
                let through = last.unwrap_or(docs.len() - 1);
                for r in 0..=through {
                    attr[docs[r] as usize].add(clicks[r] as u8 as f64, 1.0);
                    if clicks[r] {
                        cont[r].add((Some(r) != last) as u8 as f64, 1.0);
                    }
                }
            }
            let attr = attr.into_iter().map(Ratio::value).collect();
            let cont = cont.into_iter().map(Ratio::value).collect();
            (ClickModelParams::Dcm { attr, cont }, 0)
        }
        ClickModelKind::Pbm => {
            let mut params = ClickModelParams::Pbm {
                attr: vec![0.5; n_pairs],
                exam: vec![0.5; ranks],
            };
            for _ in 0..fit.iterations {
                let ClickModelParams::Pbm { attr, exam } = &params else {
                    unreachable!()
                };
                let mut new_attr = vec![Ratio::default(); n_pairs];
                let mut new_exam = vec![Ratio::default(); ranks];
                for s in 0..log.n_sessions() {
                    let (docs, clicks) = log.session(s);
                    for (r, (&d, &c)) in docs.iter().zip(clicks).enumerate() {
                        let (a, e) = (attr[d as usize], exam[r]);
                        if c {
                            new_attr[d as usize].add(1.0, 1.0);
                            new_exam[r].add(1.0, 1.0);
                        } else {
                            let miss = 1.0 - e * a;
                            new_attr[d as usize].add((1.0 - e) * a / miss, 1.0);
                            new_exam[r].add((1.0 - a) * e / miss, 1.0);
                        }
                    }
                }
                params = ClickModelParams::Pbm {
                    attr: new_attr.into_iter().map(Ratio::em_value).collect(),
                    exam: new_exam.into_iter().map(Ratio::em_value).collect(),
                };
            }
            (params, fit.iterations)
        }
        ClickModelKind::Ubm => {
            let mut attr = vec![0.5; n_pairs];
            let mut exam: Vec<Vec<f64>> = (0..ranks).map(|r| vec![0.5; r + 1]).collect();
            for _ in 0..fit.iterations {
                let mut new_attr = vec![Ratio::default(); n_pairs];
                let mut new_exam: Vec<Vec<Ratio>> =
                    (0..ranks).map(|r| vec![Ratio::default(); r + 1]).collect();
                for s in 0..log.n_sessions() {
                    let (docs, clicks) = log.session(s);
                    let mut prev = 0;
                    for (r, (&d, &c)) in docs.iter().zip(clicks).enumerate() {
                        let (a, e) = (attr[d as usize], ubm_exam(&exam, r, prev));
                        if c {
                            new_attr[d as usize].add(1.0, 1.0);
                            new_exam[r][prev].add(1.0, 1.0);
                            prev = r + 1;
                        } else {
                            let miss = 1.0 - e * a;
                            new_attr[d as usize].add((1.0 - e) * a / miss, 1.0);
                            new_exam[r][prev].add((1.0 - a) * e / miss, 1.0);
                        }
                    }
                }
                attr = new_attr.into_iter().map(Ratio::em_value).collect();
                exam = new_exam
                    .into_iter()
                    .map(|row| row.into_iter().map(Ratio::em_value).collect())
                    .collect();
            }
            (ClickModelParams::Ubm { attr, exam }, fit.iterations)
        }
        ClickModelKind::Dbn => {
            let mut attr = vec![0.5; n_pairs];
            let mut sat = vec![0.5; n_pairs];
            let mut gamma = 0.5;
            for _ in 0..fit.iterations {
                let mut new_attr = vec![Ratio::default(); n_pairs];
                let mut new_sat = vec![Ratio::default(); n_pairs];
                let mut new_gamma = Ratio::default();
                for s in 0..log.n_sessions() {
                    let (docs, clicks) = log.session(s);
                    let v = SessionView {
                        attr: docs.iter().map(|&d| attr[d as usize]).collect(),
                        sat: docs.iter().map(|&d| sat[d as usize]).collect(),
                        clicks,
                    };
                    dbn_session(&v, gamma, |r, a, s_, g| {
                        let d = docs[r] as usize;
                        new_attr[d].add(a.0, a.1);
                        new_sat[d].add(s_.0, s_.1);
                        new_gamma.add(g.0, g.1);
                    });
                }
                attr = new_attr.into_iter().map(Ratio::em_value).collect();
                sat = new_sat.into_iter().map(Ratio::em_value).collect();
                gamma = new_gamma.em_value();
            }
            (ClickModelParams::Dbn { attr, sat, gamma }, fit.iterations)
        }
    };
    Ok(FittedClickModel {
        pairs,
        params,
        iterations,
    })
}

/// The DBN E-step on one session: for each rank r, the expected (successes, trials) of its attractiveness, its
/// satisfaction and the persistence, given the clicks.
fn dbn_session(
    v: &SessionView<'_>,
    gamma: f64,
    mut out: impl FnMut(usize, (f64, f64), (f64, f64), (f64, f64)),
) {
    let n = v.attr.len();
    let (_, eps) = dbn_forward(v, gamma);
    let last = v.clicks.iter().rposition(|&c| c);
    // car[r] = P(a click at r or below | E_r = 1).
    let mut car = vec![0.0; n + 1];
    // tail[r] = P(C_≥r | E_r = 1); quiet[r] = whether no click at r or below.
    let mut tail = vec![1.0; n + 1];
    let mut quiet = vec![true; n + 1];
    for r in (0..n).rev() {
        let (a, s) = (v.attr[r], v.sat[r]);
        car[r] = a + (1.0 - a) * gamma * car[r + 1];
        quiet[r] = quiet[r + 1] && !v.clicks[r];
        let z = if quiet[r + 1] { 1.0 } else { 0.0 };
        let go_on = gamma * tail[r + 1] + (1.0 - gamma) * z;
        tail[r] = if v.clicks[r] {
            a * (s * z + (1.0 - s) * go_on)
        } else {
            (1.0 - a) * go_on
        };
    }
    for r in 0..n {
        let (a, s, c) = (v.attr[r], v.sat[r], v.clicks[r]);
        let e = eps[r];
        let z = if quiet[r + 1] { 1.0 } else { 0.0 };
        // Attractiveness: a click says attracted; an unclicked rank above the last click was examined (not
        // attracted); below it, attracted only if not examined.
        let attr_num = if c {
            1.0
        } else if last.is_none_or(|l| r > l) {
            (1.0 - e) * a / (1.0 - e * car[r])
        } else {
            0.0
        };
        // Satisfaction, given a click: only the last click can have satisfied.
        let sat_stat = if c {
            let num = if Some(r) == last {
                s / (1.0 - (1.0 - s) * gamma * car[r + 1])
            } else {
                0.0
            };
            (num, 1.0)
        } else {
            (0.0, 0.0)
        };
        // Persistence: P(E_r = 1, S_r = 0, E_{r+1} = z | C) for z = 1, 0, normalised over every (E_r, S_r, E_{r+1}).
        let read = if c { a * (1.0 - s) } else { 1.0 - a };
        let f101 = e * read * gamma * tail[r + 1];
        let f100 = e * read * (1.0 - gamma) * z;
        let other = if c { e * a * s * z } else { (1.0 - e) * z };
        let total = f101 + f100 + other;
        let gamma_stat = if total > 0.0 {
            (f101 / total, (f101 + f100) / total)
        } else {
            (0.0, 0.0)
        };
        out(r, (attr_num, 1.0), sat_stat, gamma_stat);
    }
}
