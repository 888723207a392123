//! Workspace hygiene that clippy does not check: every dependency a crate declares is used by the code that
//! builds with it (normal dependencies by the library/binary sources, dev-dependencies by any target), so that
//! unused dependencies cannot creep back.

use std::path::{Path, PathBuf};

/// The workspace root (this file is in `xtask/lab/tests`).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.rs` files of the package in `dir`, a package nested in it (`xtask/lab` in `xtask`) left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name()
                .is_some_and(|n| n != "target" && n != "fixtures")
                && !p.join("Cargo.toml").is_file()
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

/// The folder of every workspace member (`members` in the root `Cargo.toml`).
fn workspace_packages(root: &Path) -> Vec<PathBuf> {
    let mut packages: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    packages.extend(["xtask", "xtask/lab", "benches", "python"].map(|p| root.join(p)));
    packages
}

#[test]
fn every_declared_dependency_is_used() {
    let root = workspace_root();
    let mut dirs = workspace_packages(&root);
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
            // `ltr_data::multiversioned!` expands to `multiversion`'s attribute, which names that crate in the
            // caller's code: a crate using the macro must depend on `multiversion` without naming it.
            let through_macro = ident == "multiversion" && mentions(files, "multiversioned");
            if !mentions(files, &ident) && !through_macro {
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
    "ltr-neural",
    "ltr-trees",
    "ltr-pairs",
];

#[test]
fn front_ends_train_only_through_the_registry() {
    let root = workspace_root();
    let mut found = Vec::new();
    for front_end in [
        "crates/ltr-cli",
        "crates/ltr",
        "python",
        "xtask",
        "xtask/lab",
    ] {
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

/// Module path (`a::b`) of every `.rs` file under `src`: `lib.rs`/`main.rs` are the root, `x/mod.rs` is `x`.
fn module_files(src: &Path) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("lib" | "main" | "mod")
            ) {
                parts.pop();
            }
            (parts.join("::"), f)
        })
        .collect()
}

/// The modules a file's non-test code names through `crate::` or `super::` paths (the longest known prefix).
fn module_edges(module: &str, text: &str, known: &[String]) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", String::new()), ("super::", parent.to_string())] {
        for (i, _) in code.match_indices(prefix) {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let path: Vec<&str> = code[i + prefix.len()..]
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|s| !s.is_empty())
                .collect();
            let target = (0..=path.len()).rev().find_map(|k| {
                let mut name = base.clone();
                for p in &path[..k] {
                    if !name.is_empty() {
                        name.push_str("::");
                    }
                    name.push_str(p);
                }
                known.contains(&name).then_some(name)
            });
            if let Some(t) = target.filter(|t| t != module && !t.is_empty()) {
                out.push(t);
            }
        }
    }
    out
}

#[test]
fn no_module_imports_one_that_imports_it() {
    let root = workspace_root();
    // The benches have no `src/` (their library is `benches/lib.rs`), so they drop out here.
    let mut srcs: Vec<PathBuf> = workspace_packages(&root)
        .into_iter()
        .map(|p| p.join("src"))
        .filter(|p| p.is_dir())
        .collect();
    srcs.sort();
    let mut circles = Vec::new();
    for src in srcs {
        let files = module_files(&src);
        let known: Vec<String> = files.iter().map(|(m, _)| m.clone()).collect();
        let edges: std::collections::BTreeMap<String, Vec<String>> = files
            .iter()
            .map(|(m, f)| {
                let text = std::fs::read_to_string(f).unwrap();
                (m.clone(), module_edges(m, &text, &known))
            })
            .collect();
        // A module reachable from itself: depth-first search from each module.
        for start in edges.keys() {
            let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
            let mut seen = std::collections::BTreeSet::new();
            while let Some((m, path)) = stack.pop() {
                for next in &edges[&m] {
                    if next == start {
                        if path.iter().min() == Some(start) {
                            circles.push(format!(
                                "{}: {} -> {start}",
                                src.display(),
                                path.join(" -> ")
                            ));
                        }
                    } else if seen.insert(next.clone()) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next.clone(), p));
                    }
                }
            }
        }
    }
    circles.dedup();
    assert!(
        circles.is_empty(),
        "modules that import each other (move the shared type to its own module):\n{}",
        circles.join("\n")
    );
}

/// The CLI stays plumbing: its logic lives in the library crates, so its sources stay under 1,850 lines. (1,500
/// until wave 4: `ltr interleave`, `ltr clicks fit|evaluate` and trec_eval's flags and output format took it to
/// 1,952; classifying `ltr eval`'s measure names and building its rows moved into `ltr_metrics::asked`, 1,794;
/// `ltr clicks estimate --estimator dr`'s three documented flags and their mapping, 1,871, under a bound raised to
/// 1,880; reading DR's direct model (`ltr_clicks::DirectModel`), the EM method and intervention names and the z
/// check moved into ltr-clicks, 1,847, and the bound is 1,850 again. The `--click-sessions` flags of `ltr train`
/// and `ltr clicks estimate`, their names parsed by `ltr_clicks::SessionScope::parse`, with the comma lists of
/// `ltr experiment` moved to `ltr_experiment::split_names`: 1,847. The bf16 portable-code warning of `ltr predict`
/// lives in `ltr_export::score_loaded_with`, and side files are bytes: 1,848.)
#[test]
fn the_cli_stays_thin() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates/ltr-cli/src"), &mut files);
    let lines: usize = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap().lines().count())
        .sum();
    assert!(
        lines < 1850,
        "crates/ltr-cli/src has {lines} lines; move logic into a library crate (the CLI maps flags and prints)"
    );
}

