//! Time reading a TREC run and its qrels (`cargo run --release -p ltr-metrics --example trec_read -- RUN QRELS
//! [REPS]`), best of REPS, and print a fingerprint of everything read (query ids, doc ids, scores, relevance) so
//! two builds of the readers can be compared for identical results; for a profiler, REPS repeats the reads.
use std::time::Instant;

use ltr_metrics::{read_qrels, read_run};

fn mix(fp: u64, x: u64) -> u64 {
    (fp.rotate_left(5) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn text(fp: u64, s: &str) -> u64 {
    s.bytes()
        .fold(mix(fp, s.len() as u64), |f, b| mix(f, b as u64))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let run = std::path::PathBuf::from(args.next().expect("RUN"));
    let qrels = std::path::PathBuf::from(args.next().expect("QRELS"));
    let reps: usize = args.next().map_or(3, |s| s.parse().expect("REPS"));
    let mb = |p: &std::path::Path| std::fs::metadata(p).expect("file").len() as f64 / 1e6;
    let (mut rs, mut qs) = (f64::INFINITY, f64::INFINITY);
    let (mut fr, mut fq) = (0, 0);
    for _ in 0..reps {
        let t = Instant::now();
        let r = read_run(&run).expect("run");
        rs = rs.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let q = read_qrels(&qrels).expect("qrels");
        qs = qs.min(t.elapsed().as_secs_f64());
        fr = r.iter().fold(0, |f, q| {
            q.docs()
                .fold(text(f, q.qid()), |f, (d, s)| mix(text(f, d), s.to_bits()))
        });
        // Qrels compare as sets (a query's judgments in their order of first judgment, queries likewise).
        fq = q.iter().fold(0, |f, (qid, j)| {
            j.iter().fold(text(f, qid), |f, (d, r)| {
                mix(text(f, d), r.to_bits() as u64)
            })
        });
    }
    println!(
        "read_run {:.1} MB: {rs:.4} s = {:.0} MB/s; read_qrels {:.1} MB: {qs:.4} s = {:.0} MB/s; \
         fingerprints {fr:016x} {fq:016x}",
        mb(&run),
        mb(&run) / rs,
        mb(&qrels),
        mb(&qrels) / qs
    );
}
