//! Differential tests against PyClick (markovi/PyClick): each click model fitted to two small logs, its
//! parameters and its held-out log-likelihood and perplexity equal to PyClick's fits of the same logs
//! (`tests/fixtures/pyclick/README.md` says how the fixtures were made).

use std::path::{Path, PathBuf};

use ltr_clicks::{
    fit_click_model, read_click_log, ClickModelFit, ClickModelKind, ClickModelParams, SessionLog,
};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pyclick")
}

/// The fixture log `name`, read a session at a time (`SessionLog::read`), which must equal the log read whole.
fn log(name: &str) -> SessionLog {
    let path = fixtures().join(name);
    let streamed = SessionLog::read(&path).unwrap();
    assert_eq!(
        streamed,
        SessionLog::from_records(&read_click_log(&path).unwrap())
    );
    streamed
}

fn close(what: &str, ours: f64, theirs: f64, worst: &mut f64) {
    let d = (ours - theirs).abs();
    *worst = worst.max(d);
    assert!(d < 1e-3, "{what}: ours {ours}, PyClick's {theirs}");
}

#[test]
fn fits_and_evaluations_equal_pyclick() {
    let mut worst = 0.0f64;
    for user in ["pbm", "dbn"] {
        let train = log(&format!("{user}-train.tsv"));
        let test = log(&format!("{user}-test.tsv"));
        for kind in ClickModelKind::ALL {
            let name = kind.name();
            let text =
                std::fs::read_to_string(fixtures().join(format!("{user}-{name}.json"))).unwrap();
            let want: Value = serde_json::from_str(&text).unwrap();
            let fit = fit_click_model(&train, &ClickModelFit::new(kind)).unwrap();
            let at = |what: &str| format!("{user} log, {name}: {what}");
            let p = &want["params"];
            let per_doc = |values: &[f64], key: &str, worst: &mut f64| {
                let mut n = 0;
                for (i, (q, d)) in fit.pairs.iter().enumerate() {
                    let theirs = p[key][q][d].as_f64().unwrap();
                    close(&at(&format!("{key} {q} {d}")), values[i], theirs, worst);
                    n += 1;
                }
                let theirs: usize = p[key]
                    .as_object()
                    .unwrap()
                    .values()
                    .map(|m| m.as_object().unwrap().len())
                    .sum();
                assert_eq!(n, theirs, "{}", at("documents"));
            };
            let per_rank = |values: &[f64], key: &str, worst: &mut f64| {
                for (r, v) in values.iter().enumerate() {
                    close(
                        &at(&format!("{key} rank {}", r + 1)),
                        *v,
                        p[key][r].as_f64().unwrap(),
                        worst,
                    );
                }
            };
            match &fit.params {
                ClickModelParams::Pbm { attr, exam } => {
                    per_doc(attr, "attr", &mut worst);
                    per_rank(exam, "exam", &mut worst);
                }
                ClickModelParams::Cascade { attr } => per_doc(attr, "attr", &mut worst),
                ClickModelParams::Dcm { attr, cont } => {
                    per_doc(attr, "attr", &mut worst);
                    per_rank(cont, "cont", &mut worst);
                }
                ClickModelParams::Ubm { attr, exam } => {
                    per_doc(attr, "attr", &mut worst);
                    // PyClick's γ[r][r'] with r' the 0-based rank of the last click above, or M − 1 = 9 when none.
                    for (r, row) in exam.iter().enumerate() {
                        for (k, v) in row.iter().enumerate() {
                            let theirs = if k == 0 {
                                &p["exam"][r][9]
                            } else {
                                &p["exam"][r][k - 1]
                            };
                            close(
                                &at(&format!("exam rank {} prev {k}", r + 1)),
                                *v,
                                theirs.as_f64().unwrap(),
                                &mut worst,
                            );
                        }
                    }
                }
                ClickModelParams::Dbn { attr, sat, gamma } => {
                    per_doc(attr, "attr", &mut worst);
                    per_doc(sat, "sat", &mut worst);
                    close(
                        &at("gamma"),
                        *gamma,
                        p["gamma"].as_f64().unwrap(),
                        &mut worst,
                    );
                }
            }
            let eval = fit.evaluate(&test).unwrap();
            close(
                &at("log-likelihood"),
                eval.log_likelihood,
                want["log_likelihood"].as_f64().unwrap(),
                &mut worst,
            );
            close(
                &at("perplexity"),
                eval.perplexity,
                want["perplexity"].as_f64().unwrap(),
                &mut worst,
            );
            for (r, v) in eval.perplexity_at_rank.iter().enumerate() {
                close(
                    &at(&format!("perplexity at {}", r + 1)),
                    *v,
                    want["perplexity_at_rank"][r].as_f64().unwrap(),
                    &mut worst,
                );
            }
        }
    }
    println!("largest difference from PyClick: {worst:.3e}");
}
