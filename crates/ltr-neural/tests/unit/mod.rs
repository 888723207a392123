//! The unit tests of `src/`'s modules, one file each.

mod dense;
mod encoder;
mod losses;
mod step;
