//! `cargo xtask test`: every test the project has — the Rust workspace built with the MPI backend (Open MPI
//! installed by `scripts/setup-mpi.sh` when missing; `ltr-cli/tests/mpi.rs` runs `mpirun` with 1–3 ranks; Debian's
//! chromium installed by `scripts/setup-chromium.sh` for `ltr-cli/tests/report_html.rs`), then the Python package
//! built into a virtual environment (installing what it needs from the package registries) and its pytest suite.
//! Among the Rust tests: `xtask-lab`'s `results_slice` (is `results/` stale?). This binary links no ltr library,
//! so the test build is the one build of the workspace.
//!
//! The Rust tests are built first (`cargo test --no-run`), while the Python venv and its requirements are installed
//! beside the build (downloads and unpacking: mostly waiting, niced); then the Rust tests run while, beside them,
//! the Python package is built and tested. With `--clippy` the test build is also the lint: every workspace crate is compiled through
//! clippy's driver (`RUSTC_WORKSPACE_WRAPPER`, exactly what `cargo clippy` sets, with `-D warnings`), every target
//! included (`--all-targets`, as CI's clippy asks), so the workspace is compiled once instead of compiled for the
//! tests and type-checked again for clippy. Cargo holds its build-directory lock only
//! while it builds, not while tests run, and the Rust test binaries leave a core idle most of the time (one long
//! test at the end of a binary, `mpirun` starting ranks, child processes waited for): the work beside them fills
//! it. The output of that work is kept in `target/xtask-test/*.log` and printed once the Rust tests are over.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// Which parts to run.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// `cargo test --workspace`.
    pub rust: bool,
    /// Build `python/` into a venv and run pytest.
    pub python: bool,
    /// Build with the `mpi` feature (installing Open MPI) and run the MPI tests.
    pub mpi: bool,
    /// Also lint as CI does (`clippy --all-targets -- -D warnings`): in the test build when `rust` is on.
    pub clippy: bool,
}

/// The environment that makes cargo compile the workspace's crates through clippy's driver with `-D warnings`,
/// as `cargo clippy -- -D warnings` does (its `RUSTC_WORKSPACE_WRAPPER` and `CLIPPY_ARGS`): lints are reported
/// and code is generated in one compilation. Dependencies are compiled by rustc as usual. Every cargo call that
/// must reuse those artifacts (the test run, the Python package's build) carries the same environment, because
/// cargo's fingerprints include the wrapper.
fn clippy_env(root: &Path) -> Result<[(&'static str, std::ffi::OsString); 2]> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(root)
        .output()
        .context("cannot run `rustc --print sysroot` to find clippy's driver")?;
    if !out.status.success() {
        bail!("`rustc --print sysroot` failed ({})", out.status);
    }
    let sysroot = String::from_utf8(out.stdout).context("rustc's sysroot is not UTF-8")?;
    let driver = Path::new(sysroot.trim())
        .join("bin")
        .join(format!("clippy-driver{}", std::env::consts::EXE_SUFFIX));
    if !driver.is_file() {
        bail!(
            "clippy's driver is not at {} (rust-toolchain.toml asks for the clippy component: `rustup component add clippy`)",
            driver.display()
        );
    }
    Ok([
        ("RUSTC_WORKSPACE_WRAPPER", driver.into_os_string()),
        // clippy-driver splits this on the separator `cargo clippy` uses.
        (
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__".into(),
        ),
    ])
}

/// `--features` for every cargo call of one run, so that they share one feature resolution (and one build).
fn features(parts: Parts) -> &'static [&'static str] {
    if parts.mpi {
        &["--features", "ltr-cli/mpi"]
    } else {
        &[]
    }
}

/// Where a command's output goes: the terminal, or appended to a log file printed later.
#[derive(Debug, Clone, Copy)]
enum Out<'a> {
    Terminal,
    Log(&'a Path),
}

