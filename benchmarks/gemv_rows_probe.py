"""The GEMV row blocks against every other candidate, from a probe sweep (session 17).

The probe: `bash benchmarks/campaign.sh probe:330:-:"--problems
benchmarks/problems/gemv_rows_probe_bf16.jsonl --layout rc --dtype bf16 --family gemm.gemv
--family gemm.ptr --family gemm.splitk --family gemm.splitk_atomic --family gemm.cublas
--retime-top 10 --rounds 5 --processes 16"` (the LLM suite's eight Llama-3 weights as
``x @ W.T`` at M = 2, 3, 4, 8, 16; every valid config of those families, the 10 best and cuBLAS
re-timed in 5 interleaved rounds). Per problem: the best single-row GEMV config, the best row
block (block_m > 1), the best of the tensor-core families, each over cuBLAS, and the best with
row blocks over the best without (cuBLAS included). On this machine:

    python benchmarks/gemv_rows_probe.py PROBE.parquet [--out FILE.json]
"""

import argparse
import json

import numpy as np
import pandas as pd


def summarise(df: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    df = df[df["valid"]]
    rows = []
    for key, g in df.groupby("problem_key"):
        cublas = g.loc[g["family"] == "gemm.cublas", "tflops"].max()
        gemv = g["family"] == "gemm.gemv"
        rows_mask = gemv & (g["block_m"] > 1)
        tc = ~gemv & (g["family"] != "gemm.cublas")
        best_rows = g.loc[rows_mask, "tflops"].max()
        best = {"problem": key, "m": int(g["m"].iloc[0]), "n": int(g["n"].iloc[0]),
                "k": int(g["k"].iloc[0]),
                "gemv_one_row": g.loc[gemv & ~rows_mask, "tflops"].max() / cublas,
                "gemv_row_blocks": best_rows / cublas,
                "tensor_core": g.loc[tc, "tflops"].max() / cublas,
                "row_block_config": (g.loc[g.loc[rows_mask, "tflops"].idxmax(), "config_id"]
                                     if rows_mask.any() else "")}
        without = max(1.0, g.loc[~rows_mask, "tflops"].max() / cublas)
        best["with_over_without"] = max(without, best["gemv_row_blocks"]) / without
        rows.append(best)
    table = pd.DataFrame(rows).sort_values(["m", "n", "k"])
    geo = lambda x: float(np.exp(np.log(x).mean()))  # noqa: E731
    by_m = {int(m): {c: geo(part[c]) for c in ("gemv_one_row", "gemv_row_blocks", "tensor_core",
                                                "with_over_without")}
            for m, part in table.groupby("m")}
    return table, by_m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("probe")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    table, by_m = summarise(pd.read_parquet(args.probe))
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(table.round(3).to_string(index=False))
    print("geomean by M (over cuBLAS; last column: best with row blocks / best without)")
    for m, v in by_m.items():
        print(m, {k: round(x, 3) for k, x in v.items()})
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"probe": args.probe, "by_m": by_m,
                       "problems": table.to_dict("records")}, f, indent=1)


if __name__ == "__main__":
    main()
