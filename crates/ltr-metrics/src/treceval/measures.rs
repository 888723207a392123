//! trec_eval's measures by name, with their default parameters, `-m` parsing (`P.5,10`, `ndcg.1=3,2=9`,
//! `set_F.0.5`, nicknames such as `all_trec`) and the names trec_eval prints (`P_5`, `iprec_at_recall_0.10`,
//! `utility_2,-1,0,0`).

use super::TrecEvalError;

/// One trec_eval measure family (trec_eval's `TREC_MEAS`), in the order trec_eval computes and prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)] // each variant is the trec_eval measure of the same name
pub enum Family {
    Runid,
    NumQ,
    NumRet,
    NumRel,
    NumRelRet,
    Map,
    GmMap,
    Rprec,
    Bpref,
    RecipRank,
    IprecAtRecall,
    P,
    Relstring,
    Recall,
    InfAp,
    GmBpref,
    RprecMult,
    Utility,
    Pt11Avg,
    BinG,
    G,
    Dcg,
    IdealDcg,
    Ndcg,
    NdcgRel,
    Rndcg,
    NdcgCut,
    MapCut,
    RelativeP,
    Success,
    SetP,
    SetRelativeP,
    SetRecall,
    SetMap,
    SetF,
    NumNonrelJudgedRet,
    Rbp,
    RbpResid,
    Unj,
}

