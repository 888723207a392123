//! The workspace-hack crate managed by `cargo hakari`: it depends on third-party crates with the union of the
//! features the workspace uses, and every member depends on it, so that building any subset of the workspace
//! (`cargo xtask`, `pip install ./python`, `cargo test -p …`) resolves the same features as the whole and reuses
//! the same compiled dependencies. Regenerate after changing dependencies:
//! `cargo hakari generate && cargo hakari manage-deps` (install with `cargo install cargo-hakari --locked`).
