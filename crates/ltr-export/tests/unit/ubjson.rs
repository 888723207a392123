//! Tests of `src/ubjson.rs`.

use ltr_export::ubjson::decode;
use serde_json::json;

/// A key or string length as XGBoost writes it (`L` + big-endian i64), then the bytes.
fn key(k: &str) -> Vec<u8> {
    let mut v = vec![b'L'];
    v.extend((k.len() as i64).to_be_bytes());
    v.extend(k.as_bytes());
    v
}

#[test]
fn every_value_xgboost_writes_decodes_to_its_json() {
    let mut b = vec![b'{'];
    b.extend(key("f32"));
    b.extend([b'[', b'$', b'd', b'#', b'L']);
    b.extend(3i64.to_be_bytes());
    for x in [0.5f32, -1.25, 3.0e-8] {
        b.extend(x.to_be_bytes());
    }
    b.extend(key("i32"));
    b.extend([b'[', b'$', b'l', b'#', b'i', 2]);
    b.extend((-7i32).to_be_bytes());
    b.extend(70_000i32.to_be_bytes());
    b.extend(key("u8"));
    b.extend([b'[', b'$', b'U', b'#', b'U', 2, 0, 255]);
    b.extend(key("i64"));
    b.extend([b'[', b'$', b'L', b'#', b'U', 1]);
    b.extend(i64::MIN.to_be_bytes());
    b.extend(key("mixed"));
    b.extend([b'[', b'#', b'L']);
    b.extend(4i64.to_be_bytes());
    b.extend([b'i', 0xff, b'I', 0x01, 0x00, b'T', b'Z']);
    b.extend(key("plain"));
    b.extend([b'[', b'F', b'N', b'D']);
    b.extend(0.1f64.to_be_bytes());
    b.extend([b'C', b'x', b']']);
    b.extend(key("s"));
    b.push(b'S');
    b.extend(key("rank:ndcg"));
    b.extend(key("empty"));
    b.extend([b'{', b'}']);
    b.extend([b'N', b'}']);
    let v = decode(&b).unwrap();
    assert_eq!(
        v,
        json!({
            "f32": [0.5, -1.25, f64::from(3.0e-8f32)],
            "i32": [-7, 70000],
            "u8": [0, 255],
            "i64": [i64::MIN],
            "mixed": [-1, 256, true, null],
            "plain": [false, 0.1, "x"],
            "s": "rank:ndcg",
            "empty": {},
        })
    );
    // A counted, typed object.
    let mut o = vec![b'{', b'$', b'U', b'#', b'i', 2];
    o.extend([b'i', 1, b'a', 7, b'i', 1, b'b', 9]);
    assert_eq!(decode(&o).unwrap(), json!({"a": 7, "b": 9}));
}

#[test]
fn damaged_documents_are_refused_with_the_offset() {
    let err = |b: &[u8]| decode(b).unwrap_err();
    assert!(err(b"").contains("truncated at byte 0"));
    assert!(
        err(b"[$d#i\x02\x3f\x80\x00\x00").contains("truncated"),
        "{}",
        err(b"[$d#i\x02\x3f\x80\x00\x00")
    );
    // A count beyond the bytes left is refused before anything is allocated.
    let mut huge = b"[$d#L".to_vec();
    huge.extend(i64::MAX.to_be_bytes());
    assert!(
        err(&huge).contains("claims 9223372036854775807 values"),
        "{}",
        err(&huge)
    );
    assert!(err(b"[#i\xff").contains("negative container count -1"));
    let mut zeros = b"[$Z#L".to_vec();
    zeros.extend(i64::MAX.to_be_bytes());
    assert!(err(&zeros).contains("take no bytes"), "{}", err(&zeros));
    assert!(err(b"[$d]").contains("no count"));
    assert!(err(b"[q]").contains("unknown type marker `q` at byte 1"));
    assert!(err(b"Si\x02\xff\xfe").contains("invalid UTF-8"));
    assert!(err(b"d\x7f\xc0\x00\x00").contains("JSON cannot hold"));
    assert!(err(b"Ti").contains("1 bytes after the document, from byte 1"));
    assert!(err(b"{i\x01a").contains("truncated at byte 4: a type marker"));
    assert!(err(b"{S").contains("must be an integer"));
    assert!(err(b"Hi\x011").contains("high-precision"));
    assert!(err(&[b'['; 300]).contains("nest deeper than 256"));
}