/// Every SIMD kernel goes through `ltr_data::multiversioned!`, whose clone `LTR_SIMD` can pin: a kernel written with
/// `#[multiversion]` directly would escape `ltr-cli`'s `simd_dispatch` test, which compares every clone's models.
#[test]
fn simd_kernels_are_pinnable() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in workspace_packages(&root) {
        rust_files(&dir, &mut files);
    }
    let macro_file = root.join("crates/ltr-data/src/simd.rs");
    // Written in two parts so that this file does not match itself.
    let attribute = concat!("#[multiversion::", "multiversion");
    let direct: Vec<String> = files
        .iter()
        .filter(|f| **f != macro_file)
        .filter(|f| std::fs::read_to_string(f).unwrap().contains(attribute))
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        direct.is_empty(),
        "`#[multiversion]` used directly (write the kernel with `ltr_data::multiversioned!` so that LTR_SIMD can pin \
         its clones): {direct:?}"
    );
}

/// Every library and binary root is `#![cfg(not(test))]` and no `src/` file has a `cfg(test)` item: unit tests live in
/// each crate's one integration binary (`tests/unit/`). `cargo test --all-targets`, CI's one build through clippy,
/// compiles a unit-test harness of every root, tests or none; a root with its own unit tests is compiled a second
/// time, whole, at the dev profile's opt-level (about 18 % of that build before the tests moved, CONTRIBUTING.md "CI
/// time"). The workspace hack is `cargo hakari`'s stub and has nothing to compile.
#[test]
fn unit_tests_live_in_the_integration_binaries() {
    let root = workspace_root();
    // The benches' library is `benches/lib.rs`, beside the benchmarks, not under a `src/`.
    let mut roots = vec![root.join("benches/lib.rs")];
    let mut sources = roots.clone();
    for dir in workspace_packages(&root)
        .iter()
        .filter(|p| !p.ends_with(WORKSPACE_HACK) && !p.ends_with("benches"))
    {
        let src = dir.join("src");
        roots.extend(
            ["lib.rs", "main.rs"]
                .map(|f| src.join(f))
                .into_iter()
                .filter(|f| f.is_file()),
        );
        rust_files(&src, &mut sources);
    }
    let name = |f: &Path| f.strip_prefix(&root).unwrap_or(f).display().to_string();
    // Written in parts so that this file does not match itself.
    let empty_under_test = concat!("#![cfg(not(", "test))]");
    let not_empty: Vec<String> = roots
        .iter()
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .any(|l| l.trim() == empty_under_test)
        })
        .map(|f| name(f))
        .collect();
    assert!(
        not_empty.is_empty(),
        "these roots lack `{empty_under_test}` (their unit-test harness would compile them again): {not_empty:?}"
    );
    let test_only = concat!("cfg(", "test)");
    let mut found = Vec::new();
    for f in &sources {
        for (i, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[") && code.contains(test_only) {
                found.push(format!("{}:{}", name(f), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "`{test_only}` items in src/ (move the unit tests to the crate's tests/unit/, reaching private items through \
         `#[doc(hidden)] pub`): {found:?}"
    );
}

/// Source files stay under about 1,000 lines, split by concern (a newcomer reads a module whole): every hand-written
/// `.rs`, `.py` and `.sh` file of the repository is at most [`MAX_LINES`] lines. Generated files (a header saying
/// `@generated` or "Generated by" in their first lines) are exempt, as are the fuzzers' corpora and downloaded data.
#[test]
fn source_files_stay_under_a_thousand_lines() {
    const MAX_LINES: usize = 1_000;
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if p.is_dir() {
                let skip = name.starts_with('.')
                    || [
                        "target",
                        "fixtures",
                        "corpus",
                        "artifacts",
                        "data",
                        "node_modules",
                    ]
                    .contains(&name.as_ref())
                    || name.starts_with("venv")
                    || name.starts_with(".venv");
                if !skip {
                    walk(&p, out);
                }
            } else if p
                .extension()
                .is_some_and(|x| x == "rs" || x == "py" || x == "sh")
            {
                out.push(p);
            }
        }
    }
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in [
        "crates", "xtask", "benches", "python", "fuzz", "scripts", "tools",
    ] {
        if root.join(dir).is_dir() {
            walk(&root.join(dir), &mut files);
        }
    }
    assert!(files.len() > 100, "found only {} source files", files.len());
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            let generated = text
                .lines()
                .take(3)
                .any(|l| l.contains("@generated") || l.contains("Generated by"));
            let lines = text.lines().count();
            (!generated && lines > MAX_LINES).then(|| {
                format!(
                    "{} ({lines} lines)",
                    f.strip_prefix(&root).unwrap_or(f).display()
                )
            })
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them by concern into a folder of modules): {long:?}"
    );
}
