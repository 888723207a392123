//! Setup shared by the integration tests' modules.

/// `f` run on a rayon pool of `threads` threads: the determinism tests compare a run on 1 thread with one on 2.
pub fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
        .install(f)
}

/// What the brute-force split searches of `engine.rs` and `unit/grow.rs` share: the sums of bins, LightGBM's
/// estimated document counts, and a candidate split's gain under the settings' limits.
pub mod brute_split {
    use ltr_trees::{split_gain, GrowSettings, Scale, Sums};

    /// `a` and `b` added field by field.
    pub fn plus(a: Sums, b: Sums) -> Sums {
        Sums {
            g: a.g + b.g,
            h: a.h + b.h,
            n: a.n + b.n,
        }
    }

    /// The sums of every bin of `bins`.
    pub fn total(bins: &[Sums]) -> Sums {
        bins.iter().fold(Sums::default(), |a, c| plus(a, *c))
    }

    /// Each bin's estimated documents under `min-docs-count=hessian`, as LightGBM counts them:
    /// `floor(h · n / (H + 2e-15) + 0.5)` with `n` and `H` the leaf's (`total`'s).
    pub fn estimated_counts(bins: &[Sums], total: Sums, scale: &Scale) -> Vec<i64> {
        let factor = total.n as f64 / (scale.cell(total).h + 2e-15);
        bins.iter()
            .map(|c| (scale.cell(*c).h * factor + 0.5).floor() as i64)
            .collect()
    }

    /// The gain of splitting `total` into `left` and the rest, whose counted documents are `counts` (left, right),
    /// or `None` when the settings forbid it: a side without a document, a side counted under
    /// `min_docs_in_leaf`, or a side's hessian under `min_hessian_in_leaf`.
    pub fn allowed_gain(
        s: &GrowSettings,
        scale: &Scale,
        total: Sums,
        left: Sums,
        counts: (i64, i64),
    ) -> Option<f64> {
        let right = Sums {
            g: total.g - left.g,
            h: total.h - left.h,
            n: total.n - left.n,
        };
        let min_n = s.min_docs_in_leaf as i64;
        if left.n < 1 || right.n < 1 || counts.0 < min_n || counts.1 < min_n {
            return None;
        }
        let (l, r) = (scale.cell(left), scale.cell(right));
        if l.h < s.min_hessian_in_leaf || r.h < s.min_hessian_in_leaf {
            return None;
        }
        Some(split_gain(l, r, scale.cell(total), s.l2))
    }
}
