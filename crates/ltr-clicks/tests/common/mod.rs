//! Setup shared by the test modules: small feature files with docids, and sessions written by hand.

use ltr_clicks::ClickRecord;
use ltr_data::Dataset;

/// The dataset of a LETOR file's `text` (docids in `#docid = …` comments), read as `ltr train` reads it.
pub fn read_text(text: &str) -> Dataset {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    ltr_data::read_dataset(file.path(), &Default::default()).unwrap()
}

/// Documents `ids` in file order, the first `first_query` of query `qa`, the rest of `qb`; feature 1 is ten times
/// the row number, feature 2 is 1.
pub fn two_queries(ids: &[&str], first_query: usize) -> Dataset {
    let mut text = String::new();
    for (i, id) in ids.iter().enumerate() {
        let q = if i < first_query { "qa" } else { "qb" };
        text.push_str(&format!("0 qid:{q} 1:{} 2:1 #docid = {id}\n", i * 10));
    }
    read_text(&text)
}

/// A session showing `docs` of `qid` at ranks 1, 2, … with `clicks`, each rank's logged propensity
/// `propensity(rank)`.
pub fn session(
    id: u64,
    qid: &str,
    docs: &[&str],
    clicks: &[bool],
    propensity: fn(u32) -> Option<f64>,
) -> Vec<ClickRecord> {
    docs.iter()
        .zip(clicks)
        .enumerate()
        .map(|(k, (d, &c))| ClickRecord {
            session: id,
            qid: qid.into(),
            docid: (*d).into(),
            rank: k as u32 + 1,
            clicked: c,
            propensity: propensity(k as u32 + 1),
            production_rank: None,
        })
        .collect()
}
