"""LightGBM settings for the pooled 16-bit bf16 model, out of fold (never on validation).

Each variant runs `tilepick train`'s LambdaRank recipe with the bf16 + fp16 pool, overriding a
few settings, on two fold seeds, into temporary model directories; it prints the out-of-fold
mean / P10 / min efficiency, top-1 accuracy, top-5 hit rate and top-4-benchmarked mean.

    PYTHONPATH=src python benchmarks/pooled_hyperparams.py [--variants base,r80,...]
"""

import argparse
import json
import tempfile

from tilepick.model.train import TrainOptions, train

DATA = ["data/gemm/bf16/h200/train_rr", "data/gemm/bf16/h200/train_rc",
        "data/gemm/fp16/h200/train_rr"]
VARIANTS = {
    "base": {},
    "r80": {"rounds": 80},
    "r80_lr0.1": {"rounds": 80, "params": {"learning_rate": 0.1}},
    "leaves255": {"params": {"num_leaves": 255, "max_depth": 14}},
    "mdl50": {"params": {"min_data_in_leaf": 50}},
    "trunc40": {"params": {"lambdarank_truncation_level": 40}},
}
KEYS = ("mean", "p10", "min", "top1_accuracy", "top5_hit_rate", "top4_mean")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--seeds", default="0,1")
    args = ap.parse_args()
    for name in args.variants.split(","):
        res = {}
        for seed in map(int, args.seeds.split(",")):
            with tempfile.TemporaryDirectory() as out:
                cvm = train(DATA, "bf16", "h200", out, TrainOptions(
                    objective="lambdarank", pool=("fp16",), seed=seed, **VARIANTS[name]))
            s = cvm["objectives"]["lambdarank"]
            res[seed] = {k: round(s[k], 4) for k in KEYS}
        print(name, json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
