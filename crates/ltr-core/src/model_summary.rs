//! What a model file says about itself, in words and ranked lists: `ltr inspect`, `ltrkit` and reports read it
//! from here, so every front end describes a model the same way.

use crate::{Model, ModelFile};

impl ModelFile {
    /// The kind of model, in words (`linear`, `120 regression trees, 3,720 leaves`, …).
    pub fn kind_description(&self) -> String {
        match &self.model {
            Model::Linear(_) => "linear".to_string(),
            Model::Aggregate(a) => format!(
                "rank aggregate of {} linear members ({:?})",
                a.members.len(),
                a.method
            ),
            Model::Stumps(s) => format!("{} threshold weak rankers", s.stumps.len()),
            Model::Trees(t) => format!("{} regression trees", t.trees.len()),
            Model::Forest(f) => format!(
                "{} regression trees, {} leaves",
                f.trees.len(),
                f.trees.iter().map(|t| t.n_leaves()).sum::<usize>()
            ),
        }
    }

    /// A linear model's weights as (raw feature number, name, weight), largest |weight| first (ties by feature);
    /// empty for other models.
    pub fn weights_by_magnitude(&self) -> Vec<(usize, String, f64)> {
        let Model::Linear(l) = &self.model else {
            return Vec::new();
        };
        let mut v: Vec<(usize, String, f64)> = self
            .input_features()
            .into_iter()
            .zip(&l.weights)
            .map(|((raw, name), &w)| (raw, name, w))
            .collect();
        v.sort_by(|a, b| b.2.abs().total_cmp(&a.2.abs()).then(a.0.cmp(&b.0)));
        v
    }

    /// A tree ensemble's features that split at least once, as (raw feature number, name, splits, summed gain),
    /// largest gain first (ties by feature); empty for other models.
    pub fn importance_by_gain(&self) -> Vec<(usize, String, u64, f64)> {
        let Model::Forest(f) = &self.model else {
            return Vec::new();
        };
        let (splits, gains) = f.importance();
        let mut v: Vec<(usize, String, u64, f64)> = self
            .input_features()
            .into_iter()
            .zip(splits.iter().zip(&gains))
            .filter(|(_, (&n, _))| n > 0)
            .map(|((raw, name), (&n, &g))| (raw, name, n, g))
            .collect();
        v.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)));
        v
    }
}
