//! Turning scores into a ranking under a tie policy.

use crate::convention::TiePolicy;

/// A ranking of one query's documents: `order[p]` is the document at 0-based position `p`. `groups` partitions
/// the positions into runs of tied documents: under [`TiePolicy::Expected`] each run of equal scores is one group
/// (its members' order is averaged over); otherwise every group has one document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranking {
    /// Document indices by position.
    pub order: Vec<usize>,
    /// `(start, len)` of each group of positions.
    pub groups: Vec<(usize, usize)>,
}

impl Ranking {
    /// Rank `scores` (descending) under `ties`; `docids` are used by [`TiePolicy::DocIdDescending`].
    pub fn new<'a>(
        scores: &[f64],
        ties: TiePolicy,
        docids: Option<&dyn Fn(usize) -> &'a str>,
    ) -> Self {
        let n = scores.len();
        let mut order: Vec<usize> = (0..n).collect();
        // IEEE comparison, so that -0 and +0 tie (scores are finite: NaN is rejected before ranking).
        let by_score = |a: usize, b: usize| {
            scores[b]
                .partial_cmp(&scores[a])
                .unwrap_or(std::cmp::Ordering::Equal)
        };
        match (ties, docids) {
            (TiePolicy::DocIdDescending, Some(id)) => order.sort_by(|&a, &b| {
                by_score(a, b)
                    .then_with(|| id(b).cmp(id(a)))
                    .then(a.cmp(&b))
            }),
            (TiePolicy::ReverseInput, _) => order.sort_by(|&a, &b| by_score(a, b).then(b.cmp(&a))),
            _ => order.sort_by(|&a, &b| by_score(a, b).then(a.cmp(&b))),
        }
        let groups = if ties == TiePolicy::Expected {
            let mut g = Vec::new();
            let mut start = 0;
            for p in 1..=n {
                if p == n || scores[order[p]] != scores[order[start]] {
                    g.push((start, p - start));
                    start = p;
                }
            }
            g
        } else {
            (0..n).map(|p| (p, 1)).collect()
        };
        Ranking { order, groups }
    }

    /// True when every group holds one document.
    pub fn is_resolved(&self) -> bool {
        self.groups.len() == self.order.len()
    }
}
