//! Tests of `src/dataset.rs`.

use ltr_data::*;
use ndarray::Array2;

#[test]
fn a_sparse_product_ignores_columns_the_weights_do_not_cover() {
    let indices = [0u32, 2, 3, 5, 7, 8];
    let values = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let w: Vec<f64> = (0..9).map(|j| (j + 1) as f64).collect();
    // Every column covered: 1·1 + 2·3 + 3·4 + 4·6 + 5·8 + 6·9.
    assert_eq!(dot_sparse(&indices, &values, &w), 137.0);
    // The weights stop before column 7: the last two stored values count as zero.
    assert_eq!(dot_sparse(&indices, &values, &w[..7]), 43.0);
    assert_eq!(dot_sparse(&indices, &values, &w[..6]), 43.0);
    assert_eq!(dot_sparse(&indices, &values, &[]), 0.0);
    assert_eq!(dot_sparse(&[], &[], &w), 0.0);
    let row = Row::Sparse {
        indices: &indices,
        values: &values,
    };
    assert_eq!(row.dot(&w[..8]), 83.0);
}

/// Four rows at once give each row's own product bit for bit, at every length (full lanes and tails), with
/// values whose sums round differently in another order, and with rows of unequal lengths.
#[test]
fn rows_taken_four_at_once_score_as_one_at_a_time() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(54);
    for n in 0usize..23 {
        let rows: Vec<Vec<f32>> = (0..4)
            .map(|_| {
                (0..n)
                    .map(|_| rng.random_range(-1.0f32..1.0) * 10f32.powi(rng.random_range(-8..8)))
                    .collect()
            })
            .collect();
        let w: Vec<f64> = (0..n + 2)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-9..9)))
            .collect();
        for wl in [n, n + 2, n.saturating_sub(1)] {
            let w = &w[..wl];
            let x = [&rows[0][..], &rows[1][..], &rows[2][..], &rows[3][..]];
            let four = dot_dense_rows(x, w);
            for r in 0..4 {
                assert_eq!(
                    four[r].to_bits(),
                    dot_dense(x[r], w).to_bits(),
                    "n {n}, w {wl}, row {r}"
                );
            }
            let short = [&rows[0][..], &rows[1][..n / 2], &rows[2][..], &rows[3][..]];
            let four = dot_dense_rows(short, w);
            for r in 0..4 {
                assert_eq!(four[r].to_bits(), dot_dense(short[r], w).to_bits());
            }
        }
    }
    // Whole datasets, dense and sparse, scored in blocks and by query: as row by row.
    for dense in [true, false] {
        let ds = five_queries(dense);
        let w = [0.3, -1.7e-3, 2.5, 1e9];
        let each: Vec<u64> = (0..ds.n_docs())
            .map(|i| ds.row(i).dot(&w).to_bits())
            .collect();
        let all: Vec<u64> = ds.scores(&w).iter().map(|s| s.to_bits()).collect();
        assert_eq!(all, each);
        let mut by_query = Vec::new();
        for q in ds.queries() {
            let mut out = vec![0.0; q.len()];
            q.scores_into(&w, &mut out);
            by_query.extend(out.iter().map(|s| s.to_bits()));
        }
        assert_eq!(by_query, each);
    }
}

/// Five queries of 1–4 documents with doc ids, comments, query weights, propensities and positions.
fn five_queries(dense: bool) -> Dataset {
    let sizes = [3usize, 1, 4, 2, 3];
    let n: usize = sizes.iter().sum();
    let (d, mut offsets) = (4, vec![0]);
    for s in sizes {
        offsets.push(offsets.last().unwrap() + s);
    }
    let a = Array2::from_shape_fn((n, d), |(i, j)| {
        if (i + j) % 3 == 0 {
            0.0
        } else {
            (i * d + j) as f32
        }
    });
    let mut ds = Dataset::new(
        FeatureMatrix::Dense(a),
        (0..n).map(|i| (i % 3) as f32).collect(),
        offsets,
        (0..sizes.len()).map(|q| format!("q{q}")).collect(),
    )
    .unwrap();
    if !dense {
        ds.to_sparse();
    }
    let text = |p: &str| {
        let mut c = TextColumn::new();
        (0..n).for_each(|i| c.push(&format!("{p}{}", "é".repeat(i % 3))));
        c
    };
    ds.with_docids(text("d"))
        .unwrap()
        .with_comments(text("# c"))
        .unwrap()
        .with_query_weights(vec![1.0, 2.0, 3.0, 4.0, 5.0])
        .unwrap()
        .with_propensities(vec![0.5, 0.4, 0.3, 0.2, 0.1])
        .unwrap()
        .with_positions(sizes.iter().flat_map(|&s| (0..s as u32).rev()).collect())
        .unwrap()
}

