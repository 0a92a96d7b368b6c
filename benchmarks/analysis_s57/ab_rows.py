"""Two heuristic models of one suite run, row by row (CPU, seconds): the geomean of their
per-row ratio with its standard error, the rows where their picks differ (each pick's paired
speed-up over torch.matmul), and each model's rows under 0.97x with their picks.

    python benchmarks/analysis_s57/ab_rows.py ROWS.jsonl.gz [--a heuristic] [--b heuristic:s53]

Why: the run's JSON gives each method's paired geomean, not how far apart two methods timed in
the same rounds are, nor on which rows.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dispatch_llm_suite import paired_speedup  # noqa: E402

from tilepick.data.io import open_text  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows")
    ap.add_argument("--a", default="heuristic")
    ap.add_argument("--b", default="heuristic:s53")
    args = ap.parse_args()
    with open_text(args.rows) as fh:
        rows = [json.loads(line) for line in fh]
    sa = np.array([paired_speedup(r, args.a) for r in rows])
    sb = np.array([paired_speedup(r, args.b) for r in rows])
    logs = np.log(sa / sb)
    print(f"{len(rows)} rows: {args.a} {np.exp(np.log(sa).mean()):.4f}, {args.b} "
          f"{np.exp(np.log(sb).mean()):.4f}; {args.a} / {args.b} row by row "
          f"{np.exp(logs.mean()):.4f} +- {logs.std(ddof=1) / np.sqrt(len(logs)):.4f} (s.e.)")
    for r, a, b in sorted(zip(rows, sa, sb), key=lambda t: t[0]["problem"]):
        ca, cb = r["choice"][args.a], r["choice"][args.b]
        if ca != cb:
            print(f"  {r['problem']:34s} {ca:44s} {a:.3f} | {cb:44s} {b:.3f}")
    for name, s in ((args.a, sa), (args.b, sb)):
        low = [f"  {r['problem']:34s} {r['choice'][name]:44s} {v:.3f}"
               for r, v in zip(rows, s) if v < 0.97]
        print(f"{name}: {len(low)} rows under 0.97", *low, sep="\n")


if __name__ == "__main__":
    main()
