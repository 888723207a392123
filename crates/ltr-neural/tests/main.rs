//! Integration tests of `ltr-neural`: the losses against allRank and finite differences, training.
mod attention;
mod common;
mod losses;
mod training;
