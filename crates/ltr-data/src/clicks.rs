//! Click logs: the documented TSV format (read strictly, written atomically) and click simulation from judged
//! data under the position-based and cascade models (Joachims, Swaminathan & Schnabel, WSDM 2017; ULTRA's curve).
//!
//! ## Format
//!
//! Tab-separated, one displayed document per line, with the header line [`CLICK_LOG_HEADER`]: the columns
//! `session`, `qid`, `docid`, `rank`, `clicked`, `propensity`, separated by tabs.
//!
//! `session` is an unsigned integer; a session's lines are contiguous, its ranks are 1, 2, … n in order and its
//! qid is one. `clicked` is 0 or 1. `propensity` (the examination probability of the rank, in (0, 1]) is optional:
//! the column may be absent from the header, or a line may leave it empty. Lines starting with `#` are comments.
//! Documents are joined to a feature file by (qid, docid).

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::error::{DataError, Result};
use crate::Dataset;

/// One displayed document of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct ClickRecord {
    /// Session number.
    pub session: u64,
    /// Query id.
    pub qid: String,
    /// Document id.
    pub docid: String,
    /// Displayed rank (1-based).
    pub rank: u32,
    /// Whether the document was clicked.
    pub clicked: bool,
    /// Examination probability of the rank, when known.
    pub propensity: Option<f64>,
}

/// The header line of the format.
pub const CLICK_LOG_HEADER: &str = "session\tqid\tdocid\trank\tclicked\tpropensity";

fn parse_err(path: &Path, line: usize, token: &str, problem: &str, expected: &str) -> DataError {
    DataError::Parse {
        path: path.to_path_buf(),
        line,
        token: token.chars().take(40).collect(),
        problem: problem.into(),
        expected: expected.into(),
    }
}

/// Read a click log, checking every line and every session (see the module documentation for the rules).
pub fn read_click_log(path: &Path) -> Result<Vec<ClickRecord>> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let Some((hline, header)) = lines.next() else {
        return Err(parse_err(path, 1, "", "empty click log", CLICK_LOG_HEADER));
    };
    let columns: Vec<&str> = header.split('\t').collect();
    let with_propensity = match columns.as_slice() {
        ["session", "qid", "docid", "rank", "clicked"] => false,
        ["session", "qid", "docid", "rank", "clicked", "propensity"] => true,
        _ => {
            return Err(parse_err(
                path,
                hline,
                header,
                "not the click-log header",
                CLICK_LOG_HEADER,
            ))
        }
    };
    let mut out: Vec<ClickRecord> = Vec::new();
    let mut seen_sessions = std::collections::HashMap::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let want = if with_propensity { 6 } else { 5 };
        if f.len() != want {
            return Err(parse_err(
                path,
                n,
                line,
                &format!("{} tab-separated fields", f.len()),
                &format!("{want} fields as in the header"),
            ));
        }
        let session: u64 = f[0]
            .parse()
            .map_err(|_| parse_err(path, n, f[0], "bad session", "an unsigned integer"))?;
        if f[1].is_empty() || f[2].is_empty() {
            return Err(parse_err(
                path,
                n,
                line,
                "empty qid or docid",
                "non-empty ids",
            ));
        }
        let rank: u32 = f[3]
            .parse()
            .ok()
            .filter(|&r| r >= 1)
            .ok_or_else(|| parse_err(path, n, f[3], "bad rank", "an integer >= 1"))?;
        let clicked = match f[4] {
            "0" => false,
            "1" => true,
            other => return Err(parse_err(path, n, other, "bad click", "0 or 1")),
        };
        let propensity = match f.get(5) {
            None | Some(&"") => None,
            Some(p) => Some(
                p.parse::<f64>()
                    .ok()
                    .filter(|v| *v > 0.0 && *v <= 1.0)
                    .ok_or_else(|| parse_err(path, n, p, "bad propensity", "a number in (0, 1]"))?,
            ),
        };
        match out.last() {
            Some(prev) if prev.session == session => {
                if prev.qid != f[1] {
                    return Err(parse_err(
                        path,
                        n,
                        f[1],
                        &format!("session {session} changes query (was `{}`)", prev.qid),
                        "one qid per session",
                    ));
                }
                if rank != prev.rank + 1 {
                    return Err(parse_err(
                        path,
                        n,
                        f[3],
                        &format!("rank after rank {} of session {session}", prev.rank),
                        &format!("rank {}", prev.rank + 1),
                    ));
                }
            }
            _ => {
                if let Some(first) = seen_sessions.insert(session, n) {
                    return Err(parse_err(
                        path,
                        n,
                        f[0],
                        &format!("session {session} reappears (it started at line {first})"),
                        "each session's lines together",
                    ));
                }
                if rank != 1 {
                    return Err(parse_err(
                        path,
                        n,
                        f[3],
                        "a session starts below rank 1",
                        "rank 1",
                    ));
                }
            }
        }
        out.push(ClickRecord {
            session,
            qid: f[1].to_string(),
            docid: f[2].to_string(),
            rank,
            clicked,
            propensity,
        });
    }
    Ok(out)
}

