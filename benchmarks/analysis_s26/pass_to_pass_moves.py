"""How far a config's re-timed median moves between two passes over the same problems, by the
kernel's time (session 26: rotated against Williams-ordered rounds).

Per (problem, config) in both passes: the new median over the old, divided by the problem's
median of those ratios (a whole-problem shift, e.g. clocks, taken out); p10 / p90 per bucket
of the old time.

    python benchmarks/analysis_s26/pass_to_pass_moves.py NEW.parquet OLD.parquet

Session 26 compared bf16 validation/retime-008 over retime-006, and retime-006 over
retime-003; the older two left the tree: `git show 0132e42:data/gemm/bf16/h200/validation/retime-006.parquet > /tmp/r6.parquet`.
"""
import sys

import pandas as pd

cols = ["problem_key", "config_id", "time_ms", "valid"]
new, old = (pd.read_parquet(f, columns=cols).query("valid") for f in sys.argv[1:3])
j = new.merge(old, on=["problem_key", "config_id"], suffixes=("_new", "_old"))
j["ratio"] = j.time_ms_new / j.time_ms_old
j["move"] = j.ratio / j.groupby("problem_key").ratio.transform("median")
j["old_time"] = pd.cut(j.time_ms_old, [0, 0.02, 0.1, 0.5, 2, 1e9],
                       labels=["< 20 us", "20-100 us", "0.1-0.5 ms", "0.5-2 ms", "> 2 ms"])
print(j.groupby("old_time", observed=True).move.describe(percentiles=[0.1, 0.9])
      [["count", "10%", "90%"]].round(3))