/// How a family takes parameters and names its values.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    /// One value, no parameters.
    Plain,
    /// Integer cut-offs, one value each, named `name_k` (sorted, positive, distinct).
    CutLong(&'static [i64]),
    /// Real cut-offs, one value each, named `name_%3.2f` (sorted, distinct).
    CutDouble(&'static [f64]),
    /// One value from a list of reals, named `name_<params as written>` when given.
    Doubles(&'static [f64]),
    /// One value from `key=value` pairs (gains per relevance level, `p=`), named `name_<params as written>`.
    Pairs,
}

/// How the values of a family go from queries to the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// Mean over the queries (over every qrels query with `-c`).
    Mean,
    /// Sum over the queries, printed as an integer.
    Sum,
    /// Geometric mean: the values are logs of max(v, 0.00001); the summary is exp of their mean.
    GeometricMean,
    /// Not aggregated (`runid`, `relstring`), or the query count (`num_q`).
    None,
}

const CUTS: &[i64] = &[5, 10, 15, 20, 30, 100, 200, 500, 1000];
const RECALL_LEVELS: &[f64] = &[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// One trec_eval measure family: name, style, aggregation, whether per-query lines print, and its definition.
#[derive(Debug, Clone, Copy)]
pub struct FamilyInfo {
    /// The family.
    pub family: Family,
    /// trec_eval's name.
    pub name: &'static str,
    style: Style,
    /// How values are aggregated.
    pub aggregate: Aggregate,
    /// Whether `-q` prints a line per query.
    pub per_query: bool,
    /// Values print as integers (`%ld`).
    pub integer: bool,
    /// One-line definition (from trec_eval's help and code).
    pub definition: &'static str,
}

impl FamilyInfo {
    /// The `-m` parameters trec_eval uses when none are given (`-` for none), as `-m` would spell them.
    pub fn default_params(&self) -> String {
        let join = |v: Vec<String>| v.join(",");
        match self.style {
            Style::Plain => "-".into(),
            Style::CutLong(v) => join(v.iter().map(|k| k.to_string()).collect()),
            Style::CutDouble(v) | Style::Doubles(v) => {
                join(v.iter().map(|x| x.to_string()).collect())
            }
            Style::Pairs if matches!(self.family, F::Rbp | F::RbpResid) => "p=0.9".into(),
            Style::Pairs => "gain = relevance level".into(),
        }
    }

    /// The same measure under ltr's / ir_measures' syntax, where the two agree value for value.
    pub fn equivalent(&self) -> &'static str {
        match self.family {
            F::NumRet => "NumRet",
            F::NumRel => "NumRel",
            F::NumRelRet => "NumRelRet",
            F::Map => "AP | MAP",
            F::Rprec => "Rprec",
            F::Bpref => "Bpref",
            F::RecipRank => "RR | MRR",
            F::P => "P@k",
            F::Recall => "R@k",
            F::InfAp => "infAP",
            F::Ndcg => "nDCG",
            F::NdcgCut => "nDCG@k",
            F::MapCut => "AP@k",
            F::Success => "Success@k",
            F::SetP => "SetP",
            F::SetRecall => "SetR",
            F::SetF => "SetF(beta=b)",
            _ => "-",
        }
    }
}

const fn fam(
    family: Family,
    name: &'static str,
    style: Style,
    aggregate: Aggregate,
    definition: &'static str,
) -> FamilyInfo {
    FamilyInfo {
        family,
        name,
        style,
        aggregate,
        per_query: !matches!(aggregate, Aggregate::GeometricMean)
            && !matches!(family, Family::Runid | Family::NumQ),
        integer: matches!(aggregate, Aggregate::Sum) || matches!(family, Family::NumQ),
        definition,
    }
}

use Aggregate::{GeometricMean as Gm, Mean, None as Noagg, Sum};
use Family as F;

/// Every trec_eval 10.0 measure on `qrels` and `trec_results` input, in trec_eval's order (`measures.c`).
pub const FAMILIES: &[FamilyInfo] = &[
    fam(F::Runid, "runid", Style::Plain, Noagg, "the run tag (of the run file's last line)"),
    fam(F::NumQ, "num_q", Style::Plain, Noagg, "number of queries averaged over (with -c, every qrels query)"),
    fam(F::NumRet, "num_ret", Style::Plain, Sum, "documents retrieved (after -M and -J); summary: sum"),
    fam(F::NumRel, "num_rel", Style::Plain, Sum, "relevant documents judged (rel >= -l); summary: sum (with -c: judgments with rel > 0 in the whole qrels)"),
    fam(F::NumRelRet, "num_rel_ret", Style::Plain, Sum, "relevant documents retrieved; summary: sum"),
    fam(F::Map, "map", Style::Plain, Mean, "average precision: sum of precision at each relevant retrieved document / R"),
    fam(F::GmMap, "gm_map", Style::Plain, Gm, "AP averaged by geometric mean of max(AP, 0.00001); summary only"),
    fam(F::Rprec, "Rprec", Style::Plain, Mean, "precision after R documents (R relevant)"),
    fam(F::Bpref, "bpref", Style::Plain, Mean, "(1/R) sum over relevant retrieved d of 1 - min(judged non-relevant above d, R) / min(N, R)"),
    fam(F::RecipRank, "recip_rank", Style::Plain, Mean, "1 / rank of the first relevant document"),
    fam(F::IprecAtRecall, "iprec_at_recall", Style::CutDouble(RECALL_LEVELS), Mean, "interpolated precision at recall levels: max precision at or after the round(level * R)-th relevant document (ir_measures' IPrec@r, from trec_eval 9, counts floor(level * R + 0.9))"),
    fam(F::P, "P", Style::CutLong(CUTS), Mean, "precision at k: relevant in the top k / k"),
    fam(F::Relstring, "relstring", Style::Doubles(&[10.0]), Noagg, "relevance of the top N documents as a string (digit, '>' over 9, '-' not in the pool, '.' pooled but unjudged); per query only"),
    fam(F::Recall, "recall", Style::CutLong(CUTS), Mean, "recall at k: relevant in the top k / R"),
    fam(F::InfAp, "infAP", Style::Plain, Mean, "inferred AP (Yilmaz & Aslam 2006): negative qrels values are pooled but unjudged"),
    fam(F::GmBpref, "gm_bpref", Style::Plain, Gm, "bpref averaged by geometric mean of max(bpref, 0.00001); summary only"),
    fam(F::RprecMult, "Rprec_mult", Style::CutDouble(&[0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]), Mean, "precision after (long)(m * R + 0.9) documents"),
    fam(F::Utility, "utility", Style::Doubles(&[1.0, -1.0, 0.0, 0.0]), Mean, "a*rel_ret + b*nonrel_ret + c*rel_nonret + d*nonrel_nonret (coefficients a,b,c,d; -N sets the collection size)"),
    fam(F::Pt11Avg, "11pt_avg", Style::Doubles(RECALL_LEVELS), Mean, "mean of the interpolated precisions at the recall levels given"),
    fam(F::BinG, "binG", Style::Plain, Mean, "binary G: sum over relevant retrieved of 1/log2(2 + nonrelevant retrieved before it), / R"),
    fam(F::G, "G", Style::Pairs, Mean, "Kishida's G: gain / log2(2 + ideal cost - gain so far), normalised by the ideal's gain (gains rel=gain pairs)"),
    fam(F::Dcg, "dcg", Style::Pairs, Mean, "DCG with gain = relevance level (or rel=gain pairs), discount log2(rank + 1)"),
    fam(F::IdealDcg, "ideal_dcg", Style::Pairs, Mean, "DCG of the ideal ranking of the judged documents"),
    fam(F::Ndcg, "ndcg", Style::Pairs, Mean, "dcg / ideal_dcg over the whole ranking (gains rel=gain pairs, default gain = level)"),
    fam(F::NdcgRel, "ndcg_rel", Style::Pairs, Mean, "nDCG averaged over the ranks of the relevant documents (of the ideal ranking's length R)"),
    fam(F::Rndcg, "Rndcg", Style::Pairs, Mean, "nDCG averaged over the ranks where the ideal gain changes level, and at the list's end"),
    fam(F::NdcgCut, "ndcg_cut", Style::CutLong(CUTS), Mean, "nDCG at k (gain = relevance level)"),
    fam(F::MapCut, "map_cut", Style::CutLong(CUTS), Mean, "AP over the top k, still divided by R"),
    fam(F::RelativeP, "relative_P", Style::CutLong(CUTS), Mean, "relevant in the top k / min(k, R)"),
    fam(F::Success, "success", Style::CutLong(&[1, 5, 10]), Mean, "1 if a relevant document is in the top k"),
    fam(F::SetP, "set_P", Style::Plain, Mean, "relevant retrieved / retrieved"),
    fam(F::SetRelativeP, "set_relative_P", Style::Plain, Mean, "relevant retrieved / min(retrieved, R)"),
    fam(F::SetRecall, "set_recall", Style::Plain, Mean, "relevant retrieved / R"),
    fam(F::SetMap, "set_map", Style::Plain, Mean, "set_P * set_recall"),
    fam(F::SetF, "set_F", Style::Doubles(&[1.0]), Mean, "(1 + b) P R / (b P + R) over the retrieved set (b unsquared, default 1)"),
    fam(F::NumNonrelJudgedRet, "num_nonrel_judged_ret", Style::Plain, Sum, "judged non-relevant documents retrieved; summary: sum"),
    fam(F::Rbp, "rbp", Style::Pairs, Mean, "rank-biased precision (1 - p) sum gain_i p^(i-1), gains (default = level) scaled to [0,1] when outside; p=0.9 unless p= given"),
    fam(F::RbpResid, "rbp_resid", Style::Pairs, Mean, "RBP residual p^n + (1 - p) sum over unjudged ranks p^(i-1); 0 when no retrieved document is unjudged"),
    fam(F::Unj, "unj", Style::CutLong(&[5, 10, 20]), Mean, "unjudged (not in the qrels, or negative) documents in the top k / k"),
];

/// trec_eval's `official` measures: the first twelve of `all_trec` (its `measures.c` lists them first).
const OFFICIAL: &[&str] = ALL_TREC.split_at(12).0;
/// Every measure of trec_eval's `all_trec` nickname, in its order.
const ALL_TREC: &[&str] = &[
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "unj",
    "rbp",
    "rbp_resid",
    "infAP",
    "gm_bpref",
    "utility",
    "11pt_avg",
    "ndcg",
    "relative_P",
    "Rprec_mult",
    "success",
    "map_cut",
    "ndcg_cut",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
];
const SET: &[&str] = &[
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
];

/// trec_eval's nicknames for sets of measures.
pub const NICKNAMES: &[(&str, &[&str])] =
    &[("official", OFFICIAL), ("set", SET), ("all_trec", ALL_TREC)];

/// trec_eval measures that need another qrels or run format (`-R prefs`, `-R qrels_jg`), not read here.
const OTHER_FORMATS: &[&str] = &[
    "all_prefs",
    "prefs",
    "qrels_jg",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "yaap",
];

/// A family's parameters once parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Params {
    None,
    Longs(Vec<i64>),
    Doubles(Vec<f64>),
    Pairs(Vec<(String, f64)>),
}

