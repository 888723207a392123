//! trec_eval 10.0 reproduced: every measure it computes on qrels and TREC runs (`-m all_trec` and the rest of
//! `measures.c` that reads these formats), its `-m` parameter syntax, its flags (`-q`, `-c`, `-M`, `-l`, `-J`,
//! `-n`, `-N`) and its output, line for line (`ltr eval --format trec_eval`).
//!
//! Each measure follows trec_eval's own code (`m_*.c`), oddities included: ties broken by docno descending,
//! `iprec_at_recall` cut-offs rounded (10.0's `lround`) where `Rprec_mult` still adds 0.9 and truncates, `rbp`'s
//! gains scaled into [0, 1], `rbp_resid` 0 when no retrieved document is unjudged, sums for `num_ret`, `num_rel`,
//! `num_rel_ret` and `num_nonrel_judged_ret`, geometric means for `gm_map` and `gm_bpref`.
//!
//! Where ltr departs from trec_eval 10.0, on purpose:
//! - a qrels query that the run does not retrieve is skipped without `-c` (trec_eval 9 did so, and trec_eval's
//!   help says so; 10.0 stops with "result qid not found in qrels", exit 4);
//! - a score that is not a number, or a relevance value that is not one, is an error naming file and line
//!   (trec_eval reads them as 0); an empty run or qrels is an error naming the file;
//! - a run that lists a document twice for a query is refused, as trec_eval refuses it ("duplicate docs"), but
//!   the message names the file, query and document;
//! - the preference and jg measures (`-R prefs`, `-R qrels_jg`) and z-scores (`-Z`) are not offered.

mod compute;
// pub for the tests in tests/unit/treceval_input.rs; not API.
#[doc(hidden)]
pub mod input;
mod measures;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use measures::{
    close_names, edit_distance, is_trec_eval_name, Aggregate, Family, FamilyInfo, Measure,
    MeasureSet, FAMILIES, NICKNAMES,
};

/// Errors of the trec_eval reproduction.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrecEvalError {
    /// I/O failure.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A malformed line.
    #[error("{}:{line}: {problem}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// A file without a record.
    #[error("{}: the {what} file is empty (no `#`-free, non-blank line)", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
        /// `run` or `qrels`.
        what: &'static str,
    },
    /// A document listed twice for one query.
    #[error("{}: query {qid} lists document {docno} twice (trec_eval refuses such input too: \"duplicate docs\")", path.display())]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// The query.
        qid: String,
        /// The document.
        docno: String,
    },
    /// An unknown measure or malformed parameters.
    #[error("{0}")]
    Measure(String),
    /// No query has both a run and qrels.
    #[error("no query of {} has judgments in {}", run.display(), qrels.display())]
    NoQueries {
        /// The run.
        run: PathBuf,
        /// The qrels.
        qrels: PathBuf,
    },
}

/// trec_eval's command-line settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// `-q`: per-query lines too.
    pub per_query: bool,
    /// `-c`: average over every qrels query, a query the run lacks counting as retrieving nothing.
    pub complete: bool,
    /// `-l`: the lowest relevance value counted as relevant (default 1).
    pub relevance_level: i64,
    /// `-n` unset: print the summary (`all`) lines.
    pub summary: bool,
    /// `-J`: drop the unjudged retrieved documents before computing.
    pub judged_only: bool,
    /// `-N`: documents in the collection (for `utility`; default 0 as in trec_eval's code).
    pub num_docs_in_coll: i64,
    /// `-M`: documents per query kept (default 2147483647).
    pub max_per_topic: i64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            per_query: false,
            complete: false,
            relevance_level: 1,
            summary: true,
            judged_only: false,
            num_docs_in_coll: 0,
            max_per_topic: 2_147_483_647,
        }
    }
}

/// One printed value: its trec_eval name, the query (or `all`), and the value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number.
    Number(f64),
    /// An integer (counts, sums).
    Integer(i64),
    /// Text (`runid`, `relstring`).
    Text(String),
}

/// One line of trec_eval's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The value's name (`P_5`, `map`, ...).
    pub name: String,
    /// The query id, or `all`.
    pub qid: String,
    /// The value.
    pub value: Value,
}

/// The result of [`trec_eval`]: the lines trec_eval would print, in its order.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Per-query lines (with `-q`), query by query, then the summary lines (unless `-n`).
    pub lines: Vec<Line>,
}

