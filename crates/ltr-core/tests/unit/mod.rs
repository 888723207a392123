//! The unit tests of `src/`'s modules, one file each.

mod aggregate;
mod collective;
mod compiled_forest;
mod forest;
mod learner;
mod model_file;
mod neural;
mod neural_bf16;
mod neural_int8;
mod neural_sparse;
mod neural_tiles;
mod params;
