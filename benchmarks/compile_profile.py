"""Where does the sweep's compile time go? ptxas against the rest, per family.

Compiles the binaries a sweep would compile (the plan of ``tilepick sweep --problems mixed
--sample 150 --pool 120 --limit 200 --max-tflop 1.1 --order model``, one task per
binary, as ``bench.compile_pool.compile_all`` groups them) in a spawned pool whose
workers time every ``ptxas`` subprocess (Triton assembles PTX to a cubin with it), and
reports wall time, the workers' busy time, ptxas's share, the first task of each worker
(its imports and CUDA context), each worker's start-up (pool creation to its first task)
and tail (its last task to the pool's end), and the per-family means. The pool is
``compile_pool.make_pool`` (``--start-method`` as ``TILEPICK_COMPILE_START``). Run on the GPU
machine, cold cache:

    TRITON_CACHE_DIR=$(mktemp -d) PYTHONPATH=src python3 benchmarks/compile_profile.py \
        [--processes 16] [--start-method forkserver|spawn] [--prestart] [--out FILE]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import time
from concurrent.futures import as_completed

from tilepick.bench import compile_pool, shapes
from tilepick.bench.sweep import SweepOptions, plan_configs
from tilepick.data.io import write_json

_PTXAS = {"seconds": 0.0, "calls": 0, "tasks": 0}
_T = {}


def _init():
    _T["init_enter"] = time.time()
    compile_pool._init_worker()
    _T["init_exit"] = time.time()
    run = subprocess.run

    def timed_run(args, *a, **kw):
        t0 = time.perf_counter()
        try:
            return run(args, *a, **kw)
        finally:
            if "ptxas" in str(args[0] if isinstance(args, (list, tuple)) else args):
                _PTXAS["seconds"] += time.perf_counter() - t0
                _PTXAS["calls"] += 1
    subprocess.run = timed_run


def _task(task):
    before = dict(_PTXAS)
    _PTXAS["tasks"] += 1
    start = time.time()
    (pkey, cid, launch), ok, reason, secs = compile_pool._warm(task)
    return (cid if launch == 0 else "reduce.splitk_reduce", ok, secs, _PTXAS["seconds"] - before["seconds"],
            _PTXAS["calls"] - before["calls"], before["tasks"] == 0,
            {"pid": os.getpid(), "start": start, "end": time.time(), **_T})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=16)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--max-tflop", type=float, default=1.1)
    ap.add_argument("--start-method", default=None, choices=compile_pool.START_METHODS)
    ap.add_argument("--prestart", action="store_true",
                    help="start the forkserver before planning, as tilepick sweep does")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import random

    if args.prestart:
        compile_pool.prestart(args.start_method)
    plist = shapes.resolve_problems("mixed", "bf16", "rr", 0, None)
    random.Random(0).shuffle(plist)   # as `tilepick sweep` orders and filters them
    problems = [p for p in plist if p.flops / 1e12 <= args.max_tflop][:args.limit]
    plan = plan_configs(problems, SweepOptions(sample=150, pool=120, seed=0, order="model",
                                               progress=False))
    pairs = [(p, c) for p, cfgs in plan for c in cfgs]
    tasks = list(compile_pool.binary_tasks(pairs)[0].values())
    configs = len({compile_pool.specialisation_key(p, c) for p, c in pairs if not c.is_vendor})
    t0 = time.time()
    results = []
    method = compile_pool.start_method(args.start_method)
    with compile_pool.make_pool(args.processes, method, initializer=_init) as pool:
        for fut in as_completed([pool.submit(_task, t) for t in tasks]):
            results.append(fut.result())
        t_done = time.time()
    wall = time.time() - t0
    workers = {}
    for r in results:
        w = workers.setdefault(r[6]["pid"], {"first": math.inf, "last": 0.0, **r[6]})
        w["first"], w["last"] = min(w["first"], r[6]["start"]), max(w["last"], r[6]["end"])
    timeline = {  # seconds after the pool was created, mean (max) over workers
        name: {"mean": statistics.mean(v), "max": max(v)} for name, v in {
            "init_enter": [w["init_enter"] - t0 for w in workers.values()],
            "init_s": [w["init_exit"] - w["init_enter"] for w in workers.values()],
            "first_task_start": [w["first"] - t0 for w in workers.values()],
            "tail": [t_done - w["last"] for w in workers.values()]}.items()}
    fam = {}
    for cid, ok, secs, ptx, calls, first, _ in results:
        f = fam.setdefault(cid.split(".")[1], {"n": 0, "s": [], "ptxas": []})
        f["n"] += 1
        f["s"].append(secs)
        f["ptxas"].append(ptx)
    busy = sum(r[2] for r in results)
    ptxas = sum(r[3] for r in results)
    firsts = [r[2] for r in results if r[5]]
    out = {"binaries": len(results), "failed": sum(not r[1] for r in results),
           "processes": args.processes, "start_method": method, "prestart": args.prestart, "workers": len(workers),
           "wall_s": wall, "binaries_per_s": len(results) / wall,
           "configs_compiled": configs, "configs_compiled_per_s": configs / wall,
           "pool_shutdown_s": wall - (t_done - t0), "worker_timeline_s": timeline,
           "busy_s": busy, "busy_fraction": busy / (wall * args.processes),
           "ptxas_s": ptxas, "ptxas_share_of_busy": ptxas / busy if busy else math.nan,
           "ptxas_calls": sum(r[4] for r in results),
           "first_task_s_mean": statistics.mean(firsts) if firsts else None,
           "rest_task_s_mean": statistics.mean(r[2] for r in results if not r[5]),
           "by_family": {k: {"binaries": v["n"], "mean_s": statistics.mean(v["s"]),
                             "mean_ptxas_s": statistics.mean(v["ptxas"])}
                         for k, v in sorted(fam.items())}}
    print(json.dumps(out, indent=1))
    write_json(args.out, out)


if __name__ == "__main__":
    main()
