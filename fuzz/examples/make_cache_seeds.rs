//! Writes the cache loader's seed corpus (`cargo run --example make_cache_seeds -- fuzz/seeds/cache_load` from the
//! fuzz folder's parent): small dense and sparse caches, with and without docids and comments.

fn main() {
    let out = std::path::PathBuf::from(std::env::args().nth(1).expect("output folder"));
    std::fs::create_dir_all(&out).expect("create output folder");
    let texts = [
        ("dense", "2 qid:1 1:0.5 2:1 3:0 # docid = A\n0 qid:1 1:0 2:0.5 3:1 # docid = B\n1 qid:2 1:1 2:1 3:1 # docid = C\n"),
        ("sparse", "1 qid:7 10:1 200:0.25\n0 qid:7 3:1\n2 qid:8 1:1e-3 99:4\n"),
        ("comments", "1 qid:a 1:1 # some comment\n0 qid:a 1:2 # another\n"),
    ];
    for (name, text) in texts {
        let src = out.join(format!("{name}.txt"));
        std::fs::write(&src, text).expect("write source");
        let ds = ltr_data::read_letor(&src).expect("seed text parses");
        ltr_data::save_cache(&ds, &out.join(format!("{name}.ltrcache")), None)
            .expect("write cache");
        std::fs::remove_file(&src).expect("remove source");
    }
}