/// `cmd` under `nice -n 10` (same arguments, environment and folder) when `nice` is on PATH: the work beside the
/// Rust tests takes the cores they leave idle without slowing them.
fn niced(cmd: &Command) -> Option<Command> {
    static NICE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let have = *NICE.get_or_init(|| {
        Command::new("nice")
            .arg("true")
            .status()
            .is_ok_and(|s| s.success())
    });
    if !have {
        return None;
    }
    let mut n = Command::new("nice");
    n.args(["-n", "10"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => n.env(k, v),
            None => n.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        n.current_dir(d);
    }
    Some(n)
}

fn status(cmd: &mut Command, what: &str, out: Out<'_>) -> Result<()> {
    let mut beside = None;
    if let Out::Log(path) = out {
        beside = niced(cmd);
        let cmd = beside.as_mut().unwrap_or(&mut *cmd);
        let f = File::options()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        cmd.stdout(Stdio::from(f.try_clone()?))
            .stderr(Stdio::from(f));
    }
    let cmd = beside.as_mut().unwrap_or(cmd);
    tracing::info!("{what}: {cmd:?}");
    let s = cmd
        .status()
        .with_context(|| format!("{what}: cannot start {cmd:?}"))?;
    if !s.success() {
        bail!("{what} failed ({s})");
    }
    Ok(())
}

/// Python ≥ 3.9 on PATH (`python3`, else `python`).
fn python() -> Result<String> {
    for candidate in ["python3", "python"] {
        let ok = Command::new(candidate)
            .args([
                "-c",
                "import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)",
            ])
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Ok(candidate.to_string());
        }
    }
    bail!("the Python tests need Python >= 3.9 with venv and pip on PATH (python3); install it or pass --no-python")
}

/// `PY -m pip install -q` without pip's version check, for the arguments that follow.
fn pip_install(py: &Path) -> Command {
    let mut cmd = Command::new(py);
    cmd.args(["-m", "pip", "install", "-q", "--disable-pip-version-check"]);
    cmd
}

/// The venv the Python tests use (`target/python-venv`), made when missing, with the build and test requirements
/// of `python/requirements-test.txt` (the peers there are oracles only, never dependencies of `ltrkit`).
fn venv(root: &Path, out: Out<'_>) -> Result<PathBuf> {
    let dir = root.join("target").join("python-venv");
    let py = dir.join("bin").join("python");
    if !py.is_file() {
        status(
            Command::new(python()?).args(["-m", "venv"]).arg(&dir),
            "making the Python test environment",
            out,
        )?;
    }
    // `--no-compile`: pip would byte-compile every module of every requirement (pandas, scipy, scikit-learn,
    // PyTerrier...: about 13 of a fresh install's 30 CPU-s); Python compiles the few the tests import when they
    // first import them.
    status(
        pip_install(&py)
            .arg("--no-compile")
            .arg("-r")
            .arg(root.join("python").join("requirements-test.txt")),
        "installing the Python test requirements",
        out,
    )?;
    Ok(py)
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to the root) when set, else `target/`.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |d| root.join(d))
}

/// The Python part: venv, `pip install ./python`, pytest.
fn python_tests(
    root: &Path,
    py: &Path,
    parts: Parts,
    lint_env: &[(&str, std::ffi::OsString)],
    out: Out<'_>,
) -> Result<()> {
    // `pip install ./python` as a user would, built with the dev profile so that it reuses the artifacts of the
    // Rust tests (the release build is for wheels).
    status(
        pip_install(py)
            .args(["--force-reinstall", "--no-deps"])
            .arg(root.join("python"))
            .env("MATURIN_PEP517_ARGS", "--profile dev")
            .envs(lint_env.iter().map(|(k, v)| (k, v)))
            .current_dir(root),
        "building and installing the Python package (pip install ./python)",
        out,
    )?;
    // The Rust tests built the binary with the workspace's features; alone, `-p ltr-cli` would resolve them
    // differently and rebuild its dependencies.
    if !parts.rust {
        status(
            Command::new(env!("CARGO"))
                .args(["build", "-q", "--workspace", "--bins"])
                .args(features(parts))
                .current_dir(root),
            "building the ltr command for the parity tests",
            out,
        )?;
    }
    status(
        Command::new(py)
            .args(["-m", "pytest", "-q", "--durations=10", "python/tests"])
            .env("LTR_BIN", target_dir(root).join("debug").join("ltr"))
            // Bytecode is written on first import (into the venv under target/, and gitignored `__pycache__/`s):
            // with `PYTHONDONTWRITEBYTECODE` set, as some machines set it, every Python process the tests start
            // compiled scikit-learn, SciPy and pandas from source again, 5.2 s of CPU for each `import ltrkit`
            // instead of 1.7 s (pytest 53 -> 40 CPU-s; CONTRIBUTING.md, "CI time").
            .env_remove("PYTHONDONTWRITEBYTECODE")
            // `test_wheel.py` runs `maturin build --profile dev`: with the same environment as the build before
            // it, cargo has nothing to compile (without it, every workspace crate again: 128 s of a CI run).
            .envs(lint_env.iter().map(|(k, v)| (k, v)))
            .current_dir(root),
        "Python tests",
        out,
    )
}

