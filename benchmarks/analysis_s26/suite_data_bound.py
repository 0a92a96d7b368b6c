"""How far a better pick among today's kernels could take the LLM suite (BENCHMARKS, session 26).

For the suite problems whose bf16 data re-timed cuBLAS with the best configs (the problem's
latest re-timing pass where it has one, else its sweep's re-timed top: the loader's rule,
``dataset.clean(within_pass=True)``): cuBLAS's time over the best re-timed config's (the data's
bound on any pick), beside what one suite run's hybrid and heuristic read on the same problems (ratios of
medians).

    python benchmarks/analysis_s26/suite_data_bound.py benchmarks/results/dispatch_llm_suite_s26_modelK_8c9a93a.jsonl.gz
"""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from tilepick.data.io import open_text, read_frame
from tilepick.model.dataset import clean

rows_path = sys.argv[1]   # the suite's rows file (gzipped since session 29)
with open_text(rows_path) as fh:
    rows = {r["problem"]: r for r in map(json.loads, fh)}
frame = pd.concat([read_frame(d) for d in sorted(Path("data/gemm/bf16/h200").iterdir())
                   if d.is_dir()], ignore_index=True)
frame = clean(frame[frame.problem_key.isin(set(rows))], within_pass=True)
frame = frame[frame.retimed]   # re-timed together: a pass, or a sweep's re-timed top
out = []
for key, d in frame.groupby("problem_key"):
    if not (d.family == "gemm.cublas").any():   # no bound without cuBLAS in the pass
        continue
    best = d.sort_values("time_ms").iloc[0]
    r = rows[key]
    out.append(dict(problem=key, m=int(best.m), best=best.config_id,
                    bound=d[d.family == "gemm.cublas"].time_ms.min() / best.time_ms,
                    hybrid=r["ms"]["torch"] / r["ms"]["hybrid"],
                    heuristic=r["ms"]["torch"] / r["ms"]["heuristic"]))
t = pd.DataFrame(out)
print(t.sort_values(["m", "problem"]).to_string(index=False))
g = lambda x: float(np.exp(np.log(x).mean()))  # noqa: E731
print(f"{len(t)} problems: data bound {g(t.bound):.4f}, hybrid {g(t.hybrid):.4f}, "
      f"heuristic {g(t.heuristic):.4f}")
mid = t[(t.m >= 1000) & (t.m <= 4096)]
print(f"M = 1,000-4,096: {len(mid)} problems, best is cuBLAS on {(mid.best == 'gemm.cublas').sum()},"
      f" bound at most {mid.bound.max():.4f}")
