//! Which of its SIMD clones a multiversioned function runs. The kernels compiled also for AVX2, AVX2 with FMA or
//! AVX-512 (`multiversion`, chosen at run time) do the same operations in the same order in every clone, so every
//! clone gives the same bits; [`multiversioned!`] makes that testable: the clone is the best one the CPU has,
//! capped by the environment variable `LTR_SIMD` (`baseline`, `avx2`, `avx2+fma` or `avx512`), read once per
//! process. `ltr-cli`'s test `simd_dispatch` trains every algorithm under each level this CPU has and compares
//! the models byte for byte.

use std::sync::OnceLock;

/// A SIMD level, in increasing order; each implies the ones below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    /// No clone: the code compiled for the target's baseline (x86-64: SSE2).
    Baseline,
    /// The AVX2 clones.
    Avx2,
    /// The AVX2 clones with FMA enabled (the compiler never fuses a multiply and an add on its own).
    Avx2Fma,
    /// The AVX-512 (F and VL) clones.
    Avx512,
}

impl SimdLevel {
    /// Every level, lowest first.
    pub const ALL: [SimdLevel; 4] = [
        SimdLevel::Baseline,
        SimdLevel::Avx2,
        SimdLevel::Avx2Fma,
        SimdLevel::Avx512,
    ];

    /// The name `LTR_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Baseline => "baseline",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx2Fma => "avx2+fma",
            SimdLevel::Avx512 => "avx512",
        }
    }

    /// The level of a name (as [`SimdLevel::name`] writes it).
    pub fn parse(s: &str) -> Option<SimdLevel> {
        SimdLevel::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
    }

    /// The highest level this CPU has.
    pub fn detected() -> SimdLevel {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2");
            let fma = std::arch::is_x86_feature_detected!("fma");
            let avx512 = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl");
            if avx512 && avx2 && fma {
                SimdLevel::Avx512
            } else if avx2 && fma {
                SimdLevel::Avx2Fma
            } else if avx2 {
                SimdLevel::Avx2
            } else {
                SimdLevel::Baseline
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            SimdLevel::Baseline
        }
    }

    /// Every level this CPU can run, lowest first (the ones `LTR_SIMD` can pin).
    pub fn available() -> Vec<SimdLevel> {
        let top = SimdLevel::detected();
        SimdLevel::ALL.into_iter().filter(|&l| l <= top).collect()
    }
}

/// The level the multiversioned kernels of this process run: [`SimdLevel::detected`], capped by `LTR_SIMD` when
/// set (an unknown value is reported once on stderr and ignored).
pub fn simd_level() -> SimdLevel {
    static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let detected = SimdLevel::detected();
        match std::env::var("LTR_SIMD") {
            Ok(v) => match SimdLevel::parse(&v) {
                Some(cap) => cap.min(detected),
                None => {
                    tracing::warn!(
                        "LTR_SIMD={v} is not one of baseline, avx2, avx2+fma, avx512: ignored"
                    );
                    detected
                }
            },
            Err(_) => detected,
        }
    })
}

/// A function compiled as `multiversion` compiles it — once per target clone and once for the baseline — and run
/// in the clone that [`simd_level`] allows: the first clone from its level up, the second from its level up, else
/// the baseline. Within a clone `multiversion` still checks that the CPU has its features. The calling crate depends
/// on `multiversion` itself, as for `multiversion`'s own attribute: the code it generates names the crate (tidy's
/// unused-dependency test counts `multiversioned!` as a use of it).
///
/// ```
/// ltr_data::multiversioned! {
///     clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
///     /// `Σ x·y`.
///     pub fn dot(x: &[f64], y: &[f64]) -> f64 {
///         x.iter().zip(y).map(|(a, b)| a * b).sum()
///     }
/// }
/// assert_eq!(dot(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
/// ```
#[macro_export]
macro_rules! multiversioned {
    (
        clones($top:literal if $top_level:ident, $second:literal if $second_level:ident);
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$($lt:lifetime),+>)? ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block
    ) => {
        $(#[$attr])*
        $vis fn $name $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
            #[multiversion::multiversion(targets($top))]
            fn top $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? $body
            #[multiversion::multiversion(targets($second))]
            fn second $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? $body
            fn baseline $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? $body
            let level = $crate::simd_level();
            if level >= $crate::SimdLevel::$top_level {
                top($($arg),*)
            } else if level >= $crate::SimdLevel::$second_level {
                second($($arg),*)
            } else {
                baseline($($arg),*)
            }
        }
    };
}
