"""The vendor gate on the rr decode pocket of the training data (CPU, ~1 min).

Per rr problem of a model's training data with M <= 4 and N in ``--n`` (bf16, K >= 2048):
cuBLAS over the best measured Triton candidate (the labels as ``clean`` reads them), and each
model's raw gate score (> 0: cuBLAS first). Why (session 55): rr 1 x 8192 x 8192 of the LLM
suite sits in this pocket and its gate score was +0.03 in the shipped model, -0.04 in a
retrain: a coin. The last line counts, per model, the problems whose gate call disagrees with
the measured better of the two (the gate's label is cuBLAS against the ranker's out-of-fold
pick, not the best Triton candidate, so this is a bound, not its training error).

    python benchmarks/analysis_s55/pocket_gate.py MODEL [MODEL ...] [--data-model DIR] [--n 4096 8192 16384]
        [--data FILE.parquet ...] [--rows MxNxK ...]

``--data`` reads those files instead of the manifest's (e.g. one folder: session 56 read
``train_decode_pow2_n_rr/*.parquet`` alone for the table of cuBLAS / best Triton by M and N
printed at the end). ``--rows`` also prints, for those rr problems (e.g. the LLM suite's
decode rows, whose weights training holds out), each model's raw gate score and first pick.
"""

import argparse
import json

import pandas as pd

from tilepick.model.dataset import clean, read_raw
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--data-model", default=None,
                    help="whose manifest lists the data (default: the last model)")
    ap.add_argument("--n", type=int, nargs="+", default=[4096, 8192, 16384])
    ap.add_argument("--max-m", type=int, default=4)
    ap.add_argument("--data", nargs="*", default=None, help="parquet files (default: the manifest's)")
    ap.add_argument("--rows", nargs="*", default=[], metavar="MxNxK",
                    help="rr problems to print each model's gate score and first pick for")
    args = ap.parse_args()
    if args.data:
        paths = args.data
    else:
        man = json.load(open(f"{args.data_model or args.models[-1]}/manifest.json"))
        paths = [f["path"] for f in man["data"]]
    df = clean(read_raw(paths), dtype="bf16")
    df = df[(df.layout == "rr") & (df.m <= args.max_m) & df.n.isin(args.n) & (df.k >= 2048)]
    preds = {d: Predictor(d) for d in args.models}
    wrong = dict.fromkeys(preds, 0)
    ratios = []
    for key, g in df.groupby("problem_key"):
        vendor = g["family"] == "gemm.cublas"
        if not vendor.any() or vendor.all():
            continue
        ratio = g.loc[vendor, "tflops"].max() / g.loc[~vendor, "tflops"].max()
        m, n, k = (int(g.iloc[0][c]) for c in ("m", "n", "k"))
        ratios.append({"m": "1" if m == 1 else f"2-{args.max_m}", "n": n, "ratio": ratio})
        prob = GemmProblem(m=m, n=n, k=k, layout="rr")
        scores = {d: p.gate_raw(prob) for d, p in preds.items()}
        for d, s in scores.items():
            wrong[d] += (s > 0) != (ratio > 1)
        print(f"{key:32s} cuBLAS / best Triton {ratio:.3f}  gate "
              + "  ".join(f"{s:+.2f}" for s in scores.values()))
    print("calls against the measured better:", wrong, "of", df["problem_key"].nunique())
    table = pd.DataFrame(ratios).groupby(["m", "n"])["ratio"].describe()
    print("cuBLAS / best Triton by M and N:")
    print(table[["count", "min", "50%", "max"]].round(3).to_string())
    for row in args.rows:
        m, n, k = (int(v) for v in row.split("x"))
        prob = GemmProblem(m=m, n=n, k=k, layout="rr")
        print(f"rr {row}: " + "; ".join(f"{d} gate {p.gate_raw(prob):+.2f}, first "
                                       f"{p.rank(prob, 1)[0][0]}" for d, p in preds.items()))


if __name__ == "__main__":
    main()
