#!/usr/bin/env python3
"""allRank, run from its source, as the peer of `ltr train --algo neural`: same model, loss, optimiser, batches.

allRank's PyPI releases pin a torch with no wheels for current Python, so this runs a source checkout (ALLRANK_SRC,
the repository root) against a current torch from PyPI:

    python3 -m venv venv && venv/bin/pip install torch numpy scikit-learn attrs
    ALLRANK_SRC=/path/to/allRank venv/bin/python xtask/peers/allrank_epoch.py \
        --train Fold1/train.txt --vali Fold1/vali.txt --test Fold1/test.txt --out scores.txt \
        --sizes 256/128 --loss ndcgloss2pp --epochs 30 --threads 2

allRank's published configurations (reproducibility/configs/contextaware_web30k/; both NDCG-Loss2++ with μ = 10, Adam at
0.001, StepLR (50, 0.1), 100 epochs, batches of 64, slate length 240, the last epoch kept):
    ndcgloss2pp.json (context-aware):  --sizes 128 --activation none --blocks 4 --heads 4 --d-ff 512
                                       --attention-dropout 0.3 --step-size 50 --epochs 100 --keep last
    ndcgloss2pp_mlp.json (MLP):        --sizes 256/512/1024/512/256 --dropout 0.3 --step-size 50 --epochs 100 --keep last
xtask/peers/neural.py runs them against `ltr` fold by fold.

It builds allRank's model (`make_model`: FCModel, with --blocks > 0 its Transformer encoder, OutputLayer; Xavier init), reads the files with allRank's
`LibSVMDataset` and `FixLength` (training slates sampled or padded to --slate-length, validation and test padded to
their longest query), trains with Adam at --lr on batches of --batch-size slates by allRank's loss function, and
prints the wall and CPU seconds of each epoch (training only). `--keep last` (allRank's own rule: its `fit` saves the
model of the last epoch, and its published configurations set an early-stopping patience of 100 in 100 epochs, so
they never stop early) keeps the last epoch and computes no validation measure; `--keep best` keeps the epoch best on
validation NDCG@10 (allRank's `ndcg`, which gives 1 to a query without a relevant document). The kept model's test
scores are written one per line in file order, for `ltr eval --data TEST --scores OUT`.

`--compute packed` runs the same function with less padding: each training batch (FixLength's slates, as allRank
makes them) is cut to its longest real slate, and the network runs over groups of `--group` slates sorted by length,
each cut to its own longest; their scores are put back in the batch's places and the loss sees the batch as allRank
builds it. The cut rows are padding, which allRank's model and losses mask out exactly (FixLength pads at the end;
attention fills masked keys with -inf, LambdaLoss drops every pair holding a padded document, the MLP scores each
row alone), so only the random streams (dropout masks over the padded rows), f32 summation order and the order
LambdaLoss's unstable sort gives to tied scores (identical documents of a query; it depends on the slate's length
in allRank itself) differ from `--compute padded` (allRank's own: every slate at --slate-length). Checked on MQ2008
Fold1's first 64 queries at allRank's initialisation: the MLP's loss is the same float and its gradient the same to
1.5e-5 of 47; the encoder's scores are the same to 7e-7, and its loss differs by 4e-5 relative, as much as allRank's
own loss of those same scores differs between a slate of 240 and one cut to the batch's longest (3 tied scores).
On MQ2008 (20 documents a query, 121 at most, batches padded to 240) it skips about 90% of allRank's rows.
"""
import argparse
import time

import numpy as np
import torch

from allrank_src import use_source  # noqa: E402  (this folder is the script's own: on the path)

use_source()

import allrank.models.losses as losses  # noqa: E402
from allrank.data.dataset_loading import PADDED_Y_VALUE, FixLength, LibSVMDataset  # noqa: E402
from allrank.models.metrics import ndcg  # noqa: E402
from allrank.config import TransformerConfig  # noqa: E402
from allrank.models.model import make_model  # noqa: E402

LOSSES = {
    "ndcgloss2pp": lambda p, t: losses.lambdaLoss(p, t, weighing_scheme="ndcgLoss2PP_scheme", mu=10.0),
    "ndcgloss2": lambda p, t: losses.lambdaLoss(p, t, weighing_scheme="ndcgLoss2_scheme"),
    "ranknet": losses.rankNet,
    "listnet": losses.listNet,
    "listmle": losses.listMLE,
    "approxndcg": losses.approxNDCGLoss,
    "neuralndcg": losses.neuralNDCG,
}


def load(path, length):
    """allRank's reader and FixLength; the slates as padded tensors in query order."""
    ds = LibSVMDataset.from_svm_file(path)
    fix = FixLength(length or ds.longest_query_length)
    xs, ys, idx = zip(*(fix((ds.X_by_qid[q], ds.y_by_qid[q])) for q in range(len(ds))))
    return ds, torch.tensor(np.stack(xs), dtype=torch.float32), torch.tensor(np.stack(ys), dtype=torch.float32), idx


