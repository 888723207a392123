//! Comparing many runs against oracles: randomised Tukey HSD against an exact enumeration (3 runs × 4 queries) and
//! against an independent numpy implementation (5 runs × 30 queries, `fixtures/make_multiple.py`); Holm, Bonferroni
//! and Benjamini–Hochberg against statsmodels' `multipletests`; per-pair t and Wilcoxon p-values against scipy;
//! Cohen's d by hand; the bootstrap interval's determinism.

use ltr_metrics::{
    bh_adjust, bonferroni_adjust, cohens_d, compare_runs, holm_adjust, mean_ci, tukey_hsd,
    Correction, ManyOptions, ManyTest, ReportFormat, TestKind,
};
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/multiple.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn matrix(v: &Value) -> Vec<Vec<f64>> {
    v.as_array().unwrap().iter().map(floats).collect()
}

/// Every way to permute each query's values across the runs: the exact Tukey HSD p-values.
fn exact_tukey(runs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let (k, n) = (runs.len(), runs[0].len());
    let perms: Vec<Vec<usize>> = permutations(k);
    let mean = |r: &Vec<f64>| r.iter().sum::<f64>() / n as f64;
    let mut maxima = Vec::new();
    let total = perms.len().pow(n as u32);
    for code in 0..total {
        let mut sums = vec![0.0; k];
        let mut c = code;
        for q in 0..n {
            let p = &perms[c % perms.len()];
            c /= perms.len();
            for (s, &i) in sums.iter_mut().zip(p) {
                *s += runs[i][q];
            }
        }
        let hi = sums.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lo = sums.iter().cloned().fold(f64::INFINITY, f64::min);
        maxima.push((hi - lo) / n as f64);
    }
    let mut p = vec![vec![1.0; k]; k];
    for a in 0..k {
        for b in a + 1..k {
            let obs = (mean(&runs[a]) - mean(&runs[b])).abs();
            let count = maxima.iter().filter(|&&m| m >= obs - 1e-12).count();
            p[a][b] = count as f64 / total as f64;
            p[b][a] = p[a][b];
        }
    }
    p
}

fn permutations(k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return vec![vec![0]];
    }
    let mut out = Vec::new();
    for p in permutations(k - 1) {
        for at in 0..k {
            let mut q = p.clone();
            q.insert(at, k - 1);
            out.push(q);
        }
    }
    out
}

#[test]
fn tukey_hsd_matches_exact_enumeration_within_a_binomial_bound() {
    let runs = vec![
        vec![0.50, 0.30, 0.80, 0.45],
        vec![0.40, 0.35, 0.60, 0.20],
        vec![0.10, 0.30, 0.55, 0.25],
    ];
    let exact = exact_tukey(&runs); // over (3!)^4 = 1296 permutations
    assert_eq!(permutations(3).len(), 6);
    // The enumeration's own counts, which Python's itertools gives too (600, 108 and 936 of the 1296), so a
    // broken enumeration would show.
    assert_eq!(exact[0][1], 600.0 / 1296.0, "{exact:?}");
    assert_eq!(exact[0][2], 108.0 / 1296.0, "{exact:?}");
    assert_eq!(exact[1][2], 936.0 / 1296.0, "{exact:?}");
    let trials = 200_000;
    let got = tukey_hsd(&runs, trials, 7);
    let worst = (0..9)
        .map(|i| (got[i / 3][i % 3] - exact[i / 3][i % 3]).abs())
        .fold(0.0, f64::max);
    eprintln!("Tukey HSD, 200,000 trials: largest deviation from the exact p {worst:.5}");
    for a in 0..3 {
        for b in 0..3 {
            let p = exact[a][b];
            // Five binomial standard errors of a share of 200,000 trials (and at least 1e-4 when p is 0 or 1).
            let tol = 5.0 * (p * (1.0 - p) / trials as f64).sqrt() + 1e-4;
            assert!(
                (got[a][b] - p).abs() <= tol,
                "pair ({a},{b}): {} vs exact {p}",
                got[a][b]
            );
        }
    }
    // Deterministic for a seed, and a different seed gives different draws.
    assert_eq!(tukey_hsd(&runs, 1000, 7), tukey_hsd(&runs, 1000, 7));
    assert_ne!(tukey_hsd(&runs, 1000, 7), tukey_hsd(&runs, 1000, 8));
}