/// `cargo clippy` as CI runs it, for `--clippy --no-rust` (with the Rust tests, the test build lints).
fn clippy(root: &Path, parts: Parts, out: Out<'_>) -> Result<()> {
    status(
        Command::new(env!("CARGO"))
            .args(["clippy", "--workspace", "--all-targets"])
            .args(features(parts))
            .args(["--", "-D", "warnings"])
            .current_dir(root),
        "clippy",
        out,
    )
}

/// A log of the work run beside the Rust tests: `target/xtask-test/NAME.log`, emptied.
fn log_file(root: &Path, name: &str) -> Result<PathBuf> {
    let dir = root.join("target").join("xtask-test");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("{name}.log"));
    File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    Ok(path)
}

/// A thread's outcome, its panic turned into an error naming `what` ran there.
fn joined<T>(outcome: std::thread::Result<Result<T>>, what: &str) -> Result<T> {
    outcome.unwrap_or_else(|_| Err(anyhow::anyhow!("the thread running {what} panicked")))
}

/// Print a log of the work beside the tests, framed by its name and outcome.
fn print_log(name: &str, path: &Path, outcome: &Result<()>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let verdict = match outcome {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("FAILED: {e:#}"),
    };
    println!("\n===== {name} ({verdict}; log: {}) =====", path.display());
    print!("{text}");
    if !text.is_empty() && !text.ends_with('\n') {
        println!();
    }
    println!("===== end of {name} =====");
}