/// A measure family to compute, with its parameters and the names of its values.
#[derive(Debug, Clone)]
pub struct Measure {
    /// The family.
    pub info: FamilyInfo,
    pub(crate) params: Params,
    /// The names trec_eval prints, one per value.
    pub names: Vec<String>,
}

/// The measures asked with trec_eval's `-m` (each a name, `name.params` or a nickname), in trec_eval's order.
#[derive(Debug, Clone)]
pub struct MeasureSet {
    /// The families to compute, each once, in trec_eval's order.
    pub measures: Vec<Measure>,
}

fn family(name: &str) -> Option<&'static FamilyInfo> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// A value name as trec_eval prints it (`P_5`, `ndcg_cut_10`, `iprec_at_recall_0.10`, `set_F_0.5`) as the `-m`
/// item that asks for it (`P.5`, ...); anything else unchanged. trec_eval's `-m` takes only the latter.
fn printed_to_spec(s: &str) -> String {
    let name = s.split('.').next().unwrap_or("");
    if family(name).is_some() || NICKNAMES.iter().any(|(n, _)| *n == name) {
        return s.to_string();
    }
    let best = FAMILIES
        .iter()
        .filter(|f| !matches!(f.style, Style::Plain))
        .filter(|f| {
            s.len() > f.name.len() + 1
                && s.starts_with(f.name)
                && s.as_bytes()[f.name.len()] == b'_'
        })
        .max_by_key(|f| f.name.len());
    match best {
        Some(f) => format!("{}.{}", f.name, &s[f.name.len() + 1..]),
        None => s.to_string(),
    }
}

