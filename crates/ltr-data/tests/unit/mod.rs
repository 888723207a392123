//! The tests of the library's modules, one file per module of `src/` (they were `#[cfg(test)]` modules there).

mod dataset;
mod exact_sum;
mod generate_web;
mod generate_web_raw;
mod parse;
mod preprocess;
mod simd;
mod transform;
