//! The tests of the library's modules, one file per module of `src/` (they were `#[cfg(test)]` modules there).

mod foreign_tree;
mod forest;
mod trees;
mod ubjson;