/// Run the chosen parts from the project root.
pub fn run(root: &Path, parts: Parts) -> Result<()> {
    if parts.mpi {
        status(
            Command::new("bash")
                .arg(root.join("scripts").join("setup-mpi.sh"))
                .current_dir(root),
            "installing Open MPI for the MPI tests (scripts/setup-mpi.sh; --no-mpi skips them)",
            Out::Terminal,
        )?;
    }
    if !parts.rust {
        // Nothing to run beside: each part in turn, on the terminal.
        if parts.clippy {
            clippy(root, parts, Out::Terminal)?;
        }
        if parts.python {
            let py = venv(root, Out::Terminal)?;
            python_tests(root, &py, parts, &[], Out::Terminal)?;
        }
        return Ok(());
    }
    status(
        Command::new("bash")
            .arg(root.join("scripts").join("setup-chromium.sh"))
            .current_dir(root),
        "installing chromium for the report.html screenshot test (scripts/setup-chromium.sh)",
        Out::Terminal,
    )?;
    let lint_env = if parts.clippy {
        clippy_env(root)?.to_vec()
    } else {
        Vec::new()
    };
    // The Python venv and its requirements (downloads and unpacking, little CPU) are made beside the test build,
    // niced, so that the Python step beside the tests starts at `pip install ./python`.
    let python_log = log_file(root, "python")?;
    let venv_beside = parts.python.then(|| {
        let (root, log) = (root.to_path_buf(), python_log.clone());
        std::thread::spawn(move || venv(&root, Out::Log(&log)))
    });
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["test", "--workspace", "--no-run"])
        .args(features(parts))
        .envs(lint_env.iter().map(|(k, v)| (k, v)))
        .current_dir(root);
    if parts.clippy {
        // Clippy's `--all-targets`: the benches too, which the test run itself never builds.
        build.arg("--all-targets");
    }
    let built = status(
        &mut build,
        if parts.clippy {
            "building the Rust tests through clippy (-D warnings)"
        } else {
            "building the Rust tests"
        },
        Out::Terminal,
    );
    if let Err(e) = built {
        // Nothing left running behind the error: the venv's pip finishes (its log is printed too).
        if let Some(h) = venv_beside {
            let outcome = joined(h.join(), "the venv").map(drop);
            print_log("Python venv", &python_log, &outcome);
        }
        return Err(e);
    }
    let (rust, beside) = std::thread::scope(|scope| -> Result<_> {
        // Cargo takes the build-directory lock to check that the tests are built, then lets it go to run them:
        // the work beside starts at the first `Running` line, so that its own cargo calls never hold the tests
        // back.
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["test", "--workspace"])
            .args(features(parts))
            .envs(lint_env.iter().map(|(k, v)| (k, v)))
            .current_dir(root)
            .stderr(Stdio::piped());
        if parts.clippy {
            // The targets the lint build compiled, so that nothing is compiled again: `--all-targets` (examples as
            // test harnesses, not as example binaries) less the benchmarks, which are compiled to be linted but
            // not run; the doctests follow in a call of their own (they cannot be mixed with `--all-targets`).
            cmd.args(["--all-targets", "--exclude", "ltr-benches"]);
        }
        // Open MPI's ranks spin while they wait for each other unless told to yield (it yields by itself only
        // when it sees more ranks than cores): spinning would take the cores from the work beside.
        if std::env::var_os("OMPI_MCA_mpi_yield_when_idle").is_none() {
            cmd.env("OMPI_MCA_mpi_yield_when_idle", "1");
        }
        tracing::info!("Rust tests: {cmd:?}");
        let mut child = cmd
            .spawn()
            .with_context(|| format!("Rust tests: cannot start {cmd:?}"))?;
        let stderr = child.stderr.take().context("no stderr pipe")?;
        let (started, running) = std::sync::mpsc::channel::<()>();
        scope.spawn(move || {
            let mut started = Some(started);
            for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
                let Ok(line) = line else { break };
                eprintln!("{line}");
                if line.trim_start().starts_with("Running ") {
                    started.take();
                }
            }
        });
        // Dropped at the first `Running` line (or when cargo ends): either way the lock is free.
        running.recv().ok();
        let python = parts.python.then(|| {
            scope.spawn(|| {
                let py = joined(
                    venv_beside.context("the venv was not started")?.join(),
                    "the venv",
                )?;
                python_tests(root, &py, parts, &lint_env, Out::Log(&python_log))
            })
        });
        let mut rust = match child.wait() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(anyhow::anyhow!("Rust tests failed ({s})")),
            Err(e) => Err(anyhow::anyhow!("Rust tests: {e}")),
        };
        if parts.clippy {
            let doc = status(
                Command::new(env!("CARGO"))
                    .args(["test", "--workspace", "--doc"])
                    .args(features(parts))
                    .envs(lint_env.iter().map(|(k, v)| (k, v)))
                    .current_dir(root),
                "Rust doctests",
                Out::Terminal,
            );
            rust = match (rust, doc) {
                (Ok(()), doc) => doc,
                (Err(e), Ok(())) => Err(e),
                (Err(e), Err(d)) => Err(anyhow::anyhow!("{e:#}; {d:#}")),
            };
        }
        let beside = [python.map(|h| {
            let outcome = joined(h.join(), "the Python tests");
            ("Python tests", python_log.as_path(), outcome)
        })];
        Ok((rust, beside))
    })?;
    let mut failed = Vec::new();
    for (name, path, outcome) in beside.into_iter().flatten() {
        print_log(name, path, &outcome);
        if outcome.is_err() {
            failed.push(name);
        }
    }
    match (rust, failed.is_empty()) {
        (Ok(()), true) => Ok(()),
        (Ok(()), false) => bail!("{} failed (output above)", failed.join(" and ")),
        (Err(e), true) => Err(e),
        (Err(e), false) => bail!("{e:#}; {} failed too (output above)", failed.join(" and ")),
    }
}
