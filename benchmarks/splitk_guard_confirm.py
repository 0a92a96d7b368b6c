"""Is every problem the split-K rule flags really computed without its last terms? (GPU, ~2 min.)

``splitk_guard_scan.py`` flagged 289 of the 13,929 bf16 dataset problems, many of them wider
than the narrow outputs the rule was found on, while the sweeps' checks of cuBLAS on them read
rounding-level errors (one over 0.005). Here each flagged problem runs through torch.matmul
with the guard off (random bf16 inputs, packed operands of its layout; batch 1) and is compared
with float64 twice: as is, and without the last ``dropped`` terms of K. A problem whose result
matches the second better is confirmed.

    PYTHONPATH=src python3 benchmarks/splitk_guard_confirm.py --scan SCAN.json --out F.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch

from tilepick.data.io import open_text, write_json
from tilepick.problem import GemmProblem
from tilepick.provenance import collect
from tilepick.solvers import splitk_guard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cublas_splitk_remainder_probe import operands, rel  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scan", required=True)
    ap.add_argument("--max-flops", type=float, default=2e12, help="skip larger problems")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    with open_text(args.scan) as f:
        flagged = [a for a in json.load(f)["affected"] if a["dropped_terms"]]
    keys = sorted({a["problem"] for a in flagged})
    rows = []
    for key in keys:
        p = GemmProblem.from_key(key)
        if p.batch != 1 or p.flops > args.max_flops:
            rows.append({"problem": key, "skipped": "batch" if p.batch != 1 else "flops"})
            continue
        splits = splitk_guard.cublas_splits(p)
        lost = splitk_guard.dropped_terms(p.k, splits)
        a, b = operands(p, 0)
        ref = a.double() @ b.double()
        out = torch.matmul(a, b)
        tail = a[:, p.k - lost:].double() @ b[p.k - lost:, :].double()
        row = {"problem": key, "splits": splits, "dropped": lost,
               "out_elems": p.m * p.n, "error": rel(out, ref),
               "error_without_dropped": rel(out, ref - tail),
               "predicted": math.sqrt(lost / p.k)}
        row["confirmed"] = row["error_without_dropped"] < row["error"]
        rows.append(row)
        print(row, flush=True)
        del a, b, ref, out, tail
    done = [r for r in rows if "skipped" not in r]
    summary = {"flagged": len(keys), "checked": len(done),
               "confirmed": sum(r["confirmed"] for r in done),
               "skipped": len(rows) - len(done)}
    print(summary)
    if args.out:
        write_json(args.out, {"provenance": collect(), "scan": args.scan, "summary": summary,
                              "rows": rows})


if __name__ == "__main__":
    main()
