//! The tests of the library's modules, one file per module of `src/` (they were `#[cfg(test)]` modules there).

mod click_em;
mod click_sessions;
mod click_training;
mod clicks;
mod doubly_robust;