/// Write a click log (with the propensity column), atomically.
pub fn write_click_log(path: &Path, records: &[ClickRecord]) -> Result<()> {
    crate::write_atomic(path, |w| {
        writeln!(w, "{CLICK_LOG_HEADER}")?;
        for r in records {
            let p = r.propensity.map(|p| p.to_string()).unwrap_or_default();
            writeln!(
                w,
                "{}\t{}\t{}\t{}\t{}\t{p}",
                r.session, r.qid, r.docid, r.rank, r.clicked as u8
            )?;
        }
        Ok(())
    })
}

/// How examination falls with rank in the position-based model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Examination {
    /// (1/rank)^η (Joachims et al. 2017).
    Inverse,
    /// ULTRA's measured curve [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]^η (its last value below
    /// rank 10).
    Ultra,
}

/// ULTRA's examination probabilities for ranks 1–10.
pub const ULTRA_CURVE: [f64; 10] = [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06];

/// The user model of a simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClickModel {
    /// Position-based: a document is examined with the probability of its rank, independently of the others,
    /// and clicked when examined with the probability of its grade.
    PositionBased(Examination),
    /// Cascade: the user reads from the top, clicks with the probability of the grade and stops after a click.
    Cascade,
}

/// A click simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct ClickSimulation {
    /// The user model.
    pub model: ClickModel,
    /// Severity of position bias η (the examination curve is raised to it).
    pub eta: f64,
    /// Documents displayed per session (the production ranking's top).
    pub top: usize,
    /// Click probability of an examined non-relevant document (ε₋, noise).
    pub eps_minus: f64,
    /// Click probability of an examined document of the highest grade (ε₊); grades between get
    /// ε₋ + (ε₊ − ε₋)·(2^g − 1)/(2^max − 1), as ULTRA's.
    pub eps_plus: f64,
    /// Sessions to sample (queries drawn uniformly with replacement).
    pub sessions: u64,
    /// Seed.
    pub seed: u64,
}

impl Default for ClickSimulation {
    fn default() -> Self {
        Self {
            model: ClickModel::PositionBased(Examination::Inverse),
            eta: 1.0,
            top: 10,
            eps_minus: 0.1,
            eps_plus: 1.0,
            sessions: 10_000,
            seed: 1,
        }
    }
}

impl ClickSimulation {
    /// Examination probability of a (1-based) rank under the position-based model.
    pub fn examination(&self, rank: usize) -> f64 {
        let base = match self.model {
            ClickModel::PositionBased(Examination::Ultra) => {
                ULTRA_CURVE[(rank - 1).min(ULTRA_CURVE.len() - 1)]
            }
            _ => 1.0 / rank as f64,
        };
        base.powf(self.eta)
    }

    fn check(&self) -> Result<()> {
        let ok = self.eta.is_finite()
            && self.eta >= 0.0
            && self.top >= 1
            && (0.0..=1.0).contains(&self.eps_minus)
            && (0.0..=1.0).contains(&self.eps_plus)
            && self.eps_minus <= self.eps_plus;
        if ok {
            Ok(())
        } else {
            Err(DataError::Invalid(format!(
                "click simulation needs eta >= 0, top >= 1 and 0 <= eps- <= eps+ <= 1 (eta {}, top {}, eps- {}, eps+ {})",
                self.eta, self.top, self.eps_minus, self.eps_plus
            )))
        }
    }

