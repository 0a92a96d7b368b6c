"""How much faster than cuBLAS is the best measured candidate, on held-out exhaustive data?

The dispatcher's heuristic target (issue 5: geomean >= 1.03x torch.matmul on an LLM suite) is a
property of the kernel space before it is one of the selection: no picker beats the exhaustive
oracle. The exhaustive validation sets measured every valid config of every problem, so the
oracle's speed-up over cuBLAS (= torch.matmul) is read off them, per problem class: all
problems, LLM-like weights (N and K >= 1024), and those at the suite's token counts.

    python benchmarks/oracle_vs_cublas.py [--data data/gemm/bf16/h200/validation ...]
"""

import argparse
import json

import numpy as np

from tilepick.config import VENDOR_FAMILIES
from tilepick.data.io import read_frame

SUITE_M = (1, 16, 128, 1024, 4096, 8192)   # benchmarks/dispatch_llm_suite.py's round M values


def geomean(x) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(x, dtype=float))))) if len(x) else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="+", default=["data/gemm/bf16/h200/validation",
                                                  "data/gemm/bf16/h200/validation_rc"])
    args = ap.parse_args()
    out = {}
    for path in args.data:
        df = read_frame(path)
        df = df[df.valid]
        g = df.groupby("problem_key")
        best = g.tflops.max()
        cublas = df[df.family == VENDOR_FAMILIES[0]].groupby("problem_key").tflops.max()
        ratio = (best / cublas).dropna()
        shape = g[["m", "n", "k"]].first().reindex(ratio.index)
        llm = (shape.n >= 1024) & (shape.k >= 1024)
        classes = {"all": ratio, "n_and_k_ge_1024": ratio[llm],
                   "n_and_k_ge_1024_suite_m": ratio[llm & shape.m.isin(SUITE_M)]}
        out[path] = {name: {"problems": int(len(r)), "geomean_oracle_over_cublas": geomean(r),
                            "share_cublas_is_best": float((r <= 1.0 + 1e-12).mean())
                            if len(r) else None}
                     for name, r in classes.items()}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
