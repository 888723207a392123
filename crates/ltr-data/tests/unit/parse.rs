//! Tests of `src/parse.rs`.

use ltr_data::*;

#[test]
fn docid_forms() {
    assert_eq!(
        extract_docid("docid = GX008-86-4444840 inc = 1 prob = 0.08"),
        Some("GX008-86-4444840")
    );
    assert_eq!(extract_docid("docid=X12"), Some("X12"));
    assert_eq!(extract_docid("nothing here"), None);
}

/// The short decimal reader against `fast_float2` (the parser it stands in front of) and `str::parse`, bit for
/// bit: random decimals of 1–17 digits with the point anywhere, signs, zeros, and decimals that are exactly
/// halfway between two f32 values or that round to such a halfway f64 (the case left to the exact parser).
#[test]
fn short_decimals_read_as_the_exact_parsers_read_them() {
    let mut rng = ltr_testdata::XorShift64::new(0x2545_f491_4f6c_dd1d);
    let mut next = move |m: u64| rng.below(m);
    let mut tokens: Vec<String> = [
        "0",
        "-0",
        "0.",
        ".5",
        "-.5",
        "5.",
        "16777217",
        "16777219",
        "-16777217",
        "33554435",
        "0.000000059604644775390625",
        "1.00000005960464477539",
        "0.1",
        "0.5287368",
        "0.53554475",
        "999999999999999",
        "9999999999999999",
        "0.000000000000001",
        "1e5",
        "-",
        ".",
        "-.",
        "",
        "00000000000000000001",
        "0.00000000000000001",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    // Halfway points of f32 with few digits: 2^(24−k) + 1.5 ulp, the ulp there being 2^(1−k).
    for k in 0..10u32 {
        let half_ulp = 0.5f64.powi(k as i32);
        let base = (1u64 << (24 - k.min(23))) as f64;
        tokens.push(format!("{}", base + half_ulp * 3.0));
    }
    for _ in 0..50_000 {
        let digits = 1 + next(17) as usize;
        let mut t: String = (0..digits)
            .map(|_| char::from(b'0' + next(10) as u8))
            .collect();
        let point = next(digits as u64 + 2) as usize;
        if point <= digits {
            t.insert(point, '.');
        }
        if next(3) == 0 {
            t.insert(0, '-');
        }
        tokens.push(t);
    }
    let mut fast = 0;
    for t in &tokens {
        let want = fast_float2::parse_partial::<f32, _>(t.as_bytes()).ok();
        // A short decimal followed by more than a separator (`1e5`) is read again by fast_float2.
        if let Some((got, used)) = short_decimal(t.as_bytes()).filter(|p| p.1 == t.len()) {
            fast += 1;
            let (v, n) = want.unwrap_or_else(|| panic!("{t}: read {got}, fast_float2 rejects it"));
            assert_eq!((got.to_bits(), used), (v.to_bits(), n), "{t}");
            assert_eq!(got.to_bits(), t.parse::<f32>().unwrap().to_bits(), "{t}");
        }
    }
    // Most tokens of 15 digits or fewer take the short path.
    assert!(fast > 30_000, "{fast}");
    assert_eq!(short_decimal(b"16777217"), None, "an exact halfway point");
    assert_eq!(short_decimal(b"0.5287368 2:1"), Some((0.5287368, 9)));
}

#[test]
fn sub_chunks_end_on_newlines() {
    let text = b"a\nbb\nccc\n";
    let c = split_sub_chunks(text);
    assert_eq!(c.concat(), text);
}

/// The reader's block grows with the pool (four 1 MiB sub-chunks a thread) between 8 and 64 MiB, whatever the
/// machine: the pools are built here, not taken from the core count.
#[test]
fn default_block_size_follows_the_pool() {
    let in_pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(default_block_size)
    };
    assert_eq!(in_pool(1), 8 << 20);
    assert_eq!(in_pool(2), 8 << 20);
    assert_eq!(in_pool(4), 16 << 20);
    assert_eq!(in_pool(16), 64 << 20);
    assert_eq!(in_pool(64), 64 << 20);
    assert_eq!(ParseOptions::default().block_size, default_block_size());
}