/// Is `spec` a trec_eval measure, nickname or printed value name (`P.5,10`, `all_trec`, `ndcg_cut_10`)?
pub fn is_trec_eval_name(spec: &str) -> bool {
    let spec = printed_to_spec(spec.trim());
    let name = spec.split('.').next().unwrap_or("");
    family(name).is_some() || NICKNAMES.iter().any(|(n, _)| *n == name)
}

/// Known trec_eval names close to `name` (edit distance ≤ 2, or sharing a prefix), for error messages.
pub fn close_names(name: &str) -> Vec<&'static str> {
    let lower = name.to_ascii_lowercase();
    let mut all: Vec<&'static str> = FAMILIES.iter().map(|f| f.name).collect();
    all.extend(NICKNAMES.iter().map(|(n, _)| *n));
    let mut scored: Vec<(usize, &'static str)> = all
        .into_iter()
        .map(|n| (edit_distance(&lower, &n.to_ascii_lowercase()), n))
        .filter(|(d, n)| {
            *d <= 2 || (lower.len() >= 3 && n.to_ascii_lowercase().starts_with(&lower))
        })
        .collect();
    scored.sort();
    scored.into_iter().map(|(_, n)| n).take(5).collect()
}

/// Levenshtein distance.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// C's `atof` on a whole item, but strict: the item must be a number.
fn real(item: &str, spec: &str, expected: &str) -> Result<f64, TrecEvalError> {
    let t = item.trim();
    t.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| malformed(spec, &format!("`{t}` is not a number; expected {expected}")))
}

fn malformed(spec: &str, why: &str) -> TrecEvalError {
    TrecEvalError::Measure(format!("malformed measure parameters in `{spec}`: {why}"))
}

fn parse_params(info: &FamilyInfo, text: &str, spec: &str) -> Result<Params, TrecEvalError> {
    Ok(match info.style {
        Style::Plain => {
            return Err(malformed(
                spec,
                &format!("`{}` takes no parameters", info.name),
            ))
        }
        Style::CutLong(_) => {
            let expected = format!(
                "positive integer cut-offs, comma separated, as in {}.5,10",
                info.name
            );
            let mut v = Vec::new();
            for item in text.split(',') {
                // trec_eval reads each cut-off with atol: 23.4 is 23.
                let x = real(item, spec, &expected)?;
                v.push(x.trunc() as i64);
            }
            v.sort_unstable();
            if v[0] <= 0 {
                return Err(malformed(
                    spec,
                    &format!("a cut-off is not positive; expected {expected}"),
                ));
            }
            if v.windows(2).any(|w| w[0] == w[1]) {
                return Err(malformed(spec, "duplicate cut-offs"));
            }
            Params::Longs(v)
        }
        Style::CutDouble(_) => {
            let expected = format!("numbers, comma separated, as in {}.0.1,0.5", info.name);
            let mut v = text
                .split(',')
                .map(|i| real(i, spec, &expected))
                .collect::<Result<Vec<f64>, _>>()?;
            v.sort_by(f64::total_cmp);
            if v.windows(2).any(|w| w[0] == w[1]) {
                return Err(malformed(spec, "duplicate cut-offs"));
            }
            Params::Doubles(v)
        }
        Style::Doubles(_) => {
            let expected = match info.family {
                F::Utility => "four coefficients, as in utility.1,-1,0,0",
                F::SetF => "one beta, as in set_F.0.5",
                F::Relstring => "one length, as in relstring.20",
                _ => "recall levels, as in 11pt_avg.0.25,0.5,0.75",
            };
            let v = text
                .split(',')
                .map(|i| real(i, spec, expected))
                .collect::<Result<Vec<f64>, _>>()?;
            if info.family == F::Utility && v.len() != 4 {
                return Err(malformed(
                    spec,
                    &format!("{} coefficients; expected {expected}", v.len()),
                ));
            }
            if matches!(info.family, F::SetF | F::Relstring) && v.len() != 1 {
                return Err(malformed(
                    spec,
                    &format!("{} values; expected {expected}", v.len()),
                ));
            }
            Params::Doubles(v)
        }
        Style::Pairs => {
            let expected = if matches!(info.family, F::Rbp | F::RbpResid) {
                "key=value pairs, as in rbp.p=0.8 (relevance level=gain pairs set gains: rbp.p=0.8,1=1,2=3)"
            } else {
                "relevance level=gain pairs, as in ndcg.1=1,2=3"
            };
            let mut v = Vec::new();
            for item in text.split(',') {
                let (k, x) = item.split_once('=').ok_or_else(|| {
                    malformed(
                        spec,
                        &format!("`{item}` is not key=value; expected {expected}"),
                    )
                })?;
                v.push((k.to_string(), real(x, spec, expected)?));
            }
            Params::Pairs(v)
        }
    })
}

