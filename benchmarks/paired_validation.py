"""Two models on the same validation problems, problem by problem (CPU, ~1 min).

The headline means of two models differ by a few tenths on 200 problems, about what one
model's retraining noise moves them; pairing them per problem says how many picks changed,
which way, by how much (mean difference and its standard error) and on what size of problem.
Efficiencies are `tilepick validate`'s (inside each problem's latest re-timing pass).

    python benchmarks/paired_validation.py OLD_MODEL NEW_MODEL \
        [--data data/gemm/bf16/h200/validation data/gemm/bf16/h200/validation_rc] [--worst 10]
        [--problems FILE.jsonl ...]

``--problems`` scores only the problems of those files (e.g. the ones a re-timing pass
refreshed: session 36's `benchmarks/problems/ptr_refresh/*validation*.jsonl`).
"""

import argparse
import json

import numpy as np

from tilepick.bench.shapes import read_problem_file
from tilepick.model import metrics
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores
from tilepick.problem import GemmProblem

SMALL_FLOPS = 1e8   # kernels of a few microseconds, whose re-timed order is the noisiest


def efficiencies(model, data) -> dict:
    """problem key -> (efficiency, pick) as `validate` scores them."""
    pred = Predictor(model)
    ds = load([data], pred.dtype, pred.arch, within_pass=True)
    t = metrics.per_problem(ds.problem_index, ds.tflops, model_scores(pred, ds))
    return {ds.problem_keys[i]: (float(e), ds.config_ids[r])
            for i, r, e in zip(t["problem"], t["pick_row"], t["efficiency"])}


def compare(old, new, data, worst: int, only: frozenset | None = None) -> dict | None:
    """The paired comparison on ``data`` (``only`` those problems); None for fewer than 2."""
    a, b = efficiencies(old, data), efficiencies(new, data)
    keys = sorted(k for k in a if only is None or k in only)
    if len(keys) < 2:
        return None
    d = np.array([b[k][0] - a[k][0] for k in keys])
    changed = np.abs(d) > 1e-9
    small = np.array([GemmProblem.from_key(k).flops < SMALL_FLOPS for k in keys])
    order = np.argsort(d)

    def entry(i):
        return {"problem": keys[i], "diff": float(d[i]), "old": a[keys[i]], "new": b[keys[i]]}
    return {"data": data, "problems": len(keys), "changed": int(changed.sum()),
            "mean_old": 100 * float(np.mean([a[k][0] for k in keys])),
            "mean_new": 100 * float(np.mean([b[k][0] for k in keys])),
            "mean_diff_points": 100 * float(d.mean()),
            "se_points": 100 * float(d.std(ddof=1) / np.sqrt(len(d))),
            "better": int((d > 1e-9).sum()), "worse": int((d < -1e-9).sum()),
            "worse_small": int(((d < -1e-9) & small).sum()),
            "better_small": int(((d > 1e-9) & small).sum()),
            "largest_losses": [entry(i) for i in order[:worst] if d[i] < 0],
            "largest_gains": [entry(i) for i in order[::-1][:worst] if d[i] > 0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--data", nargs="+", default=["data/gemm/bf16/h200/validation",
                                                  "data/gemm/bf16/h200/validation_rc"])
    ap.add_argument("--worst", type=int, default=10)
    ap.add_argument("--out", default=None)
    ap.add_argument("--problems", nargs="*", default=None, help="only these problems' files")
    args = ap.parse_args()
    only = (None if args.problems is None else
            frozenset(p.key() for f in args.problems for p in read_problem_file(f)))
    out = [r for r in (compare(args.old, args.new, d, args.worst, only) for d in args.data)
           if r is not None]
    for r in out:
        print(f"{r['data']}: {r['changed']} of {r['problems']} picks changed; mean "
              f"{r['mean_old']:.2f} -> {r['mean_new']:.2f} ({r['mean_diff_points']:+.2f} +- "
              f"{r['se_points']:.2f}); better {r['better']} ({r['better_small']} under "
              f"{SMALL_FLOPS:.0e} flops), worse {r['worse']} ({r['worse_small']})")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"old": args.old, "new": args.new, "sets": out}, f, indent=1)


if __name__ == "__main__":
    main()
