use ltr_core::*;

#[test]
fn unknown_and_invalid_parameters_are_reported() {
    let p = Params::new([("C", "0.5"), ("Epochs", "x"), ("bogus", "1")]);
    assert_eq!(p.float_in("c", 1.0, 0.0, 1e9).unwrap(), 0.5);
    assert!(p
        .int_in("epochs", 10, 1, 100)
        .unwrap_err()
        .to_string()
        .contains("`x`"));
    let e = p.finish("ranksvm").unwrap_err().to_string();
    assert!(e.contains("bogus") && e.contains("known: c, epochs"), "{e}");
    assert!(Params::new([("c", "-1")])
        .float_in("c", 1.0, 0.0, 10.0)
        .is_err());
}
