//! Tests of `src/ranks.rs`.

use ltr_trees::ranks::*;

/// Split any way over ranks, the sampled documents are the one-process sample, each exactly once.
#[test]
fn ranks_sample_the_documents_one_process_samples() {
    let layout = |docs, doc_offset| Layout {
        docs,
        doc_offset,
        queries: 0,
        query_offset: 0,
    };
    assert_eq!(layout(10, 0).sampled_docs(10, 10), None);
    let whole: Vec<usize> = layout(1000, 0).sampled_docs(1000, 64).unwrap();
    assert_eq!(whole.len(), 64);
    assert!(whole.windows(2).all(|w| w[0] < w[1]));
    for cuts in [
        vec![0, 1000],
        vec![0, 15, 1000],
        vec![0, 333, 334, 999, 1000],
    ] {
        let joined: Vec<usize> = cuts
            .windows(2)
            .flat_map(|w| {
                layout(1000, w[0])
                    .sampled_docs(w[1] - w[0], 64)
                    .unwrap()
                    .into_iter()
                    .map(move |i| i + w[0])
            })
            .collect();
        assert_eq!(joined, whole, "{cuts:?}");
    }
}
