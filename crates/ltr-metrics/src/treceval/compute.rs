//! One query's values of each trec_eval measure, computed as trec_eval 10.0 computes them (`m_*.c`), from the
//! ranked relevance list of `form_res_rels.c`: documents sorted by score descending, ties by docno descending,
//! cut to `-M`, each given its qrels value, −1 when it is not in the qrels (not pooled), −2 when its qrels value is
//! negative (pooled but unjudged).

use super::input::{QrelsTopic, RunTopic};
use super::measures::{Family, Measure, Params};
use super::{Options, TrecEvalError};

const NONPOOL: i64 = -1;
const UNJUDGED: i64 = -2;
const MIN_GEO_MEAN: f64 = 0.00001;
const INFAP_EPSILON: f64 = 0.00001;

/// trec_eval's `RES_RELS`: a query's ranked relevance values and counts.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResRels {
    pub rels: Vec<i64>,
    pub num_rel_ret: i64,
    pub num_rel: i64,
    pub num_nonpool: i64,
    pub num_unjudged: i64,
    /// Judged documents per relevance level 0..=max (negative values not counted).
    pub rel_levels: Vec<i64>,
    /// 1 + the highest level with a judged document (trec_eval keeps the previous query's when none).
    pub num_rel_levels: usize,
}

impl ResRels {
    /// trec_eval's `num_rel_levels` for a query with no non-negative judgment: the previous query's.
    pub(crate) fn inherit_levels(&mut self, previous: usize) {
        if self.rel_levels.iter().all(|&c| c == 0) {
            self.num_rel_levels = previous;
        }
    }

    fn num_ret(&self) -> i64 {
        self.rels.len() as i64
    }
}

/// Form a query's ranked relevance list, as `te_form_res_rels`. A query with no non-negative judgment gets
/// `num_rel_levels` 0 here; trec_eval keeps the previous query's, which [`ResRels::inherit_levels`] sets once the
/// queries are taken in order (so that queries can be formed in parallel).
pub(crate) fn form_res_rels(
    run: &RunTopic,
    run_text: &str,
    qrels: &QrelsTopic,
    qrels_text: &str,
    o: &Options,
    run_path: &std::path::Path,
    qrels_path: &std::path::Path,
) -> Result<ResRels, TrecEvalError> {
    let mut docs: Vec<(&str, f64)> = run.docs.iter().map(|(d, s)| (d.of(run_text), *s)).collect();
    let ranked = |a: &(&str, f64), b: &(&str, f64)| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| b.0.as_bytes().cmp(a.0.as_bytes()))
    };
    // Scores are never NaN (the reader refuses them), so the order is total: the ranking does not depend on the order
    // the run lists its documents in, and a list already ranked (runs are usually written in rank order) needs only
    // the check.
    if !docs.is_sorted_by(|a, b| ranked(a, b).is_le()) {
        docs.sort_by(ranked);
    }
    let n = docs.len().min(o.max_per_topic.max(0) as usize);
    docs.truncate(n);
    // (docno, rank) sorted by docno, to merge with the qrels.
    let mut by_doc: Vec<(&str, usize)> = docs.iter().enumerate().map(|(r, d)| (d.0, r)).collect();
    by_doc.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    if let Some(w) = by_doc.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(TrecEvalError::Duplicate {
            path: run_path.to_path_buf(),
            qid: run.qid.clone(),
            docno: w[0].0.to_string(),
        });
    }
    let j: Vec<(&str, i64)> = qrels
        .judgments
        .iter()
        .map(|(d, r)| (d.of(qrels_text), *r))
        .collect();
    if let Some(w) = j.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(TrecEvalError::Duplicate {
            path: qrels_path.to_path_buf(),
            qid: qrels.qid.clone(),
            docno: w[0].0.to_string(),
        });
    }
    let max_rel = j.iter().map(|x| x.1).max().unwrap_or(0);
    let mut rel_levels = vec![0i64; (max_rel + 1).max(0) as usize];
    let mut count = |r: i64| {
        if r >= 0 {
            rel_levels[r as usize] += 1;
        }
    };
    let mut rank_rel = vec![NONPOOL; n];
    let mut q = 0;
    for &(d, rank) in &by_doc {
        while q < j.len() && j[q].0.as_bytes() < d.as_bytes() {
            count(j[q].1);
            q += 1;
        }
        if q < j.len() && j[q].0 == d {
            rank_rel[rank] = if j[q].1 < 0 { UNJUDGED } else { j[q].1 };
            count(j[q].1);
            q += 1;
        }
    }
    while q < j.len() {
        count(j[q].1);
        q += 1;
    }
    let mut rr = ResRels::default();
    if o.judged_only {
        rr.rels = rank_rel.into_iter().filter(|&r| r >= 0).collect();
        rr.num_rel_ret = rr.rels.iter().filter(|&&r| r >= o.relevance_level).count() as i64;
    } else {
        for &r in &rank_rel {
            match r {
                NONPOOL => rr.num_nonpool += 1,
                UNJUDGED => rr.num_unjudged += 1,
                r if r >= o.relevance_level => rr.num_rel_ret += 1,
                _ => {}
            }
        }
        rr.rels = rank_rel;
    }
    for (i, &c) in rel_levels.iter().enumerate() {
        if c != 0 {
            rr.num_rel_levels = i + 1;
            if i as i64 >= o.relevance_level {
                rr.num_rel += c;
            }
        }
    }
    rr.rel_levels = rel_levels;
    Ok(rr)
}

