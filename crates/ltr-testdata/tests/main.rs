//! ltr-testdata's integration tests, one binary: the tests of the library, which live here rather than under
//! `cfg(test)` in `src/` so that `cargo test --all-targets` compiles the library once (its root is
//! `#![cfg(not(test))]`).

use ltr_testdata::XorShift64;

#[test]
fn xorshift_gives_marsaglias_sequence() {
    // The first values from seed 1, computed apart in Python with 64-bit masks: the tests that moved here from
    // their own copies (parser, TREC reader, ranking) keep drawing the cases they drew.
    let mut r = XorShift64::new(1);
    assert_eq!(r.next_u64(), 1_082_269_761);
    assert_eq!(r.next_u64(), 1_152_992_998_833_853_505);
    assert_eq!(r.below(10), 11_177_516_664_432_764_457 % 10);
}
