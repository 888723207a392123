use ltr_metrics::trec::number::*;

/// `str::parse::<f64>` ([`parse_decimal`]'s value).
fn parse_f64(s: &str) -> Option<f64> {
    parse_decimal(s).map(Decimal::value)
}

/// The short number paths against `str::parse`, bit for bit (or both refusing): plain decimals of every length
/// around the 15-digit limit, signs, leading zeros, and forms that take the long way.
#[test]
fn short_number_paths_match_str_parse() {
    let mut rng = ltr_testdata::XorShift64::new(0x2545_f491_4f6c_dd1d);
    let mut next = move |m: u64| rng.below(m);
    let mut cases: Vec<String> = [
        "",
        "-",
        ".",
        "-.",
        "5.",
        ".5",
        "-0",
        "-0.0",
        "+1",
        "1e5",
        "1E-3",
        "00.10",
        "inf",
        "-inf",
        "NaN",
        "1_0",
        "0x10",
        "1.2.3",
        "1..2",
        "--1",
        "-.5",
        "٣",
        "123456789012345",
        "1234567890123456",
        "123456789012345.",
        "12345678901234.5",
        ".123456789012345",
        "0.000000000000001",
        "0.0000000000000001",
        "9007199254740993",
        "999999999999999",
        "0.999999000",
        "999",
        "1000",
        "-999",
        "007",
        "1/2",
        "1:2",
        "12345678:",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..50_000 {
        let digits = 1 + next(18) as usize;
        let mut t: String = (0..digits)
            .map(|_| (b'0' + next(10) as u8) as char)
            .collect();
        if next(3) > 0 {
            t.insert(next(digits as u64 + 1) as usize, '.');
        }
        if next(4) == 0 {
            t.insert(0, '-');
        }
        // Now and then a byte just outside the digits ('/' and ':') or a second point.
        if next(20) == 0 {
            let at = next(t.len() as u64 + 1) as usize;
            t.insert(at, ['/', ':', '.', 'e'][next(4) as usize]);
        }
        cases.push(t);
    }
    for t in &cases {
        let want = t.parse::<f64>().ok().map(f64::to_bits);
        assert_eq!(parse_f64(t).map(f64::to_bits), want, "{t:?}");
        let want = t.parse::<f32>().ok().map(f32::to_bits);
        assert_eq!(parse_f32(t).map(f32::to_bits), want, "{t:?}");
    }
}

#[test]
fn eight_digits_reads_every_position() {
    for k in 0..8 {
        for d in 0..10u64 {
            let mut b = [b'0'; 8];
            b[k] = b'0' + d as u8;
            let w = u64::from_le_bytes(b);
            assert!(all_digits(w));
            assert_eq!(eight_digits(w), d * 10u64.pow(7 - k as u32));
        }
    }
    assert_eq!(eight_digits(u64::from_le_bytes(*b"12345678")), 12_345_678);
    assert!(!all_digits(u64::from_le_bytes(*b"1234567.")));
    assert!(!all_digits(u64::from_le_bytes(*b"/2345678")));
    assert!(!all_digits(u64::from_le_bytes(*b"1234567:")));
}
