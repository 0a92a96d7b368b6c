"""Each LLM-suite row's paired heuristic speed-up over torch.matmul, averaged over several runs,
and the geomean of those averages (CPU, seconds).

Why: one run's geomean moves by ~0.1% with the clocks; issue 5's 1.03x line is about that far
from the model's level, so it is read from the average of runs, and the rows that sit under 1.0
in every run (what holds the geomean back) are listed with the pick families they ran.

    python benchmarks/analysis_s57/suite_row_means.py [--worst 12] [--by-m] [ROWS.jsonl.gz ...]

--by-m also prints the geomean of the row means per (M, layout) and how many of those rows ran
cuBLAS itself in every run (session 59: where a new family could lift the line).

Default: the six runs of sessions 51-54 with the then-shipped model as `heuristic`.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from analysis_s53.entry_rows_runs import RUNS as RUNS_51_53  # noqa: E402
from analysis_s53.entry_rows_runs import heuristic_by_problem  # noqa: E402

from tilepick.config import KernelConfig  # noqa: E402
from tilepick.problem import GemmProblem  # noqa: E402

RUNS = RUNS_51_53 + ["benchmarks/results/dispatch_llm_suite_s54_ab_wide3_6b43aef.jsonl.gz"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=RUNS)
    ap.add_argument("--worst", type=int, default=12)
    ap.add_argument("--by-m", action="store_true")
    args = ap.parse_args()
    rows = sorted((float(np.mean([s for s, _ in v])), p, len(v),
                   sorted({KernelConfig.from_id(c).family.split(".", 1)[1] for _, c in v}))
                  for p, v in heuristic_by_problem(args.files).items())
    means = np.array([m for m, *_ in rows])
    print(f"{len(rows)} rows, {len(args.files)} runs: geomean of the row means "
          f"{np.exp(np.log(means).mean()):.4f}; with the rows under 1.0 at 1.0 "
          f"{np.exp(np.log(np.maximum(means, 1.0)).mean()):.4f}")
    for m, p, n, fams in rows[:args.worst]:
        print(f"  {p:40s} {m:.3f} over {n} runs, {', '.join(fams)}")
    if args.by_m:
        groups: dict = {}
        for m, p, _, fams in rows:
            q = GemmProblem.from_key(p)
            groups.setdefault((q.m, q.layout), []).append((m, fams == ["cublas"]))
        for (m_rows, layout), v in sorted(groups.items()):
            print(f"  M = {m_rows:5d} {layout}: {len(v)} rows, geomean "
                  f"{np.exp(np.log([x for x, _ in v]).mean()):.3f}, cuBLAS in every run on "
                  f"{sum(c for _, c in v)}")


if __name__ == "__main__":
    main()
