//! The oracle fixture `fixtures/measures.json` (built by `fixtures/make_measures.py`) and its TREC run.

use std::collections::HashMap;

use ltr_metrics::RunQuery;
use serde_json::Value;

/// The parsed fixture.
pub fn fixture() -> Value {
    serde_json::from_str(include_str!("../fixtures/measures.json")).unwrap()
}

/// The fixture's run, grouped by qid in order of first appearance (as `read_run` groups a file).
pub fn run(f: &Value) -> Vec<RunQuery> {
    let mut run: Vec<RunQuery> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for row in f["run"].as_array().unwrap() {
        let qid = row[0].as_str().unwrap().to_string();
        let i = *index.entry(qid.clone()).or_insert_with(|| {
            run.push(RunQuery::new(qid));
            run.len() - 1
        });
        run[i].push(row[1].as_str().unwrap(), row[2].as_f64().unwrap());
    }
    run
}
