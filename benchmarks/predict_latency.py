"""Latency of Predictor.rank on this CPU: a new problem (candidates, features, cascade,
uncertainty) and a repeated one (the memoised ranking).

    python benchmarks/predict_latency.py [--model DIR] [--catalog trained|space]
        [--stage2-top N] [--problems 300] [--seed 0] [--passes 1] [--json]

Compiled trees (the ``fast`` extra) are used where installed; ``TILEPICK_COMPILED_TREES=0``
measures LightGBM instead. ``--passes P`` ranks the new problems P times (memo cleared;
the candidate table's per-size cache stays warm, as in a long-running process).

``--catalog`` / ``--stage2-top`` override the model's predictor.json (``--catalog`` alone uses
that catalog's default cascade, ``CascadeSettings.for_catalog``).

New problems are distinct random shapes (log-uniform M, N, K); each is ranked once, after one
warm-up problem that builds the cached candidate table. Repeated: the same shapes again.

The shared 2-core CI machine changes speed by up to 2x from one minute to the next; the
``numpy_op_ns`` line (a 160-element multiply, the typical operation of the hot path) says which
state a run met, so runs can be compared.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time

import numpy as np

if "--no-lightgbm" in sys.argv:   # decided before tilepick imports it: the numpy trees path
    sys.modules["lightgbm"] = None

from tilepick.model import Predictor  # noqa: E402
from tilepick.model.ranking import CascadeSettings  # noqa: E402
from tilepick.problem import GemmProblem  # noqa: E402


def shapes(count: int, seed: int, dtype: str = "bf16", layout: str = "rr") -> list[GemmProblem]:
    rng = random.Random(seed)
    seen: dict = {}
    while len(seen) < count:
        m, n, k = (int(2 ** rng.uniform(0, 14)) for _ in range(3))
        seen.setdefault((m, n, k), GemmProblem(m, n, k, dtype=dtype, layout=layout))
    return list(seen.values())


def percentiles(ts: list[float]) -> dict:
    us = np.array(ts) * 1e6
    return {"p50_us": round(float(np.percentile(us, 50)), 1),
            "p90_us": round(float(np.percentile(us, 90)), 1),
            "mean_us": round(float(us.mean()), 1), "n": len(us)}


def numpy_op_ns() -> float:
    a, b = np.random.rand(160), np.random.rand(160)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(2000):
            a * b
        best = min(best, (time.perf_counter() - t) / 2000)
    return round(best * 1e9, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model directory (default: the shipped one)")
    ap.add_argument("--catalog", choices=("trained", "space"), default=None,
                    help="rank this catalog instead of the model's")
    ap.add_argument("--stage2-top", type=int, default=None, help="override the cascade's")
    ap.add_argument("--problems", type=int, default=300)
    ap.add_argument("--no-lightgbm", action="store_true",
                    help="as on a machine without lightgbm: the trees evaluated by numpy "
                         "(tilepick.model.trees)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--passes", type=int, default=1,
                    help="rank the new problems this many times (memo cleared in between) and "
                    "report each pass's p50 too: the VM's speed drifts within a run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    t0 = time.perf_counter()
    pred = Predictor.load(model_dir=args.model)
    if args.catalog or args.stage2_top:
        cascade = (CascadeSettings.for_catalog(args.catalog) if args.catalog
                   else pred.cascade).to_dict()
        if args.stage2_top:
            cascade["stage2_top"] = args.stage2_top
        pred = Predictor(pred.model_dir, hw=pred.hw, catalog=args.catalog,
                         cascade=CascadeSettings(**cascade))
    load_s = time.perf_counter() - t0
    # problems of the model's own dtype and first trained layout
    problems = shapes(args.problems + 1, args.seed, pred.dtype, pred.layouts[0])
    t0 = time.perf_counter()
    pred.rank(problems[0])                       # builds the cached candidate table
    first_s = time.perf_counter() - t0
    new, again = [], []
    candidates = []
    pass_p50 = []
    for i in range(max(1, args.passes)):
        pred.clear_memo()
        this = []
        for p in problems[1:]:
            t = time.perf_counter()
            r = pred.rank(p)
            this.append(time.perf_counter() - t)
            if i == 0:
                candidates.append(len(r))
        new += this
        pass_p50.append(round(float(np.median(this)) * 1e6, 1))
    for p in problems[1:]:
        t = time.perf_counter()
        pred.rank(p)
        again.append(time.perf_counter() - t)
    out = {"model": pred.name, "catalog": pred.catalog, "cascade": pred.cascade.to_dict(),
           "machine": platform.processor() or platform.machine(),
           "numpy_op_ns": numpy_op_ns(), "compiled_trees": pred.compiled_trees,
           "trees": type(pred.model).__name__,
           "load_s": round(load_s, 3), "first_call_s": round(first_s, 3),
           "candidates_median": int(np.median(candidates)),
           "new_problem": percentiles(new), "new_problem_pass_p50_us": pass_p50,
           "repeated_problem": percentiles(again)}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"model {out['model']} ({out['catalog']} catalog, cascade {out['cascade']}): "
              f"load {out['load_s']} s, first call (table build) {out['first_call_s']} s, median {out['candidates_median']} candidates; "
              f"machine state: {out['numpy_op_ns']} ns per small numpy op; compiled trees: "
              f"{out['compiled_trees']}; evaluator {out['trees']}")
        for key in ("new_problem", "repeated_problem"):
            s = out[key]
            print(f"{key:17s} p50 {s['p50_us']:8.1f} us   p90 {s['p90_us']:8.1f} us   "
                  f"(n={s['n']})")
        if len(pass_p50) > 1:
            print(f"new_problem p50 of each pass (us): {pass_p50}")


if __name__ == "__main__":
    main()