#[test]
fn positions_are_one_per_row_and_distinct_within_a_query() {
    let ds = five_queries(true);
    assert_eq!(ds.positions().unwrap()[..4], [2, 1, 0, 0]);
    let err = |p: Vec<u32>| ds.clone().with_positions(p).unwrap_err().to_string();
    assert!(err(vec![0; 3]).contains("3 positions for 13 rows"));
    let mut twice: Vec<u32> = ds.positions().unwrap().to_vec();
    twice[1] = 2;
    assert!(err(twice).contains("query q0 shows two documents at position 2"));
}

#[test]
fn split_off_queries_gives_what_select_queries_gives() {
    for dense in [true, false] {
        for at in 0..=5 {
            let all = five_queries(dense);
            let mut head = all.clone();
            let tail = head.split_off_queries(at);
            assert_eq!(
                head,
                all.select_queries(&(0..at).collect::<Vec<_>>()),
                "dense {dense}, at {at}"
            );
            assert_eq!(
                tail,
                all.select_queries(&(at..5).collect::<Vec<_>>()),
                "dense {dense}, at {at}"
            );
            assert_eq!(head.n_docs() + tail.n_docs(), all.n_docs());
        }
    }
    // A matrix not in standard (row-major) layout is split too.
    let all = five_queries(true);
    let mut t = all.clone();
    if let FeatureMatrix::Dense(a) = all.features() {
        use ndarray::ShapeBuilder;
        let mut f = Array2::zeros(a.raw_dim().f());
        f.assign(a);
        *t.features_mut() = FeatureMatrix::Dense(f);
    }
    let tail = t.split_off_queries(2);
    assert_eq!(t, all.select_queries(&[0, 1]));
    assert_eq!(tail, all.select_queries(&[2, 3, 4]));
}

#[test]
fn retain_queries_gives_what_select_queries_gives() {
    for dense in [true, false] {
        for start in 0..=5 {
            for end in start..=5 {
                let all = five_queries(dense);
                let mut kept = all.clone();
                kept.retain_queries(start..end);
                let want = all.select_queries(&(start..end).collect::<Vec<_>>());
                assert_eq!(kept, want, "dense {dense}, {start}..{end}");
            }
        }
    }
}

/// Each query's weight times its label sum, normalised to sum to 1; refused when a sum is negative or all are 0.
#[test]
fn label_sum_weights_are_query_weights_times_label_sums() {
    // Labels i % 3 over queries of 3, 1, 4, 2, 3 rows: sums 3, 0, 4, 2, 3; query weights 1–5.
    let ds = five_queries(true);
    let w = ds.label_sum_weights().unwrap();
    let raw = [3.0, 0.0, 12.0, 8.0, 15.0];
    let total: f64 = raw.iter().sum();
    for (got, want) in w.iter().zip(raw) {
        assert!((got - want / total).abs() < 1e-15, "{w:?}");
    }
    let plain = |labels: Vec<f32>| {
        Dataset::new(
            FeatureMatrix::Dense(Array2::zeros((3, 1))),
            labels,
            vec![0, 2, 3],
            vec!["a".into(), "b".into()],
        )
        .unwrap()
    };
    // No query weights: the label sums alone.
    assert_eq!(
        plain(vec![1.0, 1.0, 2.0]).label_sum_weights().unwrap(),
        vec![0.5, 0.5]
    );
    let e = plain(vec![1.0, -2.0, 1.0])
        .label_sum_weights()
        .unwrap_err()
        .to_string();
    assert!(e.contains("query a") && e.contains("non-negative"), "{e}");
    let e = plain(vec![0.0; 3])
        .label_sum_weights()
        .unwrap_err()
        .to_string();
    assert!(e.contains("every query's labels sum to 0"), "{e}");
}