fn names(info: &FamilyInfo, params: &Params, printable: Option<&str>) -> Vec<String> {
    match (info.style, params) {
        (Style::CutLong(_), Params::Longs(v)) => {
            v.iter().map(|k| format!("{}_{k}", info.name)).collect()
        }
        (Style::CutDouble(_), Params::Doubles(v)) => {
            v.iter().map(|x| format!("{}_{x:.2}", info.name)).collect()
        }
        _ => vec![match printable {
            Some(p) => format!("{}_{p}", info.name),
            None => info.name.to_string(),
        }],
    }
}

fn default_params(info: &FamilyInfo) -> Params {
    match info.style {
        Style::Plain => Params::None,
        Style::CutLong(v) => Params::Longs(v.to_vec()),
        Style::CutDouble(v) | Style::Doubles(v) => Params::Doubles(v.to_vec()),
        Style::Pairs => Params::Pairs(Vec::new()),
    }
}

impl MeasureSet {
    /// Parse trec_eval `-m` arguments. Parameters given for a family apply wherever that family is asked
    /// (also through a nickname); the first ones given win, as in trec_eval.
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<Self, TrecEvalError> {
        let mut marked: Vec<&'static FamilyInfo> = Vec::new();
        let mut given: Vec<(&'static str, Params, String)> = Vec::new();
        for spec in specs {
            let written = spec.as_ref().trim();
            let spec = printed_to_spec(written);
            let spec = spec.as_str();
            let (name, params) = match spec.split_once('.') {
                Some((n, p)) => (n, Some(p)),
                None => (spec, None),
            };
            if OTHER_FORMATS.contains(&name) {
                return Err(TrecEvalError::Measure(format!(
                    "trec_eval measure `{name}` needs preference or jg qrels (-R prefs, -R qrels_jg), which ltr does not read"
                )));
            }
            if let Some((_, list)) = NICKNAMES.iter().find(|(n, _)| *n == name) {
                if params.is_some() {
                    return Err(malformed(
                        spec,
                        &format!("the nickname `{name}` takes no parameters"),
                    ));
                }
                marked.extend(list.iter().filter_map(|n| family(n)));
                continue;
            }
            let info = family(name).ok_or_else(|| {
                let close = close_names(name);
                TrecEvalError::Measure(if close.is_empty() {
                    format!("unknown trec_eval measure `{name}`")
                } else {
                    format!(
                        "unknown trec_eval measure `{name}`; close: {}",
                        close.join(", ")
                    )
                })
            })?;
            if let Some(p) = params {
                if p.is_empty() {
                    return Err(malformed(spec, "nothing after the `.`"));
                }
                let parsed = parse_params(info, p, spec)?;
                if !given.iter().any(|(n, _, _)| *n == info.name) {
                    given.push((info.name, parsed, p.to_string()));
                }
            }
            marked.push(info);
        }
        let mut fams: Vec<&'static FamilyInfo> = Vec::new();
        for f in FAMILIES {
            if marked.iter().any(|m| m.family == f.family) {
                fams.push(f);
            }
        }
        let measures = fams
            .into_iter()
            .map(|info| {
                let (params, printable) = match given.iter().find(|(n, _, _)| *n == info.name) {
                    Some((_, p, text)) => (p.clone(), Some(text.as_str())),
                    None => (default_params(info), None),
                };
                Measure {
                    info: *info,
                    names: names(info, &params, printable),
                    params,
                }
            })
            .collect();
        Ok(MeasureSet { measures })
    }

    /// trec_eval's default: `official`.
    pub fn official() -> Self {
        Self::parse(&["official"]).expect("official parses")
    }
}
