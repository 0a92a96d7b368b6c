"""How one commit's re-timing passes read against the data before them: per folder and
family, the ratio of each re-timed config's new time to its time in the view without them
(median, P10, P90). Families whose kernels did not change show the timing regime's shift
(session 36, first pass on a 4-GPU H200 host: folder medians 1.02-1.12 for cuBLAS, 1.02-1.20 for the TMA families); the changed
ones show their speed-up on top of it.

    python benchmarks/pass_shift.py COMMIT_PREFIX [--data data/gemm/*/h200/*]
"""

import argparse
import glob

import pandas as pd

from tilepick.bench.retime import current_view


def commit_of(path) -> str:
    return str(pd.read_parquet(path, columns=["tilepick_commit"])["tilepick_commit"].iloc[0])


def shift(folder: str, commit: str) -> pd.DataFrame | None:
    files = sorted(glob.glob(f"{folder}/*.parquet"))
    new = [f for f in files if commit_of(f).startswith(commit)]
    old = [f for f in files if f not in new]
    if not new or not old:
        return None
    before = current_view(old)[["problem_key", "config_id", "time_ms"]]
    after = current_view(new)
    m = after.merge(before, on=["problem_key", "config_id"], suffixes=("", "_before"))
    m["ratio"] = m["time_ms"] / m["time_ms_before"]
    m["folder"] = folder.split("gemm/")[-1]
    return m[["folder", "family", "ratio"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("commit")
    ap.add_argument("--data", nargs="*", default=sorted(glob.glob("data/gemm/*/h200/*/")))
    args = ap.parse_args()
    parts = [p for p in (shift(f.rstrip("/"), args.commit) for f in args.data) if p is not None]
    g = pd.concat(parts).groupby(["folder", "family"])["ratio"]
    print(pd.DataFrame({"configs": g.size(), "median": g.median(), "p10": g.quantile(0.1),
                        "p90": g.quantile(0.9)}).round(3).to_string())


if __name__ == "__main__":
    main()
