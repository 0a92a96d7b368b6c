"""The suite rows where the heuristic ran a cuBLASLt entry in every one of several runs, with
their paired speed-up over torch.matmul averaged over the runs (CPU, seconds).

Why: one run's worst rows move by ~1% between runs; rows that sit under 1.0 in every run are
a property of the pick, not of a run's clocks (session 53: 8 of 54 under 1.0 on average).

    python benchmarks/analysis_s53/entry_rows_runs.py [ROWS.jsonl.gz ...]

Default: the five runs of sessions 51-53 with the then-shipped model as `heuristic`.
"""

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dispatch_llm_suite import paired_speedup  # noqa: E402

from tilepick.data.io import open_text  # noqa: E402

RUNS = [f"benchmarks/results/dispatch_llm_suite_{n}.jsonl.gz" for n in
        ("s51_ab1_25fc09c", "s51_ab2_25fc09c", "s52_cda5347", "s53_ab1_0b303f0", "s53_ab2_bd8e8a8")]


def heuristic_by_problem(files) -> dict[str, list[tuple[float, str]]]:
    """Per suite problem, (paired speed-up over torch.matmul, config id) of the `heuristic`
    method in each of the runs' row files that has the problem."""
    acc: dict[str, list] = {}
    for f in files:
        with open_text(f) as fh:
            for line in fh:
                r = json.loads(line)
                acc.setdefault(r["problem"], []).append(
                    (paired_speedup(r, "heuristic"), r["choice"]["heuristic"]))
    return acc


def main(files):
    acc = heuristic_by_problem(files)
    rows = sorted(((p, float(np.mean([s for s, _ in v])), float(np.std([s for s, _ in v])),
                    sorted({c for _, c in v}))
                   for p, v in acc.items()
                   if len(v) == len(files) and all(".cublaslt." in c for _, c in v)),
                  key=lambda x: x[1])
    means = np.array([m for _, m, _, _ in rows])
    print(f"{len(rows)} rows ran an entry in all {len(files)} runs: geomean "
          f"{np.exp(np.log(means).mean()):.4f}; under 1.0 on average {int((means < 1).sum())}, "
          f"under 0.99 {int((means < 0.99).sum())}")
    for p, m, sd, picks in rows[:10]:
        print(f"  {p}: {m:.3f} (sd {sd:.3f}) {', '.join(picks)}")


if __name__ == "__main__":
    main(sys.argv[1:] or RUNS)
