//! RankBoost's threshold rankers as depth-1 trees on raw feature values.

use ltr_core::{Model, ModelFile};

use crate::{ExportError, Result};

/// One weak ranker on a raw feature: it adds `alpha` when the raw value is strictly above `threshold` (engines send
/// a value ≤ the threshold left, to output 0, and a larger one right, to `alpha`).
#[derive(Debug, Clone, PartialEq)]
pub struct RawStump {
    /// The feature's number in the data file (1-based).
    pub feature: usize,
    /// Its name.
    pub name: String,
    /// The threshold on the raw value.
    pub threshold: f32,
    /// The weight.
    pub alpha: f64,
}

/// f32 in its numeric order as an integer (−0 and +0 share 0).
// pub for the tests in tests/unit/trees.rs; not API.
#[doc(hidden)]
pub fn key(x: f32) -> i64 {
    let b = x.to_bits();
    if b >> 31 == 1 {
        -((b & 0x7fff_ffff) as i64)
    } else {
        b as i64
    }
}

/// The f32 at position `k` of [`key`]'s order (0 is +0).
// pub for the tests in tests/unit/trees.rs; not API.
#[doc(hidden)]
pub fn value(k: i64) -> f32 {
    if k >= 0 {
        f32::from_bits(k as u32)
    } else {
        f32::from_bits((-k) as u32 | 0x8000_0000)
    }
}

/// The largest raw value `r` with `f(r) ≤ theta`, for a non-decreasing `f`; `None` when every or no finite raw
/// value fires (the ranker is then a constant and changes no ranking).
// pub for the tests in tests/unit/trees.rs; not API.
#[doc(hidden)]
pub fn raw_threshold(f: impl Fn(f32) -> f32, theta: f32) -> Option<f32> {
    let (mut lo, mut hi) = (key(-f32::MAX), key(f32::MAX));
    if f(value(lo)) > theta || f(value(hi)) <= theta {
        return None;
    }
    // Invariant: f(value(lo)) ≤ theta < f(value(hi)).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if f(value(mid)) <= theta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(value(lo))
}

/// RankBoost's stumps carried back to raw feature values through the stored preprocessing, exactly: each
/// threshold becomes the largest raw float whose preprocessed value does not fire, so an engine comparing raw values
/// fires on the same documents as `ltr predict`. Stumps on features that were constant in training are dropped
/// (they add the same amount to every document).
pub fn raw_stumps(model: &ModelFile, target: &str) -> Result<Vec<RawStump>> {
    let Model::Stumps(e) = &model.model else {
        return Err(ExportError::Unsupported {
            target: target.into(),
            reason: "not a tree model".into(),
        });
    };
    let pre = model.preprocess.as_ref();
    let mut out = Vec::with_capacity(e.stumps.len());
    for s in &e.stumps {
        let (feature, threshold) = match pre {
            None => (s.feature + 1, Some(s.threshold)),
            Some(p) => {
                if p.transform_value(s.feature, 0.0).is_none() {
                    return Err(ExportError::Unsupported {
                        target: target.into(),
                        reason: "the model normalises per query, which needs every document of the query before scoring one; retrain with --normalize zscore, minmax or none".into(),
                    });
                }
                let feature = p.features.as_ref().map_or(s.feature + 1, |f| f[s.feature]);
                let f = |r: f32| p.transform_value(s.feature, r).expect("checked above");
                (feature, raw_threshold(f, s.threshold))
            }
        };
        let Some(threshold) = threshold else {
            continue;
        };
        let name = model.feature_name(feature);
        out.push(RawStump {
            feature,
            name,
            threshold,
            alpha: s.alpha,
        });
    }
    Ok(out)
}