/// trec_eval's `GAINS`: (level, gain, documents at level), sorted by gain.
struct Gains(Vec<(i64, f64, i64)>);

impl Gains {
    /// `setup_gains`: integer-keyed pairs give gains, every other level present gains its own value.
    fn new(params: &Params, rr: &ResRels) -> Gains {
        let mut g: Vec<(i64, f64, i64)> = Vec::new();
        if let Params::Pairs(pairs) = params {
            for (k, v) in pairs {
                if let Some(level) = valid_int(k) {
                    g.push((level, *v, 0));
                }
            }
        }
        let given = g.len();
        for i in 0..rr.num_rel_levels {
            let at = rr.rel_levels.get(i).copied().unwrap_or(0);
            match g[..given].iter_mut().find(|x| x.0 == i as i64) {
                Some(x) => x.2 = at,
                None => g.push((i as i64, i as f64, at)),
            }
        }
        // trec_eval's comparator returns the gain difference cast to int; glibc's qsort is a stable merge sort.
        g.sort_by(|a, b| ((a.1 - b.1) as i32).cmp(&0));
        Gains(g)
    }

    fn gain(&self, level: i64) -> f64 {
        self.0.iter().find(|x| x.0 == level).map_or(0.0, |x| x.1)
    }
}

fn valid_int(s: &str) -> Option<i64> {
    let t = s.strip_prefix(['-', '+']).unwrap_or(s);
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Walks the ideal ranking level by level, as the gain measures of trec_eval do.
struct Ideal<'a> {
    g: &'a Gains,
    level: isize,
    at_level: i64,
    gain: f64,
}

impl<'a> Ideal<'a> {
    fn new(g: &'a Gains) -> Self {
        let level = g.0.len() as isize - 1;
        let gain = if level >= 0 {
            g.0[level as usize].1
        } else {
            0.0
        };
        Ideal {
            g,
            level,
            at_level: 0,
            gain,
        }
    }
    fn step(&mut self) {
        self.at_level += 1;
        while self.level >= 0 && self.at_level > self.g.0[self.level as usize].2 {
            self.at_level = 1;
            self.level -= 1;
            self.gain = if self.level >= 0 {
                self.g.0[self.level as usize].1
            } else {
                0.0
            };
        }
    }
}

fn log2(x: f64) -> f64 {
    x.log2()
}

fn longs(p: &Params) -> &[i64] {
    match p {
        Params::Longs(v) => v,
        _ => &[],
    }
}

fn doubles(p: &Params) -> &[f64] {
    match p {
        Params::Doubles(v) => v,
        _ => &[],
    }
}

