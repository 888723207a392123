//! The tests of the library's modules, one file per module of `src/` (they were `#[cfg(test)]` modules there).

mod adarank;
mod dla;
mod lambdarank;
mod line_search;
mod measure;
