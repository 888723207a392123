use ltr_learn::algorithms::neural::parse_sizes;

#[test]
fn sizes_parse_or_name_the_problem() {
    assert_eq!(parse_sizes("256/128").unwrap(), vec![256, 128]);
    assert_eq!(parse_sizes(" 64 ").unwrap(), vec![64]);
    assert!(parse_sizes("none").unwrap().is_empty());
    assert!(parse_sizes("256/x")
        .unwrap_err()
        .to_string()
        .contains("`/`"));
    assert!(parse_sizes("256/0").is_err());
}