/// trec_eval's loop over cut-offs: `at(i, so_far)` at each cut-off reached inside the list, then for the rest.
fn at_cutoffs(
    rels: &[i64],
    cuts: &[i64],
    out: &mut [f64],
    hit: impl Fn(i64) -> bool,
    at: impl Fn(i64, i64) -> f64,
) {
    let mut ci = 0;
    let mut so_far = 0i64;
    for (i, &r) in rels.iter().enumerate() {
        if ci < cuts.len() && i as i64 == cuts[ci] {
            out[ci] = at(i as i64, so_far);
            ci += 1;
            if ci == cuts.len() {
                break;
            }
        }
        if hit(r) {
            so_far += 1;
        }
    }
    while ci < cuts.len() {
        out[ci] = at(cuts[ci], so_far);
        ci += 1;
    }
}

/// The values of `m` for one query (as many as `m.names`), into `out` (zeros on entry).
pub(crate) fn calc(
    m: &Measure,
    rr: &ResRels,
    o: &Options,
    out: &mut [f64],
    relstring: &mut String,
) {
    let level = o.relevance_level;
    let rels = &rr.rels;
    let num_ret = rr.num_ret();
    let num_rel = rr.num_rel;
    let rel_ret = rr.num_rel_ret;
    let is_rel = |r: i64| r >= level;
    match m.info.family {
        Family::Runid => {}
        Family::NumQ => out[0] = 1.0,
        Family::NumRet => out[0] = num_ret as f64,
        Family::NumRel => out[0] = num_rel as f64,
        Family::NumRelRet => out[0] = rel_ret as f64,
        Family::Map | Family::GmMap => {
            let (mut so_far, mut sum) = (0i64, 0.0);
            for (i, &r) in rels.iter().enumerate() {
                if is_rel(r) {
                    so_far += 1;
                    sum += so_far as f64 / (i + 1) as f64;
                }
            }
            if m.info.family == Family::Map {
                if so_far > 0 {
                    out[0] = sum / num_rel as f64;
                }
            } else {
                if so_far > 0 {
                    sum /= num_rel as f64;
                }
                out[0] = sum.max(MIN_GEO_MEAN).ln();
            }
        }
        Family::Rprec => {
            let look = num_ret.min(num_rel);
            if look > 0 {
                let so_far = rels[..look as usize].iter().filter(|&&r| is_rel(r)).count();
                out[0] = so_far as f64 / num_rel as f64;
            }
        }
        Family::Bpref | Family::GmBpref => {
            let num_nonrel: i64 = (0..level.max(0) as usize)
                .map(|j| rr.rel_levels.get(j).copied().unwrap_or(0))
                .sum();
            let (mut nonrel, mut bpref) = (0i64, 0.0);
            for &r in rels {
                if r == NONPOOL || r == UNJUDGED {
                    continue;
                }
                if r >= 0 && r < level {
                    nonrel += 1;
                } else if nonrel > 0 {
                    bpref += 1.0 - nonrel.min(num_rel) as f64 / num_nonrel.min(num_rel) as f64;
                } else {
                    bpref += 1.0;
                }
            }
            if num_rel != 0 {
                bpref /= num_rel as f64;
            }
            out[0] = if m.info.family == Family::Bpref {
                bpref
            } else {
                bpref.max(MIN_GEO_MEAN).ln()
            };
        }
        Family::RecipRank => {
            if let Some(i) = rels.iter().position(|&r| is_rel(r)) {
                out[0] = 1.0 / (i + 1) as f64;
            }
        }
        Family::IprecAtRecall => {
            let cuts: Vec<i64> = doubles(&m.params)
                .iter()
                .map(|p| (p * num_rel as f64).round() as i64)
                .collect();
            interpolated(rr, level, &cuts, |c, v| out[c] = v);
        }
        Family::Pt11Avg => {
            let pcts = doubles(&m.params);
            let cuts: Vec<i64> = pcts
                .iter()
                .map(|p| (p * num_rel as f64).round() as i64)
                .collect();
            let mut sum = 0.0;
            interpolated(rr, level, &cuts, |_, v| sum += v);
            out[0] = sum / pcts.len() as f64;
        }
        Family::P => at_cutoffs(rels, longs(&m.params), out, is_rel, |i, s| {
            s as f64 / i as f64
        }),
        Family::Relstring => {
            let len = (doubles(&m.params)[0] as i64).min(num_ret).max(0) as usize;
            relstring.clear();
            relstring.extend(rels[..len].iter().map(|&r| match r {
                r if r > 9 => '>',
                r if r >= 0 => (b'0' + r as u8) as char,
                NONPOOL => '-',
                UNJUDGED => '.',
                _ => '<',
            }));
        }
        Family::Recall => {
            if num_rel != 0 {
                at_cutoffs(rels, longs(&m.params), out, is_rel, |_, s| {
                    s as f64 / num_rel as f64
                });
            }
        }
        Family::InfAp => {
            let (mut nonrel, mut rel, mut unj, mut ap) = (0i64, 0i64, 0i64, 0.0);
            for (j, &r) in rels.iter().enumerate() {
                if r == NONPOOL {
                    continue;
                }
                if r == UNJUDGED {
                    unj += 1;
                    continue;
                }
                if r >= 0 && r < level {
                    nonrel += 1;
                } else {
                    rel += 1;
                    if j == 0 {
                        ap += 1.0;
                    } else {
                        let fj = j as f64;
                        ap += 1.0 / (fj + 1.0)
                            + (fj / (fj + 1.0))
                                * ((rel - 1 + nonrel + unj) as f64 / fj)
                                * (((rel - 1) as f64 + INFAP_EPSILON)
                                    / ((rel - 1 + nonrel) as f64 + 2.0 * INFAP_EPSILON));
                    }
                }
            }
            if num_rel != 0 {
                ap /= num_rel as f64;
            }
            out[0] = ap;
        }
        Family::RprecMult => {
            let cuts: Vec<i64> = doubles(&m.params)
                .iter()
                .map(|p| (p * num_rel as f64 + 0.9) as i64)
                .collect();
            let mut cc = cuts.len() as isize - 1;
            while cc >= 0 && cuts[cc as usize] > num_ret {
                out[cc as usize] = rel_ret as f64 / cuts[cc as usize] as f64;
                cc -= 1;
            }
            let mut so_far = rel_ret;
            let mut i = num_ret;
            while i > 0 && so_far > 0 {
                let precis = so_far as f64 / i as f64;
                while cc >= 0 && i == cuts[cc as usize] {
                    out[cc as usize] = precis;
                    cc -= 1;
                }
                if is_rel(rels[(i - 1) as usize]) {
                    so_far -= 1;
                }
                i -= 1;
            }
        }
        Family::Utility => {
            let c = doubles(&m.params);
            out[0] = c[0] * rel_ret as f64
                + c[1] * (num_ret - rel_ret) as f64
                + c[2] * (num_rel - rel_ret) as f64
                + c[3] * (o.num_docs_in_coll + rel_ret - num_ret - num_rel) as f64;
        }
        Family::BinG => {
            let (mut so_far, mut sum) = (0i64, 0.0);
            for (i, &r) in rels.iter().enumerate() {
                if is_rel(r) {
                    so_far += 1;
                    sum += 1.0 / log2((3 + i as i64 - so_far) as f64);
                }
            }
            if so_far > 0 {
                out[0] = sum / num_rel as f64;
            }
        }
        Family::G => out[0] = kishida_g(&Gains::new(&m.params, rr), rels),
        Family::Dcg | Family::IdealDcg | Family::Ndcg => {
            let g = Gains::new(&m.params, rr);
            let (dcg, ideal) = dcg_ideal(&g, rels);
            out[0] = match m.info.family {
                Family::Dcg => dcg,
                Family::IdealDcg => ideal,
                _ if ideal > 0.0 => dcg / ideal,
                _ => 0.0,
            };
        }
        Family::NdcgRel => out[0] = ndcg_rel(&Gains::new(&m.params, rr), rels),
        Family::Rndcg => {
            if num_rel != 0 {
                out[0] = rndcg(&Gains::new(&m.params, rr), rels);
            }
        }
        Family::NdcgCut => ndcg_cut(rr, longs(&m.params), out),
        Family::MapCut => {
            if num_rel != 0 {
                let cuts = longs(&m.params);
                let (mut ci, mut so_far, mut sum) = (0usize, 0i64, 0.0);
                for (i, &r) in rels.iter().enumerate() {
                    if i as i64 == cuts[ci] {
                        out[ci] = sum / num_rel as f64;
                        ci += 1;
                        if ci == cuts.len() {
                            break;
                        }
                    }
                    if is_rel(r) {
                        so_far += 1;
                        sum += so_far as f64 / (i + 1) as f64;
                    }
                }
                while ci < cuts.len() {
                    out[ci] = sum / num_rel as f64;
                    ci += 1;
                }
            }
        }
        Family::RelativeP => {
            if num_rel != 0 {
                at_cutoffs(rels, longs(&m.params), out, is_rel, |i, s| {
                    s as f64 / i.min(num_rel) as f64
                });
            }
        }
        Family::Success => at_cutoffs(rels, longs(&m.params), out, is_rel, |_, s| {
            if s > 0 {
                1.0
            } else {
                0.0
            }
        }),
        Family::SetP => {
            if num_ret != 0 {
                out[0] = rel_ret as f64 / num_ret as f64;
            }
        }
        Family::SetRelativeP => {
            if num_ret != 0 && num_rel != 0 {
                out[0] = rel_ret as f64 / num_ret.min(num_rel) as f64;
            }
        }
        Family::SetRecall => {
            if num_rel != 0 {
                out[0] = rel_ret as f64 / num_rel as f64;
            }
        }
        Family::SetMap => {
            if num_ret != 0 && num_rel != 0 {
                out[0] = (rel_ret as f64 * rel_ret as f64) / (num_ret as f64 * num_rel as f64);
            }
        }
        Family::SetF => {
            if rel_ret != 0 {
                let p = rel_ret as f64 / num_ret as f64;
                let r = rel_ret as f64 / num_rel as f64;
                let x = doubles(&m.params)[0];
                out[0] = (x + 1.0) * p * r / (x * p + r);
            }
        }
        Family::NumNonrelJudgedRet => {
            out[0] = (num_ret - rr.num_nonpool - rr.num_unjudged - rel_ret) as f64;
        }
        Family::Rbp => out[0] = rbp(&m.params, rr),
        Family::RbpResid => {
            let p = pair_p(&m.params);
            let (mut unj, mut sum, mut cur) = (0i64, 0.0, 1.0);
            for &r in rels {
                if r < 0 {
                    unj += 1;
                    sum += cur;
                }
                cur *= p;
            }
            if unj > 0 {
                out[0] = cur + (1.0 - p) * sum;
            }
        }
        Family::Unj => at_cutoffs(
            rels,
            longs(&m.params),
            out,
            |r| r == NONPOOL || r == UNJUDGED,
            |i, s| s as f64 / i as f64,
        ),
    }
}

