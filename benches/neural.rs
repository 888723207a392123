//! The neural learner's hot path (issue 53): the two fixed-order f32 products of training (the forward product
//! `x W + b`, also `dy Wᵀ`, and the weight gradient `aᵀ dy`) at the widths of allRank's MLP, and one epoch of
//! allRank's published MLP configuration (256/512/1024/512/256, ReLU, dropout 0.3, NDCG-Loss2++, batches of 64
//! queries, slates of 240) and of its context-aware (self-attention) configuration on OHSUMED Fold1 (generated
//! OHSUMED-like data without `../shared/datasets`).
//!
//! Each product also runs in the safe kernels' tiles (`safe tiles`: what `matmul_rows` ran before its SIMD tiles),
//! so that one run gives before and after.
//!
//! `scoring against the core's ceiling` puts issue 53's scoring goal (1 M documents/s a core for an MLP of
//! 136→256→128→1) beside what the core can do at all: the MLP's documents/s through `score_dataset` (what `ltr
//! predict` calls) and, in the same run, twelve independent chains of fused multiply-adds at the widest SIMD level
//! the CPU has, counted as documents of 67,712 multiply-adds each, and the same MLP with its hidden layers'
//! products in bfloat16 (`ltr predict --precision bf16`; safe and slow without AVX-512 BF16). Run with
//! `RAYON_NUM_THREADS=1`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ltr_benches::{generated, ohsumed_like};
use ltr_core::neural::kernels;
use ltr_core::{Fit, FitContext, ParamGuard, Scorer};
use ltr_neural::{Loss, NeuralParams};

/// Deterministic values in [-1, 1), every third one zero (ReLU's and dropout's zeros).
fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let h = (i * 2_654_435_761 + seed * 40_503) % 1_000_003;
            if h.is_multiple_of(3) {
                0.0
            } else {
                h as f32 / 500_001.5 - 1.0
            }
        })
        .collect()
}

