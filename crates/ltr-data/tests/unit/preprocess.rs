//! Tests of `src/preprocess.rs`.

use ltr_data::*;

fn raw() -> Dataset {
    let mut ds = generate_letor_like(&SyntheticConfig {
        queries: 6,
        features: 4,
        query_level_norm: false,
        seed: 3,
        ..Default::default()
    })
    .unwrap();
    ds.to_dense();
    let FeatureMatrix::Dense(a) = ds.features_mut() else {
        unreachable!()
    };
    a.column_mut(1).mapv_inplace(|v| v * 1000.0 + 5.0); // a raw, heavy column
    a.column_mut(3).fill(7.0); // a constant column
    ds
}

#[test]
fn zscore_is_fitted_on_train_and_constant_columns_map_to_zero() {
    let ds = raw();
    let spec = PreprocessSpec {
        normalize: Some(NormalizeKind::ZScore),
        ..Default::default()
    };
    let p = spec.fit(&ds).unwrap().unwrap();
    let t = p.apply(&ds).unwrap();
    for j in 0..3 {
        let col: Vec<f64> = (0..t.n_docs()).map(|i| t.row(i).get(j) as f64).collect();
        let mean = col.iter().sum::<f64>() / col.len() as f64;
        let var = col.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / col.len() as f64;
        assert!(
            mean.abs() < 1e-5 && (var - 1.0).abs() < 1e-4,
            "{j}: {mean} {var}"
        );
    }
    assert!((0..t.n_docs()).all(|i| t.row(i).get(3) == 0.0));
    // A wider file than the training data is refused.
    let mut wide = ds.clone();
    wide.set_n_features(9).unwrap();
    assert!(p.apply(&wide).is_err());
}

/// A NaN (a missing value, which the tree learners take) stays NaN under every normalisation, and the other
/// values come out as they do when its document is left out: the statistics are those of the present values.
/// A feature whose present values are constant, or that has none in a query, keeps its NaN too.
#[test]
fn nan_stays_missing_and_out_of_every_statistic() {
    let data = |col: &[[f32; 3]]| {
        let x = ndarray::Array2::from_shape_fn((col.len(), 3), |(i, j)| col[i][j]);
        let n = col.len();
        let offsets = vec![0, n - 2, n];
        let labels = vec![0.0; n];
        Dataset::new(
            FeatureMatrix::Dense(x),
            labels,
            offsets,
            vec!["a".into(), "b".into()],
        )
        .unwrap()
    };
    let nan = f32::NAN;
    // Row 1 is missing everywhere; column 1 is missing or 7, column 2 is missing in every row but one.
    let with = data(&[
        [1.0, 7.0, nan],
        [nan, nan, nan],
        [30.0, 7.0, nan],
        [2.0, nan, 4.0],
        [50.0, 7.0, nan],
    ]);
    let without = data(&[
        [1.0, 7.0, nan],
        [30.0, 7.0, nan],
        [2.0, nan, 4.0],
        [50.0, 7.0, nan],
    ]);
    assert_eq!(with.first_nan(), Some((0, 2)));
    for kind in [
        NormalizeKind::Auto,
        NormalizeKind::ZScore,
        NormalizeKind::MinMax,
        NormalizeKind::QueryZScore,
        NormalizeKind::QueryMinMax,
        NormalizeKind::QuerySum,
    ] {
        let spec = PreprocessSpec {
            normalize: Some(kind),
            ..Default::default()
        };
        let (p, t) = spec.fit_transform(&with).unwrap().unwrap();
        assert_eq!(p.inconsistency(), None, "{kind:?}");
        let (_, u) = spec.fit_transform(&without).unwrap().unwrap();
        let bits = |ds: &Dataset, i: usize| -> Vec<u32> {
            (0..3).map(|j| ds.row(i).get(j).to_bits()).collect()
        };
        assert!((0..3).all(|j| t.row(1).get(j).is_nan()), "{kind:?}");
        for (i, k) in [(0, 0), (2, 1), (3, 2), (4, 3)] {
            assert_eq!(bits(&t, i), bits(&u, k), "{kind:?}: row {i}");
        }
        assert_eq!(bits(&p.apply(&with).unwrap(), 2), bits(&t, 2), "{kind:?}");
    }
}

#[test]
fn auto_normalises_raw_data_only_and_per_query_forms_are_exact() {
    let letor = generate_letor_like(&SyntheticConfig {
        queries: 5,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(PreprocessSpec::default().fit(&letor).unwrap(), None);
    let p = PreprocessSpec::default().fit(&raw()).unwrap().unwrap();
    assert!(matches!(p.normalization, Some(Normalization::ZScore(_))));
    let ds = raw();
    for kind in [
        NormalizeKind::QuerySum,
        NormalizeKind::QueryZScore,
        NormalizeKind::MinMax,
    ] {
        let spec = PreprocessSpec {
            normalize: Some(kind),
            ..Default::default()
        };
        let t = spec.fit(&ds).unwrap().unwrap().apply(&ds).unwrap();
        let q = t.query(0);
        let col: Vec<f64> = (0..q.len()).map(|i| q.row(i).get(1) as f64).collect();
        match kind {
            NormalizeKind::QuerySum => {
                assert!((col.iter().map(|x| x.abs()).sum::<f64>() - 1.0).abs() < 1e-5)
            }
            NormalizeKind::QueryZScore => {
                assert!(col.iter().sum::<f64>().abs() < 1e-4)
            }
            _ => assert!(col.iter().all(|x| (0.0..=1.0).contains(x))),
        }
    }
}

#[test]
fn feature_name_files_in_both_forms() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("names.txt");
    std::fs::write(&plain, "bm25\npagerank\nurl length\n").unwrap();
    assert_eq!(
        read_feature_names(&plain).unwrap(),
        ["bm25", "pagerank", "url length"]
    );
    let pairs = dir.path().join("pairs.txt");
    std::fs::write(&pairs, "# id name\n3 clicks\n1 bm25\n").unwrap();
    assert_eq!(
        read_feature_names(&pairs).unwrap(),
        ["bm25", "f2", "clicks"]
    );
    std::fs::write(&pairs, "1 a\n1 b\n").unwrap();
    let e = read_feature_names(&pairs).unwrap_err().to_string();
    assert!(
        e.contains("pairs.txt:2") && e.contains("named twice"),
        "{e}"
    );
}

#[test]
fn log1p_and_selection_follow_file_numbering() {
    let ds = raw();
    let spec = PreprocessSpec {
        features: Some(vec![2, 1]),
        log1p: vec![2],
        normalize: Some(NormalizeKind::None),
    };
    let p = spec.fit(&ds).unwrap().unwrap();
    let t = p.apply(&ds).unwrap();
    assert_eq!(t.n_features(), 2);
    let x = ds.row(0).get(1) as f64;
    assert!((t.row(0).get(0) as f64 - x.signum() * x.abs().ln_1p()).abs() < 1e-4);
    assert_eq!(t.row(0).get(1), ds.row(0).get(0));
    assert!(PreprocessSpec {
        log1p: vec![99],
        ..Default::default()
    }
    .fit(&ds)
    .is_err());
}
