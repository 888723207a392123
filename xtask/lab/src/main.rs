//! `xtask-lab`'s binary: the command lives in the library (`src/lib.rs`), compiled once for the binary and the tests.
// Empty under `cfg(test)`: `cargo test --all-targets` builds a unit-test harness of the binary even with `test =
// false`, and this one then links nothing.
#![cfg(not(test))]

fn main() -> std::process::ExitCode {
    xtask_lab::main()
}
