//! Tests of `src/simd.rs`.

use ltr_data::*;

#[test]
fn levels_parse_by_name_and_order() {
    for l in SimdLevel::ALL {
        assert_eq!(SimdLevel::parse(l.name()), Some(l));
    }
    assert_eq!(SimdLevel::parse(" AVX2+FMA "), Some(SimdLevel::Avx2Fma));
    assert_eq!(SimdLevel::parse("sse9"), None);
    assert!(SimdLevel::Baseline < SimdLevel::Avx2 && SimdLevel::Avx2Fma < SimdLevel::Avx512);
    let available = SimdLevel::available();
    assert_eq!(available[0], SimdLevel::Baseline);
    assert_eq!(*available.last().unwrap(), SimdLevel::detected());
    assert!(simd_level() <= SimdLevel::detected());
}
