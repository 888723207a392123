//! Workspace hygiene that clippy does not check: every dependency a crate declares is used by the code that
//! builds with it (normal dependencies by the library/binary sources, dev-dependencies by any target), so that
//! unused dependencies cannot creep back.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name()
                .is_some_and(|n| n != "target" && n != "fixtures")
            {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (section, dependency name) of every entry in `[dependencies]` and `[dev-dependencies]`.
fn declared(manifest: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
        } else if (section == "dependencies" || section == "dev-dependencies")
            && line.contains('=')
            && !line.starts_with('#')
        {
            let name = line.split(['=', '.']).next().unwrap().trim().to_string();
            out.push((section.clone(), name));
        }
    }
    out
}

fn mentions(files: &[PathBuf], ident: &str) -> bool {
    files.iter().any(|f| {
        let text = std::fs::read_to_string(f).unwrap();
        text.match_indices(ident).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + ident.len()..].chars().next();
            let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            boundary(before) && boundary(after)
        })
    })
}

const WORKSPACE_HACK: &str = "ltr-workspace-hack";

#[test]
fn every_declared_dependency_is_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.extend([
        root.join("xtask"),
        root.join("benches"),
        root.join("python"),
    ]);
    let mut unused = Vec::new();
    // The workspace-hack crate (`cargo hakari`) declares dependencies only to unify their features; every member
    // depends on it without naming it in code.
    dirs.retain(|d| !d.ends_with(WORKSPACE_HACK));
    for dir in dirs {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let mut all = Vec::new();
        rust_files(&dir, &mut all);
        let lib: Vec<PathBuf> = all
            .iter()
            .filter(|p| {
                let rel = p.strip_prefix(&dir).unwrap();
                // benches/ is itself a crate whose benchmarks are its reason to exist.
                dir.ends_with("benches")
                    || !["tests", "examples", "benches"]
                        .iter()
                        .any(|t| rel.starts_with(t))
            })
            .cloned()
            .collect();
        for (section, name) in declared(&manifest) {
            if name == WORKSPACE_HACK {
                continue;
            }
            let ident = match name.as_str() {
                "md-5" => "md5".to_string(),
                n => n.replace('-', "_"),
            };
            let files = if section == "dependencies" {
                &lib
            } else {
                &all
            };
            if !mentions(files, &ident) {
                unused.push(format!("{}: {section} `{name}`", dir.display()));
            }
        }
    }
    assert!(
        unused.is_empty(),
        "declared but never used (remove them from Cargo.toml):\n{}",
        unused.join("\n")
    );
}

/// The crates a front end must not reach around the registry to: the learner families, the pair machinery and the
/// online learners. `ltr-learn` (the registry and `TrainJob`) is the only way in.
const BEHIND_THE_REGISTRY: &[&str] = &[
    "ltr-svm",
    "ltr-perceptron",
    "ltr-ensemble",
    "ltr-online",
    "ltr-listwise",
    "ltr-trees",
    "ltr-pairs",
];

#[test]
fn front_ends_train_only_through_the_registry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found = Vec::new();
    for front_end in ["crates/ltr-cli", "crates/ltr", "python", "xtask"] {
        let dir = root.join(front_end);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for (section, name) in declared(&manifest) {
            if section == "dependencies" && BEHIND_THE_REGISTRY.contains(&name.as_str()) {
                found.push(format!("{front_end}/Cargo.toml: depends on `{name}`"));
            }
        }
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        // Tests may compare against a learner directly; the front end's own code may not.
        files.retain(|p| !p.strip_prefix(&dir).unwrap().starts_with("tests"));
        for crate_name in BEHIND_THE_REGISTRY {
            let ident = crate_name.replace('-', "_");
            for f in &files {
                if mentions(std::slice::from_ref(f), &ident) {
                    found.push(format!("{}: names `{ident}`", f.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "front ends (ltr-cli, the facade, python, xtask) train through ltr-learn's registry and TrainJob only:\n{}",
        found.join("\n")
    );
}
