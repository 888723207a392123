use ltr_data::TextColumn;
use ltr_metrics::rank::*;
use ltr_metrics::*;

#[test]
fn fast_ranking_matches_comparator_ranking() {
    let s = [0.5, -0.0, 0.0, 3.0, -2.0, 0.5, f64::MIN_POSITIVE, -1e300];
    for t in [
        TiePolicy::InputOrder,
        TiePolicy::ReverseInput,
        TiePolicy::Expected,
    ] {
        assert_eq!(fast_ranking(&s, t), Ranking::new(&s, t, None));
    }
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut rng = ltr_testdata::XorShift64::new(seed);
    move || rng.next_u64()
}

/// Long queries take the bucket or radix sort: the same order and groups as the comparator, on scores with many
/// ties, both zeros, negatives, extremes and far outliers, with one set of buffers reused across queries of
/// varying length.
#[test]
fn radix_ranking_matches_comparator_ranking_with_ties() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let mut buf = RankBuffers::default();
    let mut out = Ranking {
        order: Vec::new(),
        groups: Vec::new(),
    };
    for n in [0, 1, 2, 63, 64, 255, 256, 257, 1000, 3000, 65_536, 65_537] {
        for distinct in [2u64, 17, 20_000, 1_000_000_007] {
            for shape in 0..3 {
                if n > 5000 && shape > 0 {
                    continue;
                }
                let s: Vec<f64> = (0..n)
                    .map(|_| match (shape, next() % 8) {
                        (0, 0) => -0.0,
                        (0, 1) => 0.0,
                        (0, 2) => f64::MAX,
                        (0, 3) => -f64::MIN_POSITIVE,
                        // Clustered: many close scores share a bucket, with one far outlier in 8.
                        (1, 0) => 1e12,
                        (1, _) => 1.0 + (next() % distinct) as f64 * 1e-9,
                        _ => ((next() % distinct) as f64 - distinct as f64 / 2.0) / 7.0,
                    })
                    .collect();
                for t in [
                    TiePolicy::InputOrder,
                    TiePolicy::ReverseInput,
                    TiePolicy::Expected,
                ] {
                    let want = Ranking::new(&s, t, None);
                    fast_ranking_into(&s, t, &mut buf, &mut out);
                    assert_eq!(out, want, "n {n}, {distinct} values, shape {shape}, {t:?}");
                    assert_eq!(fast_ranking(&s, t), want);
                }
            }
        }
    }
}

/// Doc-id tie order: equal scores by id descending, then input order, through both the bucket and the key path
/// (few distinct scores send a query to the key path).
#[test]
fn doc_id_ties_match_comparator() {
    let mut next = xorshift(0x1234_5678_9abc_def1);
    let mut buf = RankBuffers::default();
    let mut order = Vec::new();
    for n in [2usize, 70, 300, 1000] {
        for distinct in [3u64, 400, 20_000, 1_000_000_007] {
            let s: Vec<f64> = (0..n).map(|_| (next() % distinct) as f64 / 3.0).collect();
            let mut column = TextColumn::new();
            column.push("before");
            for _ in 0..n {
                column.push(&format!("d{}", next() % 50));
            }
            let id = |d: usize| column.get(1 + d);
            let want = Ranking::new(&s, TiePolicy::DocIdDescending, Some(&id));
            let ids = DocIds::Column {
                column: &column,
                start: 1,
            };
            rank_order(
                &s,
                TiePolicy::DocIdDescending,
                Some(ids),
                &mut buf,
                &mut order,
            );
            let got: Vec<usize> = order.iter().map(|&d| d as usize).collect();
            assert_eq!(got, want.order, "n {n}, {distinct} values");
        }
    }
}

/// Scores already in rank order (as TREC runs are written) take the pass that keeps the input order: the same
/// order as the comparator under every tie policy, with ties at the start, in the middle and at the end (in
/// doc-id order and out of it), −0 next to +0, every score equal, and inputs out of order that must take the
/// sorts (reversed, one pair swapped at the end). Lengths cover the key sort, the bucket sort and the radix sort.
#[test]
fn ranked_input_matches_comparator() {
    let mut next = xorshift(0x5151_7e57_0dd5_eed1);
    let mut buf = RankBuffers::default();
    let mut order = Vec::new();
    for n in [2usize, 3, 17, 64, 100, 300, 1000] {
        for shape in 0..7 {
            let mut s: Vec<f64> = (0..n).map(|_| (next() % 1000) as f64 / 7.0).collect();
            s.sort_by(|a, b| b.partial_cmp(a).unwrap());
            match shape {
                // Distinct scores.
                0 => s
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| *x = (n - i) as f64),
                // Ties in the middle, at the start and at the end.
                1 => {
                    s[n / 2] = s[n / 2 - 1];
                    s[1] = s[0];
                    s[n - 1] = s[n - 2];
                }
                // −0 beside +0 (equal scores).
                2 => {
                    s.iter_mut()
                        .enumerate()
                        .for_each(|(i, x)| *x = (n / 2) as f64 - i as f64);
                    s[n / 2] = -0.0;
                    if n / 2 > 0 {
                        s[n / 2 - 1] = 0.0;
                    }
                    s[n / 2..].sort_by(|a, b| b.partial_cmp(a).unwrap());
                }
                // Every score equal.
                3 => s.iter_mut().for_each(|x| *x = 1.5),
                // Reversed: ascending.
                4 => s.reverse(),
                // In order but for the last pair.
                5 => s.swap(n - 2, n - 1),
                // Few distinct values: long runs of ties.
                _ => s.iter_mut().for_each(|x| *x = (*x * 7.0 / 200.0).floor()),
            }
            let mut column = TextColumn::new();
            for _ in 0..n {
                column.push(&format!("d{}", next() % 40));
            }
            let id = |d: usize| column.get(d);
            let ids = DocIds::Column {
                column: &column,
                start: 0,
            };
            for t in [
                TiePolicy::InputOrder,
                TiePolicy::ReverseInput,
                TiePolicy::Expected,
                TiePolicy::DocIdDescending,
            ] {
                let want = Ranking::new(&s, t, Some(&id));
                rank_order(&s, t, Some(ids), &mut buf, &mut order);
                let got: Vec<usize> = order.iter().map(|&d| d as usize).collect();
                assert_eq!(got, want.order, "n {n}, shape {shape}, {t:?}");
                let mut r = Ranking {
                    order: Vec::new(),
                    groups: Vec::new(),
                };
                ranking_from_order(&s, t, &order, &mut r);
                assert_eq!(r, want, "n {n}, shape {shape}, {t:?}");
            }
        }
    }
}

/// The ranked-input test: only inputs that never increase pass it, and it reports equal neighbours.
#[test]
fn descending_detects_order_and_ties() {
    assert_eq!(descending(&[]), Some(false));
    assert_eq!(descending(&[1.0]), Some(false));
    assert_eq!(descending(&[2.0, 1.0]), Some(false));
    assert_eq!(descending(&[1.0, 2.0]), None);
    assert_eq!(descending(&[0.0, -0.0]), Some(true));
    assert_eq!(descending(&[-0.0, 0.0]), Some(true));
    assert_eq!(descending(&[1.0, f64::NAN]), None);
    let mut s: Vec<f64> = (0..100).rev().map(f64::from).collect();
    assert_eq!(descending(&s), Some(false));
    s[40] = s[41];
    assert_eq!(descending(&s), Some(true));
    s[99] = 5.0;
    assert_eq!(descending(&s), None);
}