fn products(c: &mut Criterion) {
    let mut g = c.benchmark_group("neural products, 128 rows");
    for (k_dim, o_dim) in [(45, 256), (512, 1024), (1024, 512)] {
        let rows = 128;
        let x = values(rows * k_dim, 1);
        let m = values(k_dim * o_dim, 2);
        let b = values(o_dim, 3);
        let dy = values(rows * o_dim, 4);
        let mut y = vec![0f32; rows * o_dim];
        let mut dw = vec![0f32; k_dim * o_dim];
        g.throughput(Throughput::Elements((rows * k_dim * o_dim) as u64));
        let shape = format!("{k_dim}x{o_dim}");
        g.bench_with_input(BenchmarkId::new("x W + b", &shape), &shape, |bn, _| {
            bn.iter(|| kernels::matmul_rows(&x, &m, Some(&b), &mut y, k_dim, o_dim))
        });
        g.bench_with_input(BenchmarkId::new("dW += aT dy", &shape), &shape, |bn, _| {
            bn.iter(|| kernels::weight_gradient(&x, &dy, &mut dw, k_dim, o_dim))
        });
        // The same products in the safe kernels' tiles (4 rows × 64 or 16 sums), the SIMD tiles' oracle: before
        // and after in one run.
        let wide = ltr_data::simd_level() >= ltr_data::SimdLevel::Avx512;
        g.bench_with_input(
            BenchmarkId::new("x W + b, safe tiles", &shape),
            &shape,
            |bn, _| {
                bn.iter(|| {
                    kernels::matmul_with(&x, &m, Some(&b), &mut y, k_dim, o_dim, rows, wide, false)
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("dW += aT dy, safe tiles", &shape),
            &shape,
            |bn, _| {
                bn.iter(|| {
                    kernels::weight_gradient_with(&x, &dy, &mut dw, k_dim, o_dim, wide, false)
                })
            },
        );
    }
    g.finish();
}

fn epoch(c: &mut Criterion) {
    let ds = ohsumed_like();
    // allRank's training settings: NDCG-Loss2++, batches of 64 queries, slates of 240 (one epoch here).
    let allrank = |p: NeuralParams| {
        p.loss(Loss::parse("ndcgloss2pp").expect("a loss"))
            .batch_size(64)
            .slate_length(240)
            .epochs(1)
            .check()
            .expect("valid parameters")
    };
    let params = allrank(
        NeuralParams::default()
            .sizes(vec![256, 512, 1024, 512, 256])
            .dropout(0.3),
    );
    // allRank's context-aware configuration: 128 wide, four blocks of four heads, d_ff 512, dropout 0.3 in the
    // encoder; it goes query by query (`step.rs`, `query_by_query`).
    let context_aware = || {
        NeuralParams::default()
            .sizes(vec![128])
            .activation(ltr_core::neural::Activation::Identity)
            .blocks(4)
            .heads(4)
            .d_ff(512)
            .encoder_dropout(0.3)
    };
    let attention = allrank(context_aware());
    // The same, lean (`memory=lean`, the same model): OHSUMED's queries hold 146 documents on average, so its steps
    // keep no transposes but the first feed-forward layers' and park no group (what `auto` takes on the web set).
    let attention_lean = allrank(context_aware().lean(true));
    // The same MLP in pieces of 512 documents, what `piece-rows=auto` takes for it on the web set: a piece of one
    // group, whose products the threads share (`net.rs`, `affine_in_parallel`) and whose terms go straight into the
    // step's sum.
    let small_pieces = allrank(
        NeuralParams::default()
            .sizes(vec![256, 512, 1024, 512, 256])
            .dropout(0.3)
            .piece_rows(512),
    );
    let mut g = c.benchmark_group("neural");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ds.n_docs() as u64));
    for threads in [1, 2] {
        // `FitContext::new` takes the seed; the thread count is the pool the fit runs in.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        g.bench_with_input(
            BenchmarkId::new("epoch, allRank's MLP (OHSUMED Fold1), threads", threads),
            &threads,
            |bn, _| bn.iter(|| pool.install(|| params.fit(&ds, &FitContext::new(1)).expect("fit"))),
        );
        g.bench_with_input(
            BenchmarkId::new(
                "epoch, allRank's MLP in pieces of 512 (OHSUMED Fold1), threads",
                threads,
            ),
            &threads,
            |bn, _| {
                bn.iter(|| {
                    pool.install(|| small_pieces.fit(&ds, &FitContext::new(1)).expect("fit"))
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new(
                "epoch, allRank's attention (OHSUMED Fold1), threads",
                threads,
            ),
            &threads,
            |bn, _| {
                bn.iter(|| pool.install(|| attention.fit(&ds, &FitContext::new(1)).expect("fit")))
            },
        );
        g.bench_with_input(
            BenchmarkId::new(
                "epoch, allRank's attention lean (OHSUMED Fold1), threads",
                threads,
            ),
            &threads,
            |bn, _| {
                bn.iter(|| {
                    pool.install(|| attention_lean.fit(&ds, &FitContext::new(1)).expect("fit"))
                })
            },
        );
    }
    g.finish();
}

/// Multiply-adds a document costs in an MLP of 136→256→128→1: 136·256 + 256·128 + 128·1.
const MLP_MULTIPLY_ADDS: u64 = 136 * 256 + 256 * 128 + 128;

/// `rounds` × 192 fused multiply-adds in twelve independent chains of 16 lanes (enough chains to hide the FMA
/// latency on current x86 cores), nothing loaded or stored inside the loop: the core's multiply-add ceiling.
/// Written with intrinsics because the compiler, given the same loop in plain Rust, keeps the chains in memory.
/// With AVX-512 and FMA a round is 12 vectors of 16 lanes; with AVX2 and FMA only, 24 vectors of 8. `None` without
/// FMA.
#[allow(unsafe_code)]
fn fma_chains(rounds: usize, start: f32) -> Option<f32> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        #[target_feature(enable = "avx512f,fma")]
        fn chains(rounds: usize, start: f32) -> f32 {
            let (m, a) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
            let mut acc = [_mm512_set1_ps(start); 12];
            for _ in 0..rounds {
                for v in acc.iter_mut() {
                    *v = _mm512_fmadd_ps(*v, m, a);
                }
            }
            acc.iter().map(|&v| _mm512_reduce_add_ps(v)).sum()
        }
        #[target_feature(enable = "avx2,fma")]
        fn chains_avx2(rounds: usize, start: f32) -> f32 {
            let (m, a) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
            let mut acc = [_mm256_set1_ps(start); 12];
            for _ in 0..2 * rounds {
                for v in acc.iter_mut() {
                    *v = _mm256_fmadd_ps(*v, m, a);
                }
            }
            let mut out = [0f32; 8];
            let sum = acc
                .iter()
                .fold(_mm256_setzero_ps(), |s, &v| _mm256_add_ps(s, v));
            // SAFETY: `out` holds 8 floats.
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), sum) };
            out.iter().sum()
        }
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma") {
            // SAFETY: the features `chains` is compiled for were detected on this CPU just above.
            return Some(unsafe { chains(rounds, start) });
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: as above, for `chains_avx2`.
            return Some(unsafe { chains_avx2(rounds, start) });
        }
    }
    let _ = (rounds, start);
    None
}

