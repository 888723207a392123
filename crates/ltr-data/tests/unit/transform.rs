//! Tests of `src/transform.rs`.

use ltr_data::*;

#[test]
fn feature_lists_expand_ranges_and_refuse_what_cannot_be_a_feature() {
    assert_eq!(
        parse_feature_list("1-3, 7,10-11").unwrap(),
        vec![1, 2, 3, 7, 10, 11]
    );
    assert_eq!(parse_feature_list("").unwrap(), Vec::<usize>::new());
    for bad in ["0", "3-2", "x", "1-", "-4", "4294967296", "1-4294967296"] {
        assert!(parse_feature_list(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_feature_list("4294967295").unwrap(), vec![4294967295]);
    // Found while writing the `experiment_toml` fuzz target (its binary reproduces it): `log1p = "1-99999999999"`
    // expanded the range into memory (800 GB asked of the allocator). A list naming more than 2^24 features is
    // now refused before anything is expanded.
    let e = parse_feature_list("1-4294967295").unwrap_err().to_string();
    assert!(e.contains("more than 16777216 features"), "{e}");
}
