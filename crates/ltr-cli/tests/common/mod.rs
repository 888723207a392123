//! Running the `ltr` binary from the integration tests.

use std::process::{Command, Output};

/// Run `ltr` with `args` (logs at warn).
pub fn ltr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ltr"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run ltr")
}

/// Run `ltr`, require success, return stdout.
pub fn ok(args: &[&str]) -> String {
    let o = ltr(args);
    assert!(
        o.status.success(),
        "ltr {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}
