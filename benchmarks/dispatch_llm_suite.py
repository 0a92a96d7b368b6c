"""Dispatcher benchmark on an LLM inference suite (GPU; one run per table).

NOT YET RUN: written in the session that built the dispatcher, when no device time was left;
the next session runs it and puts the tables in BENCHMARKS.md.

Suite: Llama-3-8B and Llama-3-70B projections (QKV, O, gate/up, down) at M = 1, 16, 128,
1024, 4096, 8192 and a few odd M, as ``x @ W`` (layout rr) and ``x @ W.T`` (layout rc), bf16.
Methods, per problem:
- torch.matmul (cuBLAS);
- tilepick heuristic, hybrid and exhaustive find modes (each with a fresh perf-db, timed
  from cold: the tuning cost is the wall time of the first call);
- the Triton tutorial's 8 configs, benchmarked per shape and the best kept (what
  ``triton.autotune`` does with that list), on tilepick's masked pointer kernel;
- ``torch.compile(mode="max-autotune")`` of a bare matmul: first-call time per shape (tuning
  cost) and its steady-state time.
Steady state: every method's chosen kernel re-timed in interleaved rounds on the same inputs.

    PYTHONPATH=src python benchmarks/dispatch_llm_suite.py --out $OUT [--models llama3-8b,llama3-70b]
"""

import argparse
import json
import math
import os
import statistics
import tempfile
import time

import torch

from tilepick import solvers
from tilepick.bench import shapes
from tilepick.bench.timing import interleaved, time_fn
from tilepick.config import KernelConfig
from tilepick.dispatch import Dispatcher, RealDevice
from tilepick.problem import GemmProblem

M_VALUES = (1, 16, 77, 128, 1000, 1024, 3000, 4096, 8192)
TUTORIAL = [(128, 256, 64, 8, 8, 3), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4),
            (128, 64, 32, 8, 4, 4), (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4),
            (64, 32, 32, 8, 2, 5), (32, 64, 32, 8, 2, 5)]


def suite(models, m_values=M_VALUES):
    out = []
    for name in models:
        for proj in shapes.llm_projections(shapes.MODELS[name]):
            if proj.layer not in ("qkv", "attn_out", "gate_up", "down"):
                continue
            for m in m_values:
                for layout in ("rr", "rc"):
                    out.append(GemmProblem(m, proj.n, proj.k, dtype="bf16", layout=layout))
    return list(dict.fromkeys(out))


def inputs(p):
    from tilepick.tensors import make_inputs

    return make_inputs(p, "cuda", seed=0)


def tutorial_best(p, inp):
    """Benchmark the tutorial's 8 configs (as triton.autotune would) and keep the best."""
    t0 = time.time()
    best, best_ms = None, math.inf
    for bm, bn, bk, g, w, s in TUTORIAL:
        c = KernelConfig("gemm.ptr", bm, bn, bk, g, w, s)
        try:
            t = time_fn(lambda: solvers.launch(p, c, inp.a, inp.b, inp.out, check=False),
                        warmup=1, reps=20, max_ms=30)
        except Exception:  # a config the tutorial lists but that fails here: skipped
            continue
        if t.ms < best_ms:
            best, best_ms = c.id, t.ms
    return best, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="llama3-8b,llama3-70b")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--skip-compile", action="store_true", help="skip torch.compile max-autotune")
    ap.add_argument("--modes", default="heuristic,hybrid,exhaustive",
                    help="find modes to run (exhaustive benchmarks ~1000 candidates per shape: "
                         "budget a device call for a handful of shapes)")
    ap.add_argument("--m-values", default=",".join(map(str, M_VALUES)))
    args = ap.parse_args()
    problems = suite(args.models.split(","), tuple(int(x) for x in args.m_values.split(",")))
    dbdir = tempfile.mkdtemp()
    disp = {mode: Dispatcher(mode=mode, device=RealDevice(), user_db=os.path.join(dbdir, f"{mode}.db"))
            for mode in args.modes.split(",")}
    rows = []
    for p in problems:
        inp = inputs(p)
        row = {"problem": p.key(), "tuning_s": {}, "choice": {}}
        for mode, d in disp.items():
            t0 = time.time()
            d.run(p, inp.a, inp.b, inp.out)
            torch.cuda.synchronize()
            row["tuning_s"][mode] = time.time() - t0
            row["choice"][mode] = d.cache[p].config_id
        row["choice"]["tutorial"], row["tuning_s"]["tutorial"] = tutorial_best(p, inp)
        row["choice"]["torch"] = "gemm.cublas"
        fns = {name: (lambda c=KernelConfig.from_id(cid): solvers.launch(
            p, c, inp.a, inp.b, inp.out, check=False)) for name, cid in row["choice"].items() if cid}
        if not args.skip_compile:
            a, b = inp.a, inp.b
            torch._dynamo.reset()
            f = torch.compile(lambda x, y: x @ y, mode="max-autotune", dynamic=False)
            t0 = time.time()
            f(a, b)
            torch.cuda.synchronize()
            row["tuning_s"]["max_autotune"] = time.time() - t0
            fns["max_autotune"] = lambda: f(a, b)
        timed = interleaved(fns, rounds=args.rounds, warmup=1, reps=30, max_ms=40)
        row["ms"] = {name: r.ms for name, r in timed.items()}
        row["spread"] = {name: r.spread for name, r in timed.items()}
        rows.append(row)
        print(p.key(), {k: round(row["ms"]["torch"] / v, 3) for k, v in row["ms"].items()}, flush=True)
    names = sorted({k for r in rows for k in r["ms"]})
    geo = {n: math.exp(statistics.mean(math.log(r["ms"]["torch"] / r["ms"][n]) for r in rows
                                       if n in r["ms"])) for n in names}
    worst = {n: min(r["ms"]["torch"] / r["ms"][n] for r in rows if n in r["ms"]) for n in names}
    tuning = {n: sum(r["tuning_s"].get(n, 0.0) for r in rows) for n in names}
    from tilepick.provenance import collect

    result = {"provenance": collect(), "rows": rows, "geomean_speedup_vs_torch": geo,
              "worst_speedup_vs_torch": worst, "tuning_s_total": tuning}
    with open(os.path.join(args.out, "dispatch_llm_suite.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps({k: result[k] for k in ("geomean_speedup_vs_torch", "worst_speedup_vs_torch",
                                             "tuning_s_total")}, indent=1))


if __name__ == "__main__":
    main()
