"""Session 48: on mid-sized rr training problems (2^16 <= M x N < 2^20, 256 < K <= 4096), how
close the best 16-row `gemm.ptr` tile comes to the problem's best, by whether N is a multiple of
16 (CPU, ~1 min).

Why: rr 511 x 512 x 513 (validation) runs `gemm.ptr.m16n64k128.g8.w4.s4` in 10.0 us while the
same config reads 23.5 us on the training problem rr 511 x 511 x 511, even after a fresh pass
(`make_ptr_refresh_lists.py --mid`): the rows were not stale; the leading dimension of B and C
(N in rr) was. This says how general that is.

    python benchmarks/analysis_s48/sixteen_row_alignment.py
"""

import json

import pandas as pd

from tilepick.bench.retime import current_view

FOLDERS = ("train_rr/", "train_fused_negative/", "train_splitk_fused/", "train_low_flop/")


def main(model="models/gemm_bf16_h200"):
    with open(f"{model}/manifest.json") as f:
        files = [d["path"] for d in json.load(f)["data"]
                 if "/bf16/" in d["path"] and any(s in d["path"] for s in FOLDERS)]
    v = current_view(files)
    mn = v["m"] * v["n"]
    v = v[(v["layout"] == "rr") & (mn >= 2 ** 16) & (mn < 2 ** 20) & (v["k"] > 256)
          & (v["k"] <= 4096) & v["valid"].fillna(False)]
    best = v.groupby("problem_key")["time_ms"].min()
    sixteen = v[(v["family"] == "gemm.ptr") & (v["block_m"] == 16)]
    df = pd.DataFrame({"best": best, "p16": sixteen.groupby("problem_key")["time_ms"].min(),
                       "n": v.groupby("problem_key")["n"].first()}).dropna()
    df["ratio"] = df["best"] / df["p16"]
    df["N a multiple of 16"] = df["n"] % 16 == 0
    print("best 16-row gemm.ptr tile / the problem's best, rr, the manifest's files:")
    print(df.groupby("N a multiple of 16")["ratio"].describe().round(3).to_string())


if __name__ == "__main__":
    main()
