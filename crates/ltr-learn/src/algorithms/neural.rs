//! `neural` (allRank's feed-forward scorer, its self-attention encoder, its losses): parameters → [`NeuralParams`].

use ltr_core::neural::Activation;
use ltr_core::{Fit, FitContext, Fitted, LtrError, ParamGuard, Result};
use ltr_data::Dataset;
use ltr_neural::{
    LambdaScheme, Loss, NeuralDla, NeuralParams, NeuralValidParams, Optimizer, Schedule,
};

use crate::spec::{choice, float, int, Allowed, ParamSpec, SpecReader};

/// `neural`'s parameters.
pub(crate) const NEURAL_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "loss",
        "ndcgloss2pp",
        choice(Loss::NAMES),
        "ranknet, listnet (softmax over labels), listnet-binary (labels / Σ labels), listmle, ndcgloss2pp, \
         ndcgloss2, lambdarank (LambdaLoss's schemes), approxndcg, neuralndcg; controls: mse, rmse, bce",
    ),
    ParamSpec::new(
        "sizes",
        "256/128",
        Allowed::Text,
        "hidden layer widths, input side first, separated by `/` (`none`: the linear model with a bias)",
    ),
    ParamSpec::new(
        "activation",
        "relu",
        choice(&["relu", "tanh", "sigmoid", "identity"]),
        "activation after each hidden layer",
    ),
    ParamSpec::new(
        "dropout",
        "0",
        float(0.0, 0.99),
        "dropout probability after each hidden layer (training only)",
    ),
    ParamSpec::new(
        "layer-norm",
        "false",
        Allowed::Bool,
        "layer normalisation of each hidden layer before its activation",
    ),
    ParamSpec::new(
        "batch-norm",
        "false",
        Allowed::Bool,
        "batch normalisation of each hidden layer before its activation (statistics over the documents of the \
         batch in training, running statistics in the model at inference; not with layer-norm)",
    ),
    ParamSpec::new(
        "input-norm",
        "false",
        Allowed::Bool,
        "layer normalisation of the input features (allRank's input_norm)",
    ),
    ParamSpec::new(
        "scorer",
        "mlp",
        choice(&["mlp", "attention"]),
        "mlp (every document scored on its own) or attention (allRank's context-aware scorer: the hidden layers, \
         then self-attention encoder blocks over the documents of a query, no positional encoding)",
    ),
    ParamSpec::new(
        "blocks",
        "4",
        int(1, 1_000),
        "encoder blocks (allRank's transformer N)",
    )
    .when("scorer=attention"),
    ParamSpec::new(
        "heads",
        "4",
        int(1, 1_000),
        "attention heads of each block (they divide the last hidden width)",
    )
    .when("scorer=attention"),
    ParamSpec::new(
        "d-ff",
        "512",
        int(1, 1_000_000),
        "width of each block's feed-forward layer",
    )
    .when("scorer=attention"),
    ParamSpec::new(
        "attention-dropout",
        "0.3",
        float(0.0, 0.99),
        "dropout in the encoder during training: attention weights, both residual branches, inside the \
         feed-forward layer (allRank's transformer dropout)",
    )
    .when("scorer=attention"),
    ParamSpec::new(
        "optimizer",
        "adam",
        choice(&["adam", "adamw"]),
        "adam (weight decay as an L2 gradient) or adamw (decoupled weight decay)",
    ),
    ParamSpec::new("lr", "0.001", float(1e-300, 1e300), "learning rate (> 0)"),
    ParamSpec::new("weight-decay", "0", float(0.0, 1e300), "weight decay"),
    ParamSpec::new(
        "schedule",
        "constant",
        choice(&["constant", "step", "cosine"]),
        "learning rate per epoch: constant, step (lr·gamma^⌊epoch/step-size⌋, allRank's StepLR) or cosine to 0",
    ),
    ParamSpec::new("step-size", "50", int(1, 1_000_000), "epochs between decays").when("schedule=step"),
    ParamSpec::new("gamma", "0.1", float(1e-300, 1e300), "factor of each decay").when("schedule=step"),
    ParamSpec::new("warmup", "0", int(0, 1_000_000), "epochs of linear warm-up to lr"),
    ParamSpec::new("epochs", "100", int(1, 1_000_000), "epochs at most"),
    ParamSpec::new(
        "batch-size",
        "64",
        int(1, 1_000_000_000),
        "queries per batch (allRank's 64; a set of few queries, such as debias=dr's one per logged query, takes few \
         steps an epoch: at 8 the DR network came level with one query per click on MQ2008, BENCHMARKS.md, `listnet` \
         and `neural` on the doubly robust set)",
    ),
    ParamSpec::new(
        "slate-length",
        "240",
        int(0, 1_000_000_000),
        "documents of a query per batch at most: a longer query is sampled down to it each epoch (allRank's \
         slate_length)",
    ),
    ParamSpec::new(
        "piece-rows",
        "auto",
        Allowed::Text,
        "documents a training step takes through its passes at once (whole queries; a longer query alone), auto or \
         a whole number: fewer hold less memory (the activations are a piece's) at some CPU (allRank's MLP in \
         pieces of 512: 5% more over 100 epochs on the web set, 6–8% more on an OHSUMED-sized one; BENCHMARKS.md \
         \"piece-rows=auto\"), and 1 (a query a piece) holds the least; auto is 4096, or for a feed-forward network \
         without batch norm whose memory estimate at 4096 would pass 1.5 × (the data + the network and Adam's \
         moments) the largest of 2048, 1024 and 512 that keeps within it (4096 when none does; allRank's MLP on the \
         generated web set: 512); an attention network without batch norm goes query by query whatever the piece, \
         so for it a piece sets only the order of the sums; a batch split into more pieces sums its gradient in \
         another order and draws dropout masks by other chunks, so the model differs (one model at any thread \
         count for a given value; the model records auto's choice)",
    ),
    ParamSpec::new(
        "memory",
        "auto",
        choice(&["auto", "speed", "lean"]),
        "how an attention network without batch norm (it goes query by query) trades time for memory, the model \
         the same bit for bit: lean keeps no transposed weights of the encoder but its first feed-forward layers' \
         in a step of queries of 64 documents a query or more (dx from W itself) and parks no finished group's \
         gradient (its worker waits its turn), speed keeps them all and parks one; lean holds 2.1 MB plus one \
         gradient less for allRank's attention configuration, at about 6% more CPU and 11% more wall at 2 threads \
         on the web set (BENCHMARKS.md, \"The attention network's memory\"); auto is lean where the lean memory \
         estimate keeps within 1.5 × (the data + the network and Adam's moments), else speed (where the bound is \
         out of reach: allRank's attention on a LETOR fold); the fit report records auto's choice",
    ),
    ParamSpec::new(
        "patience",
        "20",
        int(1, 1_000_000),
        "stop after this many epochs without a better --validate measure",
    ),
    ParamSpec::new(
        "k",
        "0",
        int(0, 1_000_000),
        "truncation of LambdaLoss and NeuralNDCG (0: the whole list)",
    ),
    ParamSpec::new("sigma", "1", float(1e-300, 1e300), "σ of LambdaLoss's pair sigmoid"),
    ParamSpec::new("mu", "10", float(0.0, 1e300), "μ of NDCG-Loss2++").when("loss=ndcgloss2pp"),
    ParamSpec::new("alpha", "1", float(1e-300, 1e300), "α of ApproxNDCG's sigmoid").when("loss=approxndcg"),
    ParamSpec::new(
        "temperature",
        "1",
        float(1e-300, 1e300),
        "τ of NeuralSort's softmax",
    )
    .when("loss=neuralndcg"),
    ParamSpec::new(
        "levels",
        "1",
        float(1e-300, 1e300),
        "allRank's no_of_levels: the error is label − levels·score",
    )
    .when("loss=rmse"),
];

