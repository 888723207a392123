//! Tests of `src/grow.rs`.

use ltr_trees::*;

/// to half a unit.
#[test]
fn fixed_point_sums_cannot_overflow_and_round_trip() {
    for (max, docs) in [
        (1.0, 1usize),
        (0.75, 9630),
        (3e5, 3_776_267),
        (1e-300, 10),
        (1e300, 10),
    ] {
        let s = Scale::new(max, max, docs);
        let q = s.quantise(max, -max);
        assert!(
            (q[0] as i128).abs() * docs as i128 <= 1i128 << 62,
            "{max} {docs}"
        );
        let back = s.cell(Sums {
            g: q[0],
            h: q[1],
            n: 1,
        });
        assert!((back.g - max).abs() <= 0.5 * s.g_unit, "{max}: {}", back.g);
    }
    // Nothing but zeros: any scale.
    assert_eq!(Scale::new(0.0, 0.0, 5).quantise(0.0, 0.0), [0, 0]);
}
