//! Tests of `src/foreign_tree.rs`.

use ltr_data::Row;
use ltr_export::foreign_tree::*;
use ltr_export::*;

/// Every f32 around `t`, and special values.
fn probes(t: f32) -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    v.extend([f32::from_bits(1), -f32::from_bits(1), ZERO_BAND, -ZERO_BAND]);
    if t.is_finite() {
        let mut x = t;
        let mut y = t;
        for _ in 0..4 {
            x = f32_below(x).unwrap_or(x);
            y = f32_below(-y).map_or(y, |b| -b);
            v.extend([x, y]);
        }
        v.push(t);
    }
    v
}

#[test]
fn strict_thresholds_become_the_f32_below() {
    for t in [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        4.0,
        0.5149597,
        -1.0582902,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
    ] {
        let b = f32_below(t).unwrap();
        for v in probes(t) {
            assert_eq!(v <= b, v < t, "t={t:e} v={v:e} b={b:e}");
        }
    }
    assert_eq!(f32_below(f32::NEG_INFINITY), None);
    assert_eq!(f32_below(0.0), Some(-f32::from_bits(1)));
    assert_eq!(f32_below(-0.0), Some(-f32::from_bits(1)));
}

#[test]
fn f64_thresholds_become_the_f32_at_most() {
    let ts = [
        0.0f64,
        -0.0,
        3.5000000000000004,
        0.5511593222618104,
        -1.0557883381843565,
        1e300,
        -1e300,
        1e-35,
        1.0000000180025095e-35,
        -1e-40,
        1e-46,
        -1e-46,
        f32::MAX as f64 * 1.0000001,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.1,
    ];
    for t in ts {
        let a = f32_at_most(t).unwrap();
        for v in probes(t as f32).into_iter().chain(probes(a)) {
            assert_eq!(v <= a, (v as f64) <= t, "t={t:e} v={v:e} a={a:e}");
        }
    }
    assert_eq!(f32_at_most(3.5000000000000004), Some(3.5));
    assert_eq!(f32_at_most(0.1), Some(f32_below(0.1f32).unwrap()));
}

/// LightGBM's rule for one split, as documented (value as f64; NaN is 0 unless the missing type is NaN).
fn lightgbm_left(v: f32, t: f64, missing: u8, default_left: bool) -> bool {
    let mut x = v as f64;
    if x.is_nan() && missing != 2 {
        x = 0.0;
    }
    let zero = (-(ZERO_BAND as f64)..=ZERO_BAND as f64).contains(&x);
    if (missing == 1 && zero) || (missing == 2 && x.is_nan()) {
        return default_left;
    }
    x <= t
}

#[test]
fn every_lightgbm_missing_type_is_exact() {
    for t in [
        -2.0,
        -1e-35,
        -1e-36,
        -0.0,
        0.0,
        1e-36,
        1.0000000180025095e-35,
        1e-30,
        3.0,
    ] {
        for missing in 0u8..3 {
            for default_left in [false, true] {
                let t32 = f32_at_most(t).unwrap();
                let test = match missing {
                    0 => Test::Le {
                        t: t32,
                        default_left: 0.0 <= t,
                    },
                    1 => Test::ZeroBand {
                        t: t32,
                        default_left,
                    },
                    _ => Test::Le {
                        t: t32,
                        default_left,
                    },
                };
                let raw = RawTree {
                    nodes: vec![RawNode {
                        feature: 0,
                        test,
                        left: Child::Leaf(0),
                        right: Child::Leaf(1),
                    }],
                    leaves: vec![1.0, 2.0],
                };
                let f = raw.to_forest(1.0, 1).unwrap();
                let mut vs = probes(t as f32);
                vs.extend(probes(t32));
                vs.push(f32::NAN);
                for v in vs {
                    let want = if lightgbm_left(v, t, missing, default_left) {
                        1.0
                    } else {
                        2.0
                    };
                    assert_eq!(
                        f.output(&Row::Dense(&[v])),
                        want,
                        "t={t:e} missing={missing} dl={default_left} v={v:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn malformed_source_trees_are_refused() {
    let node = |left, right| RawNode {
        feature: 0,
        test: Test::Le {
            t: 0.0,
            default_left: true,
        },
        left,
        right,
    };
    let t = RawTree {
        nodes: vec![node(Child::Leaf(0), Child::Leaf(0))],
        leaves: vec![1.0, 2.0],
    };
    assert!(t.to_forest(1.0, 1).unwrap_err().contains("another split"));
    let t = RawTree {
        nodes: vec![node(Child::Leaf(0), Child::Node(0))],
        leaves: vec![1.0, 2.0],
    };
    assert!(t.to_forest(1.0, 1).unwrap_err().contains("out of range"));
    let t = RawTree {
        nodes: vec![node(Child::Leaf(0), Child::Leaf(1))],
        leaves: vec![1.0, 2.0],
    };
    assert!(t.to_forest(1.0, 0).unwrap_err().contains("feature index 0"));
    let t = RawTree {
        nodes: vec![],
        leaves: vec![f64::NAN],
    };
    assert!(t.to_forest(1.0, 1).unwrap_err().contains("not finite"));
}

#[test]
fn content_decides_the_kind() {
    assert!(is_foreign_model(b"tree\nversion=v4\nnum_class=1\n"));
    assert!(is_foreign_model(b"{\"learner\": {}}"));
    assert!(is_foreign_model(
        b"{\"name\": \"tree\", \"version\": \"v4\"}"
    ));
    assert!(!is_foreign_model(b"{\n  \"format_version\": 3"));
    assert!(!is_foreign_model(b"## LambdaMART\n"));
}