/// C's `printf("%6.4f")` (and `nan`, `inf` as glibc prints them).
fn c_float(v: f64) -> String {
    if v.is_nan() {
        format!("{:>6}", if v.is_sign_negative() { "-nan" } else { "nan" })
    } else if v.is_infinite() {
        format!("{:>6}", if v < 0.0 { "-inf" } else { "inf" })
    } else {
        format!("{v:6.4}")
    }
}

impl Report {
    /// trec_eval's text: `%-22s\t%s\t%6.4f` (integers `%ld`, `relstring` quoted).
    pub fn to_trec_eval(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            let v = match &l.value {
                Value::Number(x) => c_float(*x),
                Value::Integer(i) => i.to_string(),
                Value::Text(t) if l.name.starts_with("relstring") => format!("'{t}'"),
                Value::Text(t) => t.clone(),
            };
            let _ = writeln!(s, "{:<22}\t{}\t{}", l.name, l.qid, v);
        }
        s
    }

    /// The summary value of `name` (trec_eval's name), if printed.
    pub fn summary(&self, name: &str) -> Option<&Value> {
        self.lines
            .iter()
            .find(|l| l.qid == "all" && l.name == name)
            .map(|l| &l.value)
    }
}

/// Evaluate `run` against `qrels` as trec_eval 10.0 does with `-m` measures `set` and flags `o`.
pub fn trec_eval(
    qrels_path: &Path,
    run_path: &Path,
    set: &MeasureSet,
    o: &Options,
) -> Result<Report, TrecEvalError> {
    Inputs::read(qrels_path, run_path)?.evaluate(set, o)
}

/// A run and its qrels read as trec_eval reads them, to be evaluated with several measure sets.
#[derive(Debug, Clone)]
pub struct Inputs {
    qrels: input::Qrels,
    run: input::Run,
    qrels_path: PathBuf,
    run_path: PathBuf,
}

impl Inputs {
    /// Read `qrels_path` and `run_path` (errors name the file and line).
    pub fn read(qrels_path: &Path, run_path: &Path) -> Result<Self, TrecEvalError> {
        Ok(Inputs {
            qrels: input::read_qrels(qrels_path)?,
            run: input::read_run(run_path)?,
            qrels_path: qrels_path.to_path_buf(),
            run_path: run_path.to_path_buf(),
        })
    }

    /// The lines trec_eval prints for measures `set` under flags `o`.
    pub fn evaluate(&self, set: &MeasureSet, o: &Options) -> Result<Report, TrecEvalError> {
        evaluate(self, set, o)
    }
}

