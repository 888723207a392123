//! Parse vs cache-load time of a LETOR file, best of 5 (`cargo run --release -p ltr-data --example cache_speed -- FILE`).
fn main() {
    let f = std::path::PathBuf::from(std::env::args().nth(1).expect("a LETOR file"));
    let best = |g: &mut dyn FnMut()| {
        (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                g();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut ds = None;
    let parse = best(&mut || ds = Some(ltr_data::read_letor(&f).unwrap()));
    let cache = std::env::temp_dir().join("cache_speed.ltrcache");
    ltr_data::save_cache(ds.as_ref().unwrap(), &cache, Some(&f)).unwrap();
    let load = best(&mut || {
        ltr_data::load_cache(&cache, Some(&f)).unwrap();
    });
    let mb = std::fs::metadata(&f).unwrap().len() as f64 / 1e6;
    println!(
        "{mb:.0} MB: parse {parse:.3}s ({:.0} MB/s), cache load {load:.3}s → {:.1}x",
        mb / parse,
        parse / load
    );
}
