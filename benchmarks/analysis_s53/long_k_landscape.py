"""Which family is best on the rr long-K narrow problems (N <= 16, K >= 16384) of the shipped
model's training data plus `train_long_k_misaligned_rr/` (CPU, ~1 min).

Why: session 52 found this class's picks unstable under any change of data; the first question
is how the families split it. Per problem, each family's best re-timed TFLOP/s over the
problem's best (the training labels' rule); printed: how often each family is within 0.1% of
the best, where it applies, and by N.

    python benchmarks/analysis_s53/long_k_landscape.py [--model models/gemm_bf16_h200]
"""

import argparse
import glob
import json

import pandas as pd

from tilepick.model import dataset as dsm


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    args = ap.parse_args()
    with open(f"{args.model}/manifest.json") as f:
        files = [d["path"] for d in json.load(f)["data"]]
    files += sorted(set(glob.glob("data/gemm/bf16/h200/train_long_k_misaligned_rr/*.parquet"))
                    - set(files))
    raw = dsm.read_raw(files)
    raw = raw[(raw.layout == "rr") & (raw.n <= 16) & (raw.k >= 16384) & (raw.dtype == "bf16")]
    df = dsm.clean(raw, dtype="bf16", arch="h200")
    df["rel"] = df.tflops / df.groupby("problem_key").tflops.transform("max")
    fam = df.groupby(["problem_key", "family"]).rel.max().unstack()
    n = df.groupby("problem_key").n.first()
    print(f"{len(fam)} problems")
    print(pd.DataFrame({"measured on": fam.notna().sum(), "best": (fam >= 0.999).sum(),
                        "median rel where measured": fam.median().round(3)})
          .sort_values("best", ascending=False).to_string())
    print("\nbest family by N (1-4: the transposed GEMVs apply):")
    best = fam.fillna(0).idxmax(axis=1)
    print(pd.crosstab(n.clip(upper=5).map(lambda v: "5-16" if v == 5 else str(v)), best).to_string())


if __name__ == "__main__":
    main()