    /// Simulate sessions on `ds` ranked by the production `scores` (one per document; ties by input order): each
    /// session draws a query, shows its top documents and samples clicks. Session `s` uses its own random stream
    /// (the seed, stream `s`), so the log is the same bit for bit at any thread count. Documents without a
    /// `#docid` are named by their position in the query (`d0`, `d1`, …). The propensity column holds the true
    /// examination probability (position-based model) or is empty (cascade).
    pub fn simulate(&self, ds: &Dataset, scores: &[f64]) -> Result<Vec<ClickRecord>> {
        self.check()?;
        if scores.len() != ds.n_docs() {
            return Err(DataError::Shape(format!(
                "{} production scores for {} documents",
                scores.len(),
                ds.n_docs()
            )));
        }
        if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
            return Err(DataError::Invalid(format!(
                "production score {i} is not finite"
            )));
        }
        let max_grade = ds.labels().iter().fold(0.0f32, |a, &b| a.max(b)).max(1.0);
        let click_prob = |grade: f32| {
            let g = grade.max(0.0) as f64;
            self.eps_minus
                + (self.eps_plus - self.eps_minus) * (g.exp2() - 1.0)
                    / ((max_grade as f64).exp2() - 1.0)
        };
        // The production ranking of every query, computed once.
        let rankings: Vec<Vec<usize>> = ds
            .par_queries()
            .map(|q| {
                let r = q.rows();
                let mut order: Vec<usize> = (0..q.len()).collect();
                order.sort_by(|&a, &b| {
                    scores[r.start + b]
                        .total_cmp(&scores[r.start + a])
                        .then(a.cmp(&b))
                });
                order.truncate(self.top);
                order
            })
            .collect();
        let n_queries = ds.n_queries();
        let sessions: Vec<Vec<ClickRecord>> = (0..self.sessions)
            .into_par_iter()
            .map(|s| {
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                rng.set_stream(s);
                let q = ds.query(rng.random_range(0..n_queries));
                let mut stopped = false;
                rankings[q.index()]
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| {
                        let rank = i + 1;
                        let p_click = click_prob(q.labels()[d]);
                        let (clicked, propensity) = match self.model {
                            ClickModel::PositionBased(_) => {
                                let e = self.examination(rank);
                                let examined = rng.random::<f64>() < e;
                                let c = rng.random::<f64>() < p_click;
                                (examined && c, Some(e))
                            }
                            ClickModel::Cascade => {
                                let c = !stopped && rng.random::<f64>() < p_click;
                                stopped |= c;
                                (c, None)
                            }
                        };
                        ClickRecord {
                            session: s,
                            qid: q.qid().to_string(),
                            docid: q.docid(d).map_or_else(|| format!("d{d}"), str::to_string),
                            rank: rank as u32,
                            clicked,
                            propensity,
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(sessions.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate_letor_like, SyntheticConfig};

    fn data() -> Dataset {
        generate_letor_like(&SyntheticConfig {
            queries: 30,
            min_docs: 12,
            max_docs: 30,
            features: 5,
            grades: 3,
            noise: 0.5,
            outlier_fraction: 0.0,
            query_level_norm: true,
            seed: 4,
        })
        .unwrap()
    }

    #[test]
    fn simulation_is_the_same_at_any_thread_count() {
        let ds = data();
        let scores: Vec<f64> = (0..ds.n_docs()).map(|i| ((i * 37) % 101) as f64).collect();
        let sim = ClickSimulation {
            sessions: 3000,
            seed: 9,
            ..Default::default()
        };
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| sim.simulate(&ds, &scores).unwrap())
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one.len(), 3000 * 10);
        let other = ClickSimulation {
            seed: 10,
            ..sim.clone()
        }
        .simulate(&ds, &scores)
        .unwrap();
        assert_ne!(one, other);
    }

    #[test]
    fn position_based_clicks_follow_examination_times_relevance() {
        // Every document of the top grade: the click rate at rank r is (1/r)^η · ε₊.
        let mut ds = data();
        let n = ds.n_docs();
        let labels = vec![2.0f32; n];
        ds = Dataset::new(
            ds.features().clone(),
            labels,
            ds.query_offsets().to_vec(),
            ds.qids().to_vec(),
        )
        .unwrap();
        let scores = vec![0.0; n];
        let sim = ClickSimulation {
            eta: 2.0,
            eps_plus: 0.8,
            sessions: 200_000,
            ..Default::default()
        };
        let log = sim.simulate(&ds, &scores).unwrap();
        for rank in [1u32, 2, 4] {
            let at: Vec<&ClickRecord> = log.iter().filter(|r| r.rank == rank).collect();
            let ctr = at.iter().filter(|r| r.clicked).count() as f64 / at.len() as f64;
            let want = 0.8 / (rank as f64).powi(2);
            assert!((ctr - want).abs() < 0.005, "rank {rank}: {ctr} vs {want}");
            assert_eq!(at[0].propensity, Some(1.0 / (rank as f64).powi(2)));
        }
        // ULTRA's curve.
        let ultra = ClickSimulation {
            model: ClickModel::PositionBased(Examination::Ultra),
            ..Default::default()
        };
        assert_eq!(ultra.examination(3), 0.48);
        assert_eq!(ultra.examination(25), 0.06);
    }

    #[test]
    fn cascade_clicks_at_most_once_and_logs_round_trip() {
        let ds = data();
        let scores: Vec<f64> = ds.labels().iter().map(|&l| l as f64).collect();
        let sim = ClickSimulation {
            model: ClickModel::Cascade,
            sessions: 500,
            ..Default::default()
        };
        let log = sim.simulate(&ds, &scores).unwrap();
        for s in log.chunk_by(|a, b| a.session == b.session) {
            assert!(s.iter().filter(|r| r.clicked).count() <= 1);
        }
        assert!(log.iter().any(|r| r.clicked));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("clicks.tsv");
        write_click_log(&p, &log).unwrap();
        assert_eq!(read_click_log(&p).unwrap(), log);
    }

    #[test]
    fn malformed_logs_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("session\tqid\tdoc\trank\tclicked\n", 1, "header"),
            (
                "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\n",
                2,
                "fields",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\nx\tq\td\t1\t0\n",
                2,
                "bad session",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\n1\tq\td\t0\t0\n",
                2,
                "bad rank",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t2\n",
                2,
                "bad click",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\tpropensity\n1\tq\td\t1\t1\t0\n",
                2,
                "bad propensity",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\tpropensity\n1\tq\td\t1\t1\tNaN\n",
                2,
                "bad propensity",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t1\n1\tq\te\t3\t0\n",
                3,
                "rank after rank 1",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t1\n1\tr\te\t2\t0\n",
                3,
                "changes query",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t1\n2\tq\te\t1\t0\n1\tq\tf\t1\t0\n",
                4,
                "reappears",
            ),
            (
                "session\tqid\tdocid\trank\tclicked\n1\tq\td\t2\t1\n",
                2,
                "below rank 1",
            ),
            ("", 1, "empty"),
        ];
        for (i, (text, line, what)) in cases.iter().enumerate() {
            let p = dir.path().join(format!("c{i}.tsv"));
            std::fs::write(&p, text).unwrap();
            let e = read_click_log(&p).unwrap_err().to_string();
            assert!(
                e.contains(&format!("c{i}.tsv:{line}:")) && e.contains(what),
                "{e}"
            );
        }
        // Comments, blank lines and an empty propensity are fine.
        let p = dir.path().join("ok.tsv");
        std::fs::write(
            &p,
            "# a log\nsession\tqid\tdocid\trank\tclicked\tpropensity\n\n7\tq\td\t1\t1\t\n",
        )
        .unwrap();
        assert_eq!(read_click_log(&p).unwrap()[0].propensity, None);
    }
}
