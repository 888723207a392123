//! Train a learner by name on a LETOR file (a `TrainJob`, as `ltr train` runs), load, score and evaluate:
//! `cargo run --release -p ltr --example quickstart -- [TRAIN [TEST [ALGO]]]` (generated data without arguments).

use ltr::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::env::temp_dir().join(format!("ltr-quickstart-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (train_file, test_file) = match (args.first(), args.get(1)) {
        (Some(a), Some(b)) => (a.into(), b.into()),
        _ => {
            let all = generate_letor_like(&SyntheticConfig {
                queries: 200,
                ..Default::default()
            })?;
            let parts = ltr::data::split_by_queries(&all, &[0.8, 0.2], 1)?;
            write_letor(&parts[0], &dir.join("train.txt"))?;
            write_letor(&parts[1], &dir.join("test.txt"))?;
            (dir.join("train.txt"), dir.join("test.txt"))
        }
    };
    let algo = args.get(2).map_or("ranksvm", String::as_str);

    let model_file = dir.join("model.json");
    // The run `ltr train --train TRAIN --algo ALGO --model model.json` makes: checked, read, trained, written.
    TrainJob::builder(algo)
        .train(TrainData::File(train_file))
        .output(Some(model_file.clone()))
        .build()?
        .run()?;
    let model = ModelFile::load(&model_file)?;
    let test = read_letor(&test_file)?;
    let scores = model.score_raw(&test)?; // the stored preprocessing, then the model
    let metrics: Vec<Metric> = vec!["NDCG@10".parse()?, "MAP".parse()?];
    let ev = evaluate(&test, &scores, &metrics, &Convention::STANDARD)?;
    for r in &ev.results {
        println!("{algo}: test {} = {:.4}", r.metric, r.mean);
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
