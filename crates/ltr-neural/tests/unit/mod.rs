//! The unit tests of `src/`'s modules, one file each.

mod losses;
mod step;
