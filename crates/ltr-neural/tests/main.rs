//! Integration tests of `ltr-neural`: the losses against allRank and finite differences, training.
mod attention;
mod batch_norm;
mod common;
mod losses;
mod memory;
mod training;