/// `neural`.
pub(crate) fn neural(r: &SpecReader<'_>, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
    let p = params(r, train)?;
    r.finish("neural")?;
    p.fit(train, ctx)
}

/// The working set of a `neural` setting on `train` (labels and offsets, parameters and optimiser state, the
/// largest piece's activations), before training.
pub(crate) fn memory(r: &SpecReader<'_>, train: &Dataset) -> Option<u64> {
    Some(params(r, train).ok()?.memory_estimate(train).total())
}

/// A `neural` setting's checked parameters on `train` (a click training set's weighting among them).
fn params(r: &SpecReader<'_>, train: &Dataset) -> Result<NeuralValidParams> {
    let doubly_robust = r.choice("debias")? == "dr";
    if doubly_robust {
        super::clicks::check_doubly_robust(r, train, "neural")?;
    }
    let dla = !doubly_robust && super::clicks::debias_is_dla(r, train, "neural")?;
    // Under DLA and DR the loss is the softmax loss against labels over their sum unless another is asked for (and
    // then refused by name).
    let name = match r.params().opt::<String>("loss")? {
        None if dla || doubly_robust => "listnet-binary".to_string(),
        _ => r.choice("loss")?,
    };
    let mut loss = Loss::parse(&name).expect("a listed loss");
    let k = || -> Result<Option<usize>> { Ok(Some(r.int("k")?).filter(|&k| k > 0)) };
    match &mut loss {
        Loss::LambdaLoss {
            scheme,
            k: lk,
            sigma,
            mu,
        } => {
            *lk = k()?;
            *sigma = r.float("sigma")?;
            if *scheme == LambdaScheme::NdcgLoss2PlusPlus {
                *mu = r.float("mu")?;
            }
        }
        Loss::ApproxNdcg { alpha } => *alpha = r.float("alpha")?,
        Loss::NeuralNdcg { temperature, k: nk } => {
            *nk = k()?;
            *temperature = r.float("temperature")?;
        }
        Loss::Rmse { levels } => *levels = r.float("levels")?,
        _ => {}
    }
    let sizes_text = r.text_or_default("sizes")?;
    let sizes = parse_sizes(&sizes_text)?;
    let schedule = match r.choice("schedule")?.as_str() {
        "step" => Schedule::Step {
            step: r.int("step-size")?,
            gamma: r.float("gamma")?,
        },
        "cosine" => Schedule::Cosine,
        _ => Schedule::Constant,
    };
    let p = NeuralParams::default()
        .loss(loss)
        .sizes(sizes)
        .activation(Activation::parse(&r.choice("activation")?).expect("a listed activation"))
        .dropout(r.float("dropout")?)
        .layer_norm(r.flag("layer-norm")?)
        .batch_norm(r.flag("batch-norm")?)
        .input_norm(r.flag("input-norm")?)
        .optimizer(match r.choice("optimizer")?.as_str() {
            "adamw" => Optimizer::AdamW,
            _ => Optimizer::Adam,
        })
        .lr(r.float("lr")?)
        .weight_decay(r.float("weight-decay")?)
        .schedule(schedule)
        .warmup(r.int("warmup")?)
        .epochs(r.int("epochs")?)
        .batch_size(r.int("batch-size")?)
        .slate_length(r.int("slate-length")?)
        .patience(r.int("patience")?)
        .clicks(super::clicks::click_weighting(r, train)?.filter(|_| !dla && !doubly_robust))
        .doubly_robust(doubly_robust)
        .dla(
            dla.then(|| -> Result<NeuralDla> {
                Ok(NeuralDla {
                    max_weight: r.float("max-propensity-weight")?,
                    propensity_steps: r.int("propensity-steps")?,
                })
            })
            .transpose()?,
        );
    let p = match piece_rows(r)? {
        Some(rows) => p.piece_rows(rows),
        None => p.auto_piece_rows(),
    };
    let p = match r.choice("memory")?.as_str() {
        "lean" => p.lean(true),
        "speed" => p.lean(false),
        _ => p.auto_memory(),
    };
    let p = if r.choice("scorer")? == "attention" {
        p.blocks(r.int("blocks")?)
            .heads(r.int("heads")?)
            .d_ff(r.int("d-ff")?)
            .encoder_dropout(r.float("attention-dropout")?)
    } else {
        p
    };
    p.check()
}

/// `piece-rows`: `auto` (`None`) or a whole number of documents (0 is refused by `NeuralParams::check`).
fn piece_rows(r: &SpecReader<'_>) -> Result<Option<usize>> {
    let text = r.text_or_default("piece-rows")?;
    let t = text.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    t.parse::<usize>().map(Some).map_err(|_| {
        LtrError::param(
            "piece-rows",
            format!("`{text}`: give auto or a whole number of documents, at least 1"),
        )
    })
}

/// `256/128` → [256, 128]; `none` (or empty) → no hidden layer.
// pub for the tests in tests/unit/algorithms_neural.rs; not API.
#[doc(hidden)]
pub fn parse_sizes(text: &str) -> Result<Vec<usize>> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("none") || t == "0" {
        return Ok(Vec::new());
    }
    t.split('/')
        .map(|w| match w.trim().parse::<usize>() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(LtrError::param(
                "sizes",
                format!(
                    "`{text}`: give hidden widths >= 1 separated by `/` (e.g. 256/128), or `none`"
                ),
            )),
        })
        .collect()
}