def packed_scores(model, xb, yb, group):
    """The model's scores of a padded batch, computed over length-sorted groups of slates each cut to its own longest
    real slate (padding is at the end of each slate); the batch is cut to its longest slate."""
    lens = (yb != PADDED_Y_VALUE).sum(1)
    scores = xb.new_zeros((xb.shape[0], int(lens.max())))
    by_len = torch.argsort(lens, descending=True, stable=True)
    for g in range(0, len(by_len), group):
        ids = by_len[g : g + group]
        n = int(lens[ids].max())
        y = yb[ids, :n]
        scores[ids, :n] = model(xb[ids, :n], y == PADDED_Y_VALUE, torch.zeros_like(y, dtype=torch.long))
    return scores


def main():
    ap = argparse.ArgumentParser()
    for a in ("--train", "--vali", "--test", "--out"):
        ap.add_argument(a, required=True)
    ap.add_argument("--sizes", default="256/128")
    ap.add_argument("--loss", default="ndcgloss2pp", choices=sorted(LOSSES))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--slate-length", type=int, default=240)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--activation", default="ReLU", help="torch.nn activation of the hidden layers, or none")
    ap.add_argument("--blocks", type=int, default=0, help="Transformer encoder blocks (0: the MLP)")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-ff", type=int, default=512)
    ap.add_argument("--attention-dropout", type=float, default=0.3)
    ap.add_argument("--step-size", type=int, default=0, help="StepLR step size in epochs (0: constant rate)")
    ap.add_argument("--gamma", type=float, default=0.1)
    ap.add_argument("--compute", choices=("padded", "packed"), default="padded",
                    help="padded: every training slate at --slate-length (allRank's); packed: the same function over "
                         "the real rows only (length-sorted groups of --group slates, each cut to its longest)")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--keep", choices=("best", "last"), default="best",
                    help="the epoch kept: best on validation NDCG@10, or the last (allRank's fit)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    train_ds = LibSVMDataset.from_svm_file(args.train)
    n_features = train_ds.shape[-1]
    fix = FixLength(args.slate_length)
    _, xv, yv, _ = load(args.vali, None)
    test_ds, xt, yt, _ = load(args.test, None)
    sizes = [int(s) for s in args.sizes.split("/")]
    model = make_model(
        fc_model={
            "sizes": sizes,
            "input_norm": False,
            "activation": None if args.activation.lower() == "none" else args.activation,
            "dropout": args.dropout,
        },
        transformer=TransformerConfig(
            N=args.blocks, d_ff=args.d_ff, h=args.heads, positional_encoding=None, dropout=args.attention_dropout
        )
        if args.blocks > 0
        else None,
        post_model={"output_activation": None, "d_output": 1},
        n_features=n_features,
    )
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, args.step_size, args.gamma) if args.step_size > 0 else None
    loss_fn = LOSSES[args.loss]
    best, best_state = -1.0, None
    for epoch in range(args.epochs):
        t0, c0 = time.perf_counter(), time.process_time()
        model.train()
        # allRank's DataLoader: slates re-sampled by FixLength each epoch, shuffled.
        slates = [fix((train_ds.X_by_qid[q], train_ds.y_by_qid[q])) for q in range(len(train_ds))]
        order = np.random.permutation(len(slates))
        for b in range(0, len(order), args.batch_size):
            batch = [slates[i] for i in order[b : b + args.batch_size]]
            xb = torch.tensor(np.stack([s[0] for s in batch]), dtype=torch.float32)
            yb = torch.tensor(np.stack([s[1] for s in batch]), dtype=torch.float32)
            mask = yb == PADDED_Y_VALUE
            idx = torch.zeros_like(yb, dtype=torch.long)
            if args.compute == "packed":
                loss = loss_fn(packed_scores(model, xb, yb, args.group), yb[:, : int((~mask).sum(1).max())])
            else:
                loss = loss_fn(model(xb, mask, idx), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
        if sched is not None:
            sched.step()
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        if args.keep == "last":
            print(f"epoch {epoch + 1} train {secs:.3f} s, cpu {cpu:.3f} s", flush=True)
            continue
        model.eval()
        with torch.no_grad():
            mv = yv == PADDED_Y_VALUE
            v = float(ndcg(model.score(xv, mv, torch.zeros_like(yv, dtype=torch.long)), yv, ats=[10]).mean())
        if v > best:
            best, best_state = v, {k: t.clone() for k, t in model.state_dict().items()}
        print(f"epoch {epoch + 1} train {secs:.3f} s, cpu {cpu:.3f} s, validation NDCG@10 (allRank's) {v:.4f}", flush=True)
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        mt = yt == PADDED_Y_VALUE
        s = model.score(xt, mt, torch.zeros_like(yt, dtype=torch.long))
    with open(args.out, "w") as f:
        for q in range(len(test_ds)):
            n = len(test_ds.y_by_qid[q])
            for v in s[q, :n].tolist():
                f.write(f"{v:.9g}\n")


if __name__ == "__main__":
    main()
