//! The tests of the library's modules, one file per module of `src/` (they were `#[cfg(test)]` modules there).

mod bins;
mod grow;
mod hist;
mod ranks;