#[test]
fn tukey_hsd_matches_an_independent_numpy_implementation() {
    let f = fixture();
    let runs = matrix(&f["tukey"]["runs"]);
    let want = matrix(&f["tukey"]["p"]);
    let got = tukey_hsd(&runs, 100_000, 1);
    // Standard errors: at most 0.5/sqrt(100000) = 0.0016 here and 0.0008 in the fixture (400,000 trials), so a
    // difference's is at most 0.0018; 0.01 is over five of them.
    let worst = (0..25)
        .map(|i| (got[i / 5][i % 5] - want[i / 5][i % 5]).abs())
        .fold(0.0, f64::max);
    eprintln!("Tukey HSD, 100,000 trials: largest deviation from numpy's 400,000 {worst:.5}");
    for a in 0..5 {
        for b in 0..5 {
            assert!(
                (got[a][b] - want[a][b]).abs() < 0.01,
                "pair ({a},{b}): {} vs numpy {}",
                got[a][b],
                want[a][b]
            );
        }
    }
    // Through compare_runs: the same p-values, significant pairs where p < 0.05.
    let names: Vec<String> = (0..5).map(|i| format!("r{i}")).collect();
    let opts = ManyOptions {
        trials: 100_000,
        ..Default::default()
    };
    let c = compare_runs(&names, &runs, 0, "AP", &opts).unwrap();
    assert_eq!(c.pairs.len(), 10);
    for p in &c.pairs {
        assert_eq!(p.p_value, got[p.a][p.b]);
        assert_eq!(p.p_adjusted, p.p_value, "Tukey HSD is not corrected again");
        assert_eq!(p.significant, p.p_adjusted < 0.05);
    }
    // Runs 3 and 4 beat the baseline (p 0.004 and 0.006 in the fixture); 1 and 2 do not differ from it.
    assert_eq!(c.against_baseline(true), vec![3, 4]);
    assert!(c.against_baseline(false).is_empty());
}

#[test]
fn corrections_match_statsmodels_multipletests() {
    let f = fixture();
    for case in f["corrections"].as_array().unwrap() {
        let p = floats(&case["p"]);
        for (name, got) in [
            ("holm", holm_adjust(&p)),
            ("bonferroni", bonferroni_adjust(&p)),
            ("fdr_bh", bh_adjust(&p)),
        ] {
            let want = floats(&case[name]);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-12,
                    "{name} of {p:?}: {got:?} vs {want:?}"
                );
            }
        }
    }
    assert_eq!(Correction::None.adjust(&[0.3, 0.01]), vec![0.3, 0.01]);
    // NaN stays NaN and does not count.
    let adj = bh_adjust(&[0.02, f64::NAN, 0.04]);
    assert!((adj[0] - 0.04).abs() < 1e-15 && adj[1].is_nan() && (adj[2] - 0.04).abs() < 1e-15);
    assert_eq!(bonferroni_adjust(&[0.3, f64::NAN])[0], 0.3);
}

#[test]
fn paired_tests_per_pair_match_scipy_and_statsmodels() {
    let f = fixture();
    let pw = &f["pairwise"];
    let runs = matrix(&pw["runs"]);
    let names: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
    for (test, kind) in [("ttest", TestKind::TTest), ("wilcoxon", TestKind::Wilcoxon)] {
        for (corr, key) in [
            (Correction::Holm, "holm"),
            (Correction::Bonferroni, "bonferroni"),
            (Correction::BenjaminiHochberg, "fdr_bh"),
        ] {
            let opts = ManyOptions {
                test: ManyTest::Paired(kind),
                correction: corr,
                ..Default::default()
            };
            let c = compare_runs(&names, &runs, 0, "AP", &opts).unwrap();
            let raw = floats(&pw[test]["p"]);
            let adj = floats(&pw[test][key]);
            for (i, p) in c.pairs.iter().enumerate() {
                let want: Vec<usize> = serde_json::from_value(pw["pairs"][i].clone()).unwrap();
                assert_eq!(vec![p.a, p.b], want);
                assert!(
                    (p.p_value - raw[i]).abs() <= 1e-9 * raw[i].max(1e-3),
                    "{test} raw {i}"
                );
                assert!(
                    (p.p_adjusted - adj[i]).abs() <= 1e-9 * adj[i].max(1e-3),
                    "{test} {key} {i}"
                );
            }
        }
    }
}

#[test]
fn cohens_d_by_hand() {
    // Differences 0.1, 0.3, 0.2, 0.4: mean 0.25, sample variance (0.0225 + 0.0025 + 0.0025 + 0.0225)/3 = 0.05/3.
    let a = [0.5, 0.7, 0.6, 0.9];
    let b = [0.4, 0.4, 0.4, 0.5];
    let want = 0.25 / (0.05f64 / 3.0).sqrt();
    assert!(
        (cohens_d(&a, &b) - want).abs() < 1e-12,
        "{}",
        cohens_d(&a, &b)
    );
    assert!((cohens_d(&b, &a) + want).abs() < 1e-12);
    // Constant differences or a single query: undefined.
    assert!(cohens_d(&[1.0, 2.0], &[0.5, 1.5]).is_nan());
    assert!(cohens_d(&[1.0], &[0.0]).is_nan());
}

