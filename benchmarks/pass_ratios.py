"""Did a kernel edit move its timings? Two re-timing passes compared family by family.

Every (problem, config) re-timed in both passes gives a ratio new / old time; whole problems
move between passes (clocks, BENCHMARKS "Timing regimes"), so each ratio is also divided by its
problem's median ratio. An edited family whose normalised ratios look like the unchanged
families' (median ~1, the same p10-p90 band) runs at the speed it ran before.

    python benchmarks/pass_ratios.py OLD.parquet NEW.parquet [--out FILE.json]
"""

import argparse

import pandas as pd

from tilepick.data.io import read_frame, write_json


def family_ratios(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    m = old.merge(new, on=["problem_key", "config_id"], suffixes=("_o", "_n"))
    m = m[m["valid_o"] & m["valid_n"]]
    m = m.assign(r=m["time_ms_n"] / m["time_ms_o"])
    m = m.assign(rn=m["r"] / m.groupby("problem_key")["r"].transform("median"))
    q = lambda p: (lambda x: x.quantile(p))  # noqa: E731
    return m.groupby("family_o").agg(
        pairs=("r", "size"), median=("r", "median"), p10=("r", q(0.1)), p90=("r", q(0.9)),
        norm_median=("rn", "median"), norm_p10=("rn", q(0.1)), norm_p90=("rn", q(0.9)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    table = family_ratios(read_frame(args.old), read_frame(args.new))
    print(table.round(4).to_string())
    write_json(args.out, {"old": args.old, "new": args.new,
                          "families": table.round(5).to_dict(orient="index")})


if __name__ == "__main__":
    main()
