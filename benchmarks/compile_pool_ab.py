"""The compile phase with the workers started before planning (the sweep's way since session
12) against started after it, on one GPU machine, each arm into its own cold Triton cache;
arms alternate (early, late, early, late by default).

A sweep plans its configs (sampling, the model's order: ~5 s for 200 problems) and then
compiles them in a pool of spawned workers, each of which first imports torch, Triton and
tilepick (~5 s to the first result on the GPU machines). Started first, the workers import
while the parent plans. (`tilepick sweep` loads the model before its run, to fail early, so
there the overlap is the sampling and ranking only; here each arm's planning loads it.)

    PYTHONPATH=src python3 benchmarks/compile_pool_ab.py [--count 200] [--sample 150]
        [--pool 120] [--processes 16] [--repeats 2] [--out DIR]
"""

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from tilepick.bench import shapes
from tilepick.bench.compile_pool import compile_all, start_pool
from tilepick.bench.sweep import SweepOptions, plan_configs
from tilepick.provenance import collect


def arm(problems, opts, early: bool) -> dict:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilepick-ab-cache-")
    t0 = time.time()
    pool = start_pool(opts.processes) if early else None
    plan = plan_configs(problems, opts)
    t1 = time.time()
    compiled = compile_all([(p, c) for p, cfgs in plan for c in cfgs], processes=opts.processes,
                           progress=False, pool=pool)
    t2 = time.time()
    binaries = len({(cid, r.seconds) for (_, cid), r in compiled.items()})
    return {"early": early, "plan_s": t1 - t0, "compile_s": t2 - t1, "total_s": t2 - t0,
            "binaries": binaries, "binaries_per_s": binaries / (t2 - t1),
            "binaries_per_s_with_plan": binaries / (t2 - t0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default="mixed")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--pool", type=int, default=120)
    ap.add_argument("--processes", type=int, default=16)
    ap.add_argument("--order", default="model")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    plist = shapes.resolve_problems(args.problems, "bf16", "rr", 0, None)
    random.Random(0).shuffle(plist)          # as `tilepick sweep` orders them
    problems = plist[:args.count]
    opts = SweepOptions(sample=args.sample, pool=args.pool, processes=args.processes,
                        order=args.order, progress=False)
    runs = []
    for _ in range(args.repeats):
        for early in (True, False):
            runs.append(arm(problems, opts, early))
            print(json.dumps(runs[-1]), flush=True)
    out = {"provenance": collect(), "args": vars(args), "runs": runs}
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "compile_pool_ab.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
