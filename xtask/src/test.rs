//! `cargo xtask test`: every test the project has — the Rust workspace built with the MPI backend (Open MPI
//! installed by `scripts/setup-mpi.sh` when missing; `ltr-cli/tests/mpi.rs` runs `mpirun` with 1–3 ranks; Debian's
//! chromium installed by `scripts/setup-chromium.sh` for `ltr-cli/tests/report_html.rs`), then the Python package
//! built into a virtual environment (installing what it needs from the package registries) and its pytest suite.
//! Among the Rust tests: `xtask-lab`'s `results_slice` (is `results/` stale?). This binary links no ltr library,
//! so the test build is the one build of the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

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
}

/// `--features` for every cargo call of one run, so that they share one feature resolution (and one build).
fn features(parts: Parts) -> &'static [&'static str] {
    if parts.mpi {
        &["--features", "ltr-cli/mpi"]
    } else {
        &[]
    }
}

fn status(cmd: &mut Command, what: &str) -> Result<()> {
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

/// The venv the Python tests use (`target/python-venv`), made when missing, with the build and test requirements
/// of `python/requirements-test.txt` (the peers there are oracles only, never dependencies of `ltrkit`).
fn venv(root: &Path) -> Result<PathBuf> {
    let dir = root.join("target").join("python-venv");
    let py = dir.join("bin").join("python");
    if !py.is_file() {
        status(
            Command::new(python()?).args(["-m", "venv"]).arg(&dir),
            "making the Python test environment",
        )?;
    }
    status(
        Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(root.join("python").join("requirements-test.txt")),
        "installing the Python test requirements",
    )?;
    Ok(py)
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to the root) when set, else `target/`.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |d| root.join(d))
}

/// Run the chosen parts from the project root.
pub fn run(root: &Path, parts: Parts) -> Result<()> {
    if parts.mpi {
        status(
            Command::new("bash")
                .arg(root.join("scripts").join("setup-mpi.sh"))
                .current_dir(root),
            "installing Open MPI for the MPI tests (scripts/setup-mpi.sh; --no-mpi skips them)",
        )?;
    }
    if parts.rust {
        status(
            Command::new("bash")
                .arg(root.join("scripts").join("setup-chromium.sh"))
                .current_dir(root),
            "installing chromium for the report.html screenshot test (scripts/setup-chromium.sh)",
        )?;
        status(
            Command::new(env!("CARGO"))
                .args(["test", "--workspace"])
                .args(features(parts))
                .current_dir(root),
            "Rust tests",
        )?;
    }
    if parts.python {
        let py = venv(root)?;
        // `pip install ./python` as a user would, built with the dev profile so that it reuses the artifacts of
        // the Rust tests (the release build is for wheels).
        status(
            Command::new(&py)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--force-reinstall",
                    "--no-deps",
                ])
                .arg(root.join("python"))
                .env("MATURIN_PEP517_ARGS", "--profile dev")
                .current_dir(root),
            "building and installing the Python package (pip install ./python)",
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
            )?;
        }
        status(
            Command::new(&py)
                .args(["-m", "pytest", "-q", "--durations=10", "python/tests"])
                .env("LTR_BIN", target_dir(root).join("debug").join("ltr"))
                .current_dir(root),
            "Python tests",
        )?;
    }
    Ok(())
}
