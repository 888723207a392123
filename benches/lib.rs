//! Shared helpers for the workspace benchmarks.
