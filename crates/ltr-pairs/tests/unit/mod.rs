//! The unit tests of `src/`'s modules, one file each (`objective_copies` is `src/objective/copies.rs`).

mod objective;
mod objective_copies;
mod pair_index;
