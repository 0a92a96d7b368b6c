"""How much of a re-timing pass's round-to-round jitter all candidates share, by kernel time
(CPU; reads the passes' ``round_ms``).

Why: sub-10-us kernels carry the noisiest labels (their rows' round medians spread ~8%,
against ~1% above 100 us), and the families that win there (the GEMVs, split-K in one
launch) score lowest out of fold. If the jitter were common to a round (clocks), labels
paired by round would cancel it; if it is each candidate's own, only more samples help.
Per problem and pass: the log round medians of its candidates (configs x rounds), each
centred on its own mean; the share of their variance that the rounds' mean explains, and
their standard deviation.

    python benchmarks/round_jitter.py [data/gemm/bf16/h200/validation*/retime-*.parquet ...]
"""

import argparse
import glob

import numpy as np
import pandas as pd

BANDS = [0, 10, 30, 100, 1e9]   # us
MIN_ROUNDS, MIN_CANDIDATES = 8, 4


def jitter(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (problem, pass): its median kernel time (us), the round effect's share of
    the variance and the per-round standard deviation (of log time)."""
    out = []
    for _, g in frame[frame["round_ms"].notna()].groupby(["problem_key", "sweep_id"]):
        rounds = [np.asarray(x, float) for x in g["round_ms"]]
        n = min(len(x) for x in rounds)
        if n < MIN_ROUNDS or len(rounds) < MIN_CANDIDATES:
            continue
        logs = np.log(np.stack([x[:n] for x in rounds]))
        us = float(np.exp(np.median(logs)) * 1000)
        logs -= logs.mean(axis=1, keepdims=True)
        total = logs.var()
        share = logs.mean(axis=0).var() / total if total > 0 else np.nan
        out.append((us, share, np.sqrt(total)))
    return pd.DataFrame(out, columns=["us", "round_share", "sd"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*",
                    default=sorted(glob.glob("data/gemm/bf16/h200/validation*/retime-*.parquet")))
    args = ap.parse_args()
    frame = pd.concat([pd.read_parquet(f, columns=["problem_key", "sweep_id", "round_ms"])
                       for f in args.files])
    j = jitter(frame)
    j["band_us"] = pd.cut(j["us"], BANDS)
    print(j.groupby("band_us", observed=True).agg(
        passes=("us", "size"), round_share=("round_share", "median"),
        sd=("sd", "median")).to_string())


if __name__ == "__main__":
    main()