fn evaluate(inputs: &Inputs, set: &MeasureSet, o: &Options) -> Result<Report, TrecEvalError> {
    let (qrels, run) = (&inputs.qrels, &inputs.run);
    let (qrels_path, run_path) = (inputs.qrels_path.as_path(), inputs.run_path.as_path());
    const BOGUS: &str = "ceci_nest_pas_un_docno";
    let bogus = input::RunTopic {
        qid: String::new(),
        docs: vec![(input::Docno::whole(BOGUS), 1.0)],
    };
    let widths: Vec<usize> = set.measures.iter().map(|m| m.names.len()).collect();
    let mut sums: Vec<Vec<f64>> = widths.iter().map(|&w| vec![0.0; w]).collect();
    let mut lines = Vec::new();
    let mut num_q = 0i64;
    let mut prev_levels = 0usize;
    let mut relstring = String::new();
    // Each qrels query with its run query (trec_eval's merge of the two sorted lists); a query the run lacks is
    // the stand-in under `-c` and left out otherwise.
    let mut ri = 0usize;
    let mut matched = Vec::with_capacity(qrels.topics.len());
    for q in &qrels.topics {
        while ri < run.topics.len() && run.topics[ri].qid.as_bytes() < q.qid.as_bytes() {
            ri += 1;
        }
        let found = ri < run.topics.len() && run.topics[ri].qid == q.qid;
        if found {
            matched.push((q, &run.topics[ri], run.text.as_str(), true));
        } else if o.complete {
            matched.push((q, &bogus, BOGUS, false));
        }
    }
    // The ranked lists (their sorts are most of the work) are formed in parallel a chunk at a time, then taken in
    // query order: the first error, the inherited relevance levels and every sum are those of a serial pass.
    const CHUNK: usize = 256;
    for chunk in matched.chunks(CHUNK) {
        use rayon::prelude::*;
        let formed: Vec<Result<compute::ResRels, TrecEvalError>> = chunk
            .par_iter()
            .map(|&(q, topic, text, _)| {
                compute::form_res_rels(topic, text, q, &qrels.text, o, run_path, qrels_path)
            })
            .collect();
        for (&(q, _, _, found), rr) in chunk.iter().zip(formed) {
            let mut rr = rr?;
            rr.inherit_levels(prev_levels);
            prev_levels = rr.num_rel_levels;
            for (m, sum) in set.measures.iter().zip(&mut sums) {
                let mut vals = vec![0.0; m.names.len()];
                compute::calc(m, &rr, o, &mut vals, &mut relstring);
                if !found {
                    // trec_eval's clean-up after its one-document stand-in for a missing query.
                    match m.info.family {
                        Family::NumRet | Family::Utility | Family::Unj | Family::RbpResid => {
                            vals.iter_mut().for_each(|v| *v = 0.0)
                        }
                        Family::Relstring => relstring.clear(),
                        _ => {}
                    }
                }
                for (s, v) in sum.iter_mut().zip(&vals) {
                    *s += v;
                }
                if o.per_query && m.info.per_query {
                    for (name, &v) in m.names.iter().zip(&vals) {
                        let value = if m.info.family == Family::Relstring {
                            Value::Text(relstring.clone())
                        } else if m.info.integer {
                            Value::Integer(v as i64)
                        } else {
                            Value::Number(v)
                        };
                        lines.push(Line {
                            name: name.clone(),
                            qid: q.qid.clone(),
                            value,
                        });
                    }
                }
            }
            num_q += 1;
        }
    }
    if num_q == 0 {
        return Err(TrecEvalError::NoQueries {
            run: run_path.to_path_buf(),
            qrels: qrels_path.to_path_buf(),
        });
    }
    let denominator = if o.complete {
        qrels.topics.len() as i64
    } else {
        num_q
    };
    if o.summary {
        for (m, sum) in set.measures.iter().zip(&sums) {
            for (name, &s) in m.names.iter().zip(sum) {
                let value = match (m.info.family, m.info.aggregate) {
                    (Family::Runid, _) => Value::Text(run.tag.clone()),
                    (Family::Relstring, _) => continue,
                    (Family::NumQ, _) => Value::Integer(denominator),
                    (Family::NumRel, _) if o.complete => Value::Integer(
                        qrels
                            .topics
                            .iter()
                            .flat_map(|q| &q.judgments)
                            .filter(|j| j.1 > 0)
                            .count() as i64,
                    ),
                    (_, Aggregate::Sum) => Value::Integer(s as i64),
                    (_, Aggregate::GeometricMean) => {
                        let s = s + (denominator - num_q) as f64 * 0.00001f64.ln();
                        Value::Number((s / denominator as f64).exp())
                    }
                    _ => Value::Number(s / denominator as f64),
                };
                lines.push(Line {
                    name: name.clone(),
                    qid: "all".into(),
                    value,
                });
            }
        }
    }
    Ok(Report { lines })
}

impl Report {
    /// The numeric values as `ltr eval` rows, one per value name of `set`, in `set`'s order (`runid` and
    /// `relstring` left out). When `set` gives a single value, its row is named `asked` (the name as written).
    /// Per-query values are there when the report was made with `-q`.
    pub fn rows(&self, set: &MeasureSet, asked: &str) -> Vec<crate::Row> {
        let numeric: Vec<(&Measure, &String)> = set
            .measures
            .iter()
            .filter(|m| !matches!(m.info.family, Family::Runid | Family::Relstring))
            .flat_map(|m| m.names.iter().map(move |n| (m, n)))
            .collect();
        let single = numeric.len() == 1;
        let number = |v: &Value| match v {
            Value::Number(x) => Some(*x),
            Value::Integer(i) => Some(*i as f64),
            Value::Text(_) => None,
        };
        numeric
            .into_iter()
            .filter_map(|(m, name)| {
                let value = self.summary(name).and_then(number)?;
                let per_query = self
                    .lines
                    .iter()
                    .filter(|l| l.qid != "all" && &l.name == name)
                    .filter_map(|l| Some((l.qid.clone(), number(&l.value)?)))
                    .collect();
                Some(crate::Row {
                    name: if single {
                        asked.to_string()
                    } else {
                        name.clone()
                    },
                    value,
                    aggregate: match m.info.aggregate {
                        Aggregate::Sum => crate::RowAggregate::Sum,
                        Aggregate::GeometricMean => crate::RowAggregate::GeometricMean,
                        _ => crate::RowAggregate::Mean,
                    },
                    per_query,
                })
            })
            .collect()
    }
}