/// Interpolated precision at cut-offs given in relevant documents, as `iprec_at_recall` and `11pt_avg`:
/// `put(index, value)` once per cut-off, from the last cut-off down.
fn interpolated(rr: &ResRels, level: i64, cuts: &[i64], mut put: impl FnMut(usize, f64)) {
    let num_ret = rr.num_ret();
    let mut cc = cuts.len() as isize - 1;
    while cc >= 0 && cuts[cc as usize] > rr.num_rel_ret {
        cc -= 1;
    }
    let mut int_precis = rr.num_rel_ret as f64 / num_ret as f64;
    let mut so_far = rr.num_rel_ret;
    let mut i = num_ret;
    while i > 0 && so_far > 0 {
        let precis = so_far as f64 / i as f64;
        if int_precis < precis {
            int_precis = precis;
        }
        if rr.rels[(i - 1) as usize] >= level {
            while cc >= 0 && so_far == cuts[cc as usize] {
                put(cc as usize, int_precis);
                cc -= 1;
            }
            so_far -= 1;
        }
        i -= 1;
    }
    while cc >= 0 {
        put(cc as usize, int_precis);
        cc -= 1;
    }
}

fn dcg_ideal(g: &Gains, rels: &[i64]) -> (f64, f64) {
    let (mut dcg, mut ideal_dcg) = (0.0, 0.0);
    let mut ideal = Ideal::new(g);
    let mut i = 0usize;
    while i < rels.len() && ideal.gain > 0.0 {
        let rg = g.gain(rels[i]);
        if rg != 0.0 {
            dcg += rg / log2((i + 2) as f64);
        }
        ideal.step();
        if ideal.gain > 0.0 {
            ideal_dcg += ideal.gain / log2((i + 2) as f64);
        }
        i += 1;
    }
    while i < rels.len() {
        let rg = g.gain(rels[i]);
        if rg != 0.0 {
            dcg += rg / log2((i + 2) as f64);
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        ideal.step();
        if ideal.gain > 0.0 {
            ideal_dcg += ideal.gain / log2((i + 2) as f64);
        }
        i += 1;
    }
    (dcg, ideal_dcg)
}

fn ndcg_rel(g: &Gains, rels: &[i64]) -> f64 {
    let (mut dcg, mut ideal_dcg, mut sum) = (0.0, 0.0, 0.0);
    let (mut n_rel_ret, mut n_rel) = (0i64, 0i64);
    let mut ideal = Ideal::new(g);
    let mut i = 0usize;
    while i < rels.len() && ideal.gain > 0.0 {
        let rg = g.gain(rels[i]);
        if rg != 0.0 {
            dcg += rg / log2((i + 2) as f64);
        }
        ideal.step();
        if ideal.gain > 0.0 {
            n_rel += 1;
            ideal_dcg += ideal.gain / log2((i + 2) as f64);
        }
        if rg > 0.0 {
            sum += dcg / ideal_dcg;
            n_rel_ret += 1;
        }
        i += 1;
    }
    while i < rels.len() {
        let rg = g.gain(rels[i]);
        if rg != 0.0 {
            dcg += rg / log2((i + 2) as f64);
        }
        if rg > 0.0 {
            sum += dcg / ideal_dcg;
            n_rel_ret += 1;
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        ideal.step();
        if ideal.gain > 0.0 {
            n_rel += 1;
            ideal_dcg += ideal.gain / log2((i + 2) as f64);
        }
        i += 1;
    }
    sum += (n_rel - n_rel_ret) as f64 * dcg / ideal_dcg;
    if sum > 0.0 {
        sum / n_rel as f64
    } else {
        0.0
    }
}

fn rndcg(g: &Gains, rels: &[i64]) -> f64 {
    let (mut dcg, mut ideal_dcg, mut sum) = (0.0, 0.0, 0.0);
    let mut changed = 0i64;
    let mut ideal = Ideal::new(g);
    let mut old = ideal.gain;
    let mut i = 0usize;
    while i < rels.len() && ideal.gain > 0.0 {
        let rg = g.gain(rels[i]);
        ideal.step();
        if old != ideal.gain {
            if ideal_dcg > 0.0 {
                sum += dcg / ideal_dcg;
                changed += 1;
            }
            old = ideal.gain;
        }
        if rg != 0.0 {
            dcg += rg / log2((i + 2) as f64);
        }
        if ideal.gain > 0.0 {
            ideal_dcg += ideal.gain / log2((i + 2) as f64);
        }
        i += 1;
    }
    if i < rels.len() {
        while i < rels.len() {
            let rg = g.gain(rels[i]);
            if rg != 0.0 {
                dcg += rg / log2((i + 2) as f64);
            }
            i += 1;
        }
        if ideal_dcg > 0.0 {
            sum += dcg / ideal_dcg;
            changed += 1;
        }
    }
    while ideal.gain > 0.0 {
        ideal.step();
        if old != ideal.gain {
            if ideal_dcg > 0.0 {
                sum += dcg / ideal_dcg;
                changed += 1;
            }
            old = ideal.gain;
        }
        if ideal.gain > 0.0 {
            ideal_dcg += ideal.gain / log2((i + 2) as f64);
        }
        i += 1;
    }
    sum / changed as f64
}

fn kishida_g(g: &Gains, rels: &[i64]) -> f64 {
    let (mut results_g, mut sum_results, mut sum_ideal, mut sum_cost) = (0.0, 0.0, 0.0, 0.0);
    let min_cost = 1.0;
    let mut ideal = Ideal::new(g);
    let mut i = 0usize;
    while i < rels.len() && ideal.gain > 0.0 {
        let rg = g.gain(rels[i]);
        sum_results += rg;
        ideal.step();
        if ideal.gain > 0.0 {
            sum_ideal += ideal.gain;
        }
        sum_cost += if ideal.gain >= min_cost {
            ideal.gain
        } else {
            min_cost
        };
        if rg != 0.0 {
            results_g += rg / log2(2.0 + sum_cost - sum_results);
        }
        i += 1;
    }
    while i < rels.len() {
        let rg = g.gain(rels[i]);
        sum_results += rg;
        sum_cost += min_cost;
        if rg != 0.0 {
            results_g += rg / log2(2.0 + sum_cost - sum_results);
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        ideal.step();
        if ideal.gain > 0.0 {
            sum_ideal += ideal.gain;
        }
    }
    if sum_ideal > 0.0 {
        results_g / sum_ideal
    } else {
        0.0
    }
}

fn ndcg_cut(rr: &ResRels, cuts: &[i64], out: &mut [f64]) {
    let mut ci = 0usize;
    let mut sum = 0.0;
    for (i, &r) in rr.rels.iter().enumerate() {
        if i as i64 == cuts[ci] {
            out[ci] = sum;
            ci += 1;
            if ci == cuts.len() {
                break;
            }
        }
        let gain = r as f64;
        if gain > 0.0 {
            sum += gain / log2((i + 2) as f64);
        }
    }
    while ci < cuts.len() {
        out[ci] = sum;
        ci += 1;
    }
    ci = 0;
    let mut cur = rr.num_rel_levels as isize - 1;
    let mut count = 0i64;
    let mut ideal = 0.0;
    let level = |l: isize| rr.rel_levels.get(l as usize).copied().unwrap_or(0);
    let mut i = 0i64;
    loop {
        count += 1;
        while cur > 0 && count > level(cur) {
            cur -= 1;
            count = 1;
        }
        if cur <= 0 {
            break;
        }
        if i == cuts[ci] {
            if ideal > 0.0 {
                out[ci] /= ideal;
            }
            ci += 1;
            if ci == cuts.len() {
                break;
            }
        }
        ideal += cur as f64 / log2((i + 2) as f64);
        i += 1;
    }
    while ci < cuts.len() {
        if ideal > 0.0 {
            out[ci] /= ideal;
        }
        ci += 1;
    }
}

fn pair_p(params: &Params) -> f64 {
    let mut p = 0.9;
    if let Params::Pairs(pairs) = params {
        for (k, v) in pairs {
            if k == "p" {
                p = *v;
            }
        }
    }
    p
}

fn rbp(params: &Params, rr: &ResRels) -> f64 {
    let p = pair_p(params);
    let mut g = Gains::new(params, rr);
    // trec_eval leaves min and max uninitialised; built without optimisation they start at 0.
    let (mut min, mut max) = (0.0f64, 0.0f64);
    for x in &g.0 {
        if x.1 < min {
            min = x.1;
        }
        if x.1 > max {
            max = x.1;
        }
    }
    if min < 0.0 || max > 1.0 {
        for x in &mut g.0 {
            x.1 = (x.1 - min) / (max - min);
        }
    }
    let (mut sum, mut cur) = (0.0, 1.0);
    for &r in &rr.rels {
        let gain = g.gain(r);
        if gain != 0.0 {
            sum += gain * cur;
        }
        cur *= p;
    }
    (1.0 - p) * sum
}