#[test]
fn bootstrap_interval_is_seeded_and_holds_the_mean() {
    let v: Vec<f64> = (0..40).map(|i| ((i * 37 % 17) as f64) / 17.0).collect();
    let mean = v.iter().sum::<f64>() / 40.0;
    let (lo, hi) = mean_ci(&v, 0.95, 10_000, 3);
    assert_eq!((lo, hi), mean_ci(&v, 0.95, 10_000, 3));
    assert_ne!((lo, hi), mean_ci(&v, 0.95, 10_000, 4));
    assert!(lo < mean && mean < hi, "{lo} {mean} {hi}");
    // Close to the normal interval mean ± 1.96·s/√n (the values are spread evenly, so nearly symmetric).
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 39.0).sqrt();
    let half = 1.96 * sd / 40f64.sqrt();
    assert!(
        (hi - lo - 2.0 * half).abs() < 0.2 * half,
        "{lo} {hi} vs ±{half}"
    );
}

#[test]
fn bad_inputs_are_refused_with_a_reason() {
    let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    let opts = ManyOptions::default();
    let err = |names: &[String], v: &[Vec<f64>], o: &ManyOptions| {
        compare_runs(names, v, 0, "AP", o).unwrap_err().to_string()
    };
    assert!(err(&names[..1], &[vec![0.1]], &opts).contains("two or more, got 1 (a)"));
    assert!(
        err(&names, &[vec![0.1, 0.2], vec![0.3]], &opts).contains("run b has 1 values but a has 2")
    );
    assert!(err(&names, &[vec![0.1], vec![f64::NAN]], &opts).contains("not finite"));
    let o = ManyOptions { alpha: 1.5, ..opts };
    assert!(err(&names, &[vec![0.1], vec![0.2]], &o).contains("alpha must lie in (0, 1)"));
    assert!("nope"
        .parse::<ManyTest>()
        .unwrap_err()
        .contains("tukey-hsd, ttest"));
    assert!("holms"
        .parse::<Correction>()
        .unwrap_err()
        .contains("holm, bonferroni, bh or none"));
    assert!("html".parse::<ReportFormat>().is_err());
    let e = ltr_metrics::resolve_baseline(&names, "c")
        .unwrap_err()
        .to_string();
    assert!(e.contains("baseline `c` is none of the runs (a, b)"), "{e}");
    let q = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let e = ltr_metrics::align_queries(&names, &[q(&["1"]), q(&["2"])], &[vec![0.1], vec![0.2]]);
    assert!(e
        .unwrap_err()
        .to_string()
        .contains("share no evaluated query"));
}

#[test]
fn runs_answering_different_queries_are_compared_on_the_shared_ones() {
    let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let q = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (shared, values, dropped) = ltr_metrics::align_queries(
        &names,
        &[q(&["1", "2", "3"]), q(&["3", "1"]), q(&["1", "3", "4"])],
        &[vec![0.1, 0.2, 0.3], vec![0.6, 0.4], vec![0.7, 0.8, 0.9]],
    )
    .unwrap();
    assert_eq!(shared, q(&["1", "3"]));
    assert_eq!(values, vec![vec![0.1, 0.3], vec![0.4, 0.6], vec![0.7, 0.8]]);
    assert_eq!(dropped, vec![1, 0, 1]);
}

#[test]
fn tables_show_the_matrix_in_every_format() {
    let runs = vec![
        vec![0.2, 0.4, 0.3, 0.5, 0.1, 0.6],
        vec![0.3, 0.5, 0.5, 0.6, 0.2, 0.7],
        vec![0.9, 0.8, 0.9, 0.95, 0.7, 0.99],
    ];
    let names: Vec<String> = ["bm25", "rm3_x", "bert"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let c = compare_runs(&names, &runs, 0, "AP (trec)", &ManyOptions::default()).unwrap();
    let md = c.render(ReportFormat::Markdown);
    assert!(md.contains("| bm25 | 0.3500 |"), "{md}");
    assert!(
        md.contains("| bert | 0.8733 |") && md.contains("| better |"),
        "{md}"
    );
    // Row bm25: −0.1167 against rm3_x (differences −0.1 ×5 and −0.2: d = −0.11667/0.040825 = −2.86), not
    // significant; −0.5233 against bert, significant.
    assert!(
        md.contains("| bm25 | -0.1167 (p=0.") && md.contains(", d=-2.86) |"),
        "{md}"
    );
    assert!(md.contains("-0.5233 (p=0.") && md.contains("*, d="), "{md}");
    let tex = c.render(ReportFormat::Latex);
    assert!(
        tex.contains("\\toprule") && tex.contains("\\bottomrule") && tex.contains("rm3\\_x"),
        "{tex}"
    );
    assert!(tex.contains("$^*$"), "{tex}");
    let json: Value = serde_json::from_str(&c.render(ReportFormat::Json)).unwrap();
    assert_eq!(json["better_than_baseline"], serde_json::json!(["bert"]));
    assert_eq!(json["pairs"].as_array().unwrap().len(), 3);
    assert!((json["runs"][2]["mean"].as_f64().unwrap() - 0.87333333).abs() < 1e-6);
}
