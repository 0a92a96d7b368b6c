"""The naive timing loop on the sweep's own problem mix: the yardstick of the sweep's rate.

The sweep issue's "a naive loop measured ~40 configs/s" was ``triton.testing.do_bench(fn,
warmup=3, rep=15)`` config after config on ANCHORS.md's 28 shapes. A rate depends on the mix
(on 16k cubes one launch takes ~0.2 s), so this times the same loop on a seeded sample of the
(problem, config) pairs that ``tilepick sweep --problems mixed --limit 200 --sample 150 --pool
120 --order model`` measures (the plan of ``bench.sweep.plan_configs``, same seed), after
compiling them in parallel (not timed, as the sweep's rate excludes its compile phase): no
correctness check, no early stop, no re-timing. Its rate, against the sweep's on the whole
mix, is the speed-up of the sweep's timing over the naive loop.

    PYTHONPATH=src python3 benchmarks/naive_rate.py [--fraction 0.1] [--max-tflop T] [--out DIR]

``--max-tflop 1.1`` keeps the mix to the size range of ANCHORS.md's 28 shapes (the largest,
8192^3, is 1.1 TFLOP), where the issue's ~40 configs/s was measured.
"""

import argparse
import json
import math
import random
import time
from pathlib import Path

import triton.testing

from tilepick import solvers
from tilepick.bench import shapes
from tilepick.bench.compile_pool import compile_all
from tilepick.bench.runner import ProblemInputs
from tilepick.bench.sweep import SweepOptions, plan_configs
from tilepick.provenance import collect
from tilepick.data.io import write_json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--pool", type=int, default=120)
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--max-tflop", type=float, default=math.inf,
                    help="as `tilepick sweep --max-tflop`: only problems of at most this many TFLOP")
    ap.add_argument("--processes", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    plist = shapes.resolve_problems("mixed", "bf16", "rr", args.seed, None)
    random.Random(args.seed).shuffle(plist)       # as `tilepick sweep` orders and filters them
    problems = [p for p in plist if p.flops / 1e12 <= args.max_tflop][:args.limit]
    opts = SweepOptions(sample=args.sample, pool=args.pool, seed=args.seed, order="model",
                        processes=args.processes, progress=False)
    plan = plan_configs(problems, opts)
    pairs = [(p, c) for p, cfgs in plan for c in [solvers.KernelConfig.from_id("gemm.cublas"),
                                                    *cfgs]]
    rng = random.Random(args.seed + 7)
    picked = [pc for pc in pairs if rng.random() < args.fraction]
    compiled = compile_all(picked, processes=args.processes, progress=False)
    by_problem: dict = {}
    for p, c in picked:
        r = compiled.get((p.key(), c.id))
        if r is None or r.ok:
            by_problem.setdefault(p, []).append(c)
    t0 = time.time()
    timed, failed = 0, 0
    for p, configs in by_problem.items():
        inp = ProblemInputs.make(p, "cuda", seed=args.seed).inputs
        for c in configs:
            def fn(c=c):
                solvers.launch(p, c, inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b,
                               check=False)
            try:
                triton.testing.do_bench(fn, warmup=3, rep=15)
                timed += 1
            except Exception:   # noqa: BLE001 - a config that fails is not timed
                failed += 1
    wall = time.time() - t0
    out = {"provenance": collect(), "args": vars(args), "pairs_in_mix": len(pairs),
           "pairs_sampled": len(picked), "timed": timed, "failed": failed, "wall_s": wall,
           "naive_configs_per_s": timed / wall,
           "naive_full_mix_s_estimate": len(pairs) / (timed / wall)}
    print(json.dumps({k: v for k, v in out.items() if k != "provenance"}, indent=1))
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        write_json(Path(args.out) / "naive_rate.json", out)


if __name__ == "__main__":
    main()
