//! Inferred AP (Yilmaz & Aslam 2006) in trec_eval's form (`infAP`).
//!
//! trec_eval tells three kinds of retrieved document apart: outside the pool (absent from the qrels), in the pool
//! but unjudged (a negative qrels value, the mark of a judged sample), and judged (grade ≥ 0). Walking the ranking,
//! documents outside the pool are skipped; at each relevant document at 0-based position j (j > 0) with `rel`
//! relevant, `non` judged non-relevant and `unj` pooled-unjudged documents above it, the estimated precision is
//!
//! 1/(j + 1) + (j/(j + 1)) · ((rel + non + unj)/j) · ((rel + ε)/(rel + non + 2ε)),  ε = 1e-5,
//!
//! (1 at j = 0), and infAP is their sum over R, the judged relevant documents retrieved or not (0 when R = 0).
//! With complete judgments of the pool it is AP over the pooled documents.

/// trec_eval's `INFAP_EPSILON`.
const EPSILON: f64 = 1e-5;

/// infAP of one query: `labels` of the retrieved documents (NaN = outside the pool, −∞ = pooled but unjudged, else
/// the grade) visited in ranked `order`, R the judged relevant documents retrieved or not, `relevant` the grade test.
pub(crate) fn inf_ap(
    labels: &[f32],
    order: &[usize],
    r: usize,
    relevant: impl Fn(f32) -> bool,
) -> f64 {
    if r == 0 {
        return 0.0;
    }
    let (mut rel, mut non, mut unj) = (0usize, 0usize, 0usize);
    let mut sum = 0.0;
    for (j, &d) in order.iter().enumerate() {
        let l = labels[d];
        if l.is_nan() {
            continue;
        }
        if !l.is_finite() {
            unj += 1;
        } else if !relevant(l) {
            non += 1;
        } else {
            if j == 0 {
                sum += 1.0;
            } else {
                let fj = j as f64;
                let above = (rel + non + unj) as f64 / fj;
                let share = (rel as f64 + EPSILON) / ((rel + non) as f64 + 2.0 * EPSILON);
                sum += 1.0 / (fj + 1.0) + fj / (fj + 1.0) * above * share;
            }
            rel += 1;
        }
    }
    sum / r as f64
}