/// `rounds` × 192 byte multiply-adds as `--precision int8`'s AVX2 tile does them (two `vpmaddubsw`, a 16-bit add,
/// `vpmaddwd`, a 32-bit add: 64 multiply-adds into a vector of 8 sums) into six independent sums, from operands
/// held in registers (an empty `asm!` hides their values, so the compiler cannot fold the loop into a product):
/// the core's ceiling for those products. `None` without AVX2.
#[allow(unsafe_code)]
fn int8_chains(rounds: usize, start: i32) -> Option<i32> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        #[target_feature(enable = "avx2")]
        fn chains(rounds: usize, start: i32) -> i32 {
            let mut x = [
                _mm256_set1_epi8(1),
                _mm256_set1_epi8(2),
                _mm256_set1_epi8(3),
            ];
            let mut w = [5, 6, 7, -8].map(|v| _mm256_set1_epi8(v));
            let ones = _mm256_set1_epi16(1);
            let mut acc = [_mm256_set1_epi32(start); 6];
            for _ in 0..rounds.div_ceil(2) {
                for (i, a) in acc.iter_mut().enumerate() {
                    let (xa, xb) = (x[i % 3], x[(i + 1) % 3]);
                    let (wa, wb) = (w[i % 4], w[(i + 2) % 4]);
                    let s = _mm256_add_epi16(
                        _mm256_maddubs_epi16(xa, wa),
                        _mm256_maddubs_epi16(xb, wb),
                    );
                    *a = _mm256_add_epi32(*a, _mm256_madd_epi16(s, ones));
                }
                // SAFETY: an empty template; it only tells the compiler the registers may have changed.
                unsafe {
                    std::arch::asm!(
                        "/* {0} {1} {2} {3} {4} {5} {6} */",
                        inout(ymm_reg) x[0], inout(ymm_reg) x[1], inout(ymm_reg) x[2],
                        inout(ymm_reg) w[0], inout(ymm_reg) w[1], inout(ymm_reg) w[2], inout(ymm_reg) w[3],
                        options(nomem, nostack, preserves_flags)
                    )
                };
            }
            let sum = acc
                .iter()
                .fold(_mm256_setzero_si256(), |s, &v| _mm256_add_epi32(s, v));
            _mm256_extract_epi32::<0>(sum)
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the features `chains` is compiled for were detected on this CPU just above.
            return Some(unsafe { chains(rounds, start) });
        }
    }
    let _ = (rounds, start);
    None
}

fn scoring_ceiling(c: &mut Criterion) {
    let ds = generated(200, 100, 136);
    let params = NeuralParams::default()
        .sizes(vec![256, 128])
        .epochs(1)
        .check()
        .expect("valid parameters");
    let model = params.fit(&ds, &FitContext::new(1)).expect("fit").model;
    let mut g = c.benchmark_group("scoring against the core's ceiling");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ds.n_docs() as u64));
    g.bench_function("MLP 136-256-128-1, score_dataset (documents)", |bn| {
        bn.iter(|| model.score_dataset(&ds))
    });
    // The opt-in bfloat16 products (`ltr predict --precision bf16`): the same network, hidden layers in bfloat16.
    if let ltr_core::Model::Neural(net) = &model {
        let fast = net.to_bf16();
        g.bench_function("MLP 136-256-128-1, bfloat16 products (documents)", |bn| {
            bn.iter(|| fast.score_dataset(&ds))
        });
        // `ltr predict --precision int8`: the hidden layers' products in 8-bit integers.
        let int8 = net.to_int8();
        g.bench_function("MLP 136-256-128-1, int8 products (documents)", |bn| {
            bn.iter(|| int8.score_dataset(&ds))
        });
    }
    // 16 · 12 multiply-adds a round; as many rounds as the documents above cost.
    let rounds = (ds.n_docs() as u64 * MLP_MULTIPLY_ADDS).div_ceil(192) as usize;
    if fma_chains(1, 1.0).is_some() {
        g.bench_function("FMA ceiling (documents of 67,712 multiply-adds)", |bn| {
            bn.iter(|| fma_chains(std::hint::black_box(rounds), std::hint::black_box(1.0)))
        });
    } else {
        eprintln!("FMA ceiling skipped: this CPU has no FMA");
    }
    if int8_chains(1, 1).is_some() {
        g.bench_function("int8 ceiling (documents of 67,712 multiply-adds)", |bn| {
            bn.iter(|| int8_chains(std::hint::black_box(rounds), std::hint::black_box(1)))
        });
    }
    g.finish();
}

criterion_group!(benches, products, epoch, scoring_ceiling);
criterion_main!(benches);
