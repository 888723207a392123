//! LETOR text parsing speed and a fingerprint of the parsed dataset, to compare two builds of the parser in one run
//! (`cargo run --release -p ltr-data --example parse_speed -- FILE [--generate] [--rounds N]`).
//!
//! `--generate` writes FILE first when it is missing: the 1 GB, 136-feature dense file `cargo xtask bench` parses
//! (`SyntheticConfig::parse_benchmark(5_400)`). The fingerprint hashes every label, offset, qid, feature value (bits),
//! docid and comment, so two builds that print the same fingerprint parsed the same dataset bit for bit.
use ltr_data::{Dataset, FeatureMatrix};
use xxhash_rust::xxh3::xxh3_64;

fn fingerprint(ds: &Dataset) -> u64 {
    let mut parts: Vec<u64> = vec![
        xxh3_64(bytemuck::cast_slice(ds.labels())),
        xxh3_64(bytemuck::cast_slice(ds.query_offsets())),
        xxh3_64(ds.qids().join("\n").as_bytes()),
        ds.n_features() as u64,
    ];
    match ds.features() {
        FeatureMatrix::Dense(a) => {
            parts.push(xxh3_64(bytemuck::cast_slice(
                a.as_slice().expect("standard layout"),
            )));
        }
        FeatureMatrix::Sparse(m) => {
            parts.push(xxh3_64(bytemuck::cast_slice(m.indptr().raw_storage())));
            parts.push(xxh3_64(bytemuck::cast_slice(m.indices())));
            parts.push(xxh3_64(bytemuck::cast_slice(m.data())));
        }
    }
    for column in [ds.docids(), ds.comments()].into_iter().flatten() {
        let (text, ends) = column.raw_parts();
        parts.push(xxh3_64(text.as_bytes()));
        parts.push(xxh3_64(bytemuck::cast_slice(ends)));
    }
    xxh3_64(bytemuck::cast_slice(&parts))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = std::path::PathBuf::from(args.first().expect("a LETOR file"));
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(3);
    if args.iter().any(|a| a == "--generate") && !file.exists() {
        let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig::parse_benchmark(5_400))
            .unwrap();
        ltr_data::write_letor(&ds, &file).unwrap();
    }
    let mb = std::fs::metadata(&file).unwrap().len() as f64 / 1e6;
    let mut best = f64::INFINITY;
    let mut ds = None;
    for _ in 0..rounds {
        drop(ds.take());
        let t = std::time::Instant::now();
        ds = Some(ltr_data::read_letor(&file).unwrap());
        best = best.min(t.elapsed().as_secs_f64());
    }
    let ds = ds.unwrap();
    println!(
        "{mb:.0} MB in {best:.3} s = {:.0} MB/s (best of {rounds}, {} threads); fingerprint {:016x}",
        mb / best,
        rayon::current_num_threads(),
        fingerprint(&ds)
    );
}
