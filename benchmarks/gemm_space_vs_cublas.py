"""Best config of the whole kernel space vs cuBLAS, per shape, in one run (issue: foundation).

Protocol (ANCHORS.md explains why):
1. compile every valid config of every Triton family for every shape in a spawned pool;
2. per shape: check every config against float64 once, then screen it with a short timing
   (L2 flushed, event medians, early stop for configs clearly slower than the best so far);
3. re-time the screening's top ``--top`` configs and cuBLAS in ``--rounds`` interleaved rounds;
   each one's figure is the median of its round medians, and the spread of the best config's
   round medians is reported (winner's curse: screening picks are re-measured, not trusted).

    PYTHONPATH=src python benchmarks/gemm_space_vs_cublas.py --out $OUT [--sample N]
"""

import argparse
import json
import math
import os
import random
import statistics
import time

from tilepick.problem import GemmProblem
from tilepick.data.io import write_json

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 28672, 4096), (4096, 4096, 14336),
          (1024, 4096, 4096), (128, 28672, 4096), (16, 4096, 4096), (1, 4096, 4096),
          (1000, 1000, 1000), (2000, 3000, 1000), (4097, 4095, 1023)]
TARGETS = {(8192, 8192, 8192): 0.98, (4096, 4096, 4096): 0.98, (128, 28672, 4096): 1.4,
           (1000, 1000, 1000): 0.9}


def parse_shapes(text):
    if not text:
        return SHAPES
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--layout", default="rr")
    ap.add_argument("--shapes", default="", help="e.g. 4096x4096x4096,16x4096x4096")
    ap.add_argument("--sample", type=int, default=0, help="configs per shape (0 = all)")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--processes", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--families", default="",
                    help="comma-separated Triton families to screen (default: all)")
    ap.add_argument("--name", default="", help="suffix of the output files")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()

    from tilepick import solvers
    from tilepick.bench.compile_pool import binaries_of, compile_all
    from tilepick.bench.runner import ProblemInputs, run_config
    from tilepick.runtime import device_for_kernels
    from tilepick.bench.timing import interleaved
    from tilepick.config import KernelConfig

    t_start = time.time()
    rng = random.Random(args.seed)
    problems = [GemmProblem(m, n, k, dtype=args.dtype, layout=args.layout)
                for m, n, k in parse_shapes(args.shapes)]
    per_problem = {}
    for p in problems:
        fams = args.families.split(",") if args.families else None
        cfgs = [c for c in solvers.applicable_configs(p, families=fams) if not c.is_vendor]
        if args.sample:
            cfgs = rng.sample(cfgs, min(args.sample, len(cfgs)))
        per_problem[p] = cfgs
    pairs = [(p, c) for p, cfgs in per_problem.items() for c in cfgs]
    t0 = time.time()
    compiled = compile_all(pairs, processes=args.processes)
    compile_wall = time.time() - t0
    binaries = {r.binaries: r for r in compiled.values()}   # one entry per config's binaries
    compile_secs = sorted(r.seconds for r in binaries.values()) or [0.0]  # none: interpreter
    n_compile_fail = sum(1 for r in binaries.values() if not r.ok)
    print(f"compiled {binaries_of(compiled)} binaries for {len(pairs)} (shape, config) pairs in "
          f"{compile_wall:.0f} s with {args.processes} processes; median {statistics.median(compile_secs):.2f} s "
          f"per config; {n_compile_fail} failed", flush=True)

    import torch

    from tilepick.provenance import collect

    prov = collect()
    rows = []
    cublas = KernelConfig("gemm.cublas")
    for p in problems:
        ts = time.time()
        data = ProblemInputs.make(p, device_for_kernels(), seed=args.seed)
        status = {"ok": 0, "wrong": 0, "invalid": 0}
        screened = []
        rb = run_config(p, cublas, data, warmup=2, reps=10, min_reps=3, max_ms=40)
        best = rb.timing.ms if rb.ok else math.inf
        wrong_examples = []
        for c in per_problem[p]:
            cr = compiled.get((p.key(), c.id))
            if cr is not None and not cr.ok:
                status["invalid"] += 1
                continue
            r = run_config(p, c, data, warmup=0, reps=10, min_reps=3, max_ms=30,
                           stop_if_slower_than_ms=1.3 * best)
            status[r.status] = status.get(r.status, 0) + 1
            if r.status == "wrong" and len(wrong_examples) < 3:
                wrong_examples.append(f"{c.id}: {r.reason}")
            if r.ok:
                screened.append((r.timing.ms, c))
                best = min(best, r.timing.ms)
        screened.sort(key=lambda x: x[0])
        # each family's best screened config is a finalist too: the rounds compare families
        family_best = {}
        for _, c in screened:
            family_best.setdefault(c.family, c)
        finalists = list(dict.fromkeys([c for _, c in screened[:args.top]]
                                       + list(family_best.values()))) + [cublas]
        inp = data.inputs

        def caller(c):
            return lambda: solvers.launch(p, c, inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b,
                                          check=False)
        timed = interleaved({c.id: caller(c) for c in finalists}, rounds=args.rounds, warmup=1,
                            reps=30, max_ms=60)
        rounds = {cid: list(r.rounds_ms) for cid, r in timed.items()}
        med = {cid: r.ms for cid, r in timed.items()}
        triton_ids = [c.id for c in finalists if not c.is_vendor]
        best_id = min(triton_ids, key=lambda cid: med[cid]) if triton_ids else None
        tf = lambda ms: p.flops / (ms * 1e9)  # noqa: E731
        row = {
            "shape": f"{p.m}x{p.n}x{p.k}", "problem": p.key(),
            "cublas_ms": med["gemm.cublas"], "cublas_tflops": tf(med["gemm.cublas"]),
            "cublas_spread": (max(rounds["gemm.cublas"]) - min(rounds["gemm.cublas"])) / min(rounds["gemm.cublas"]),
            "best_config": best_id,
            "best_ms": med[best_id] if best_id else None,
            "best_tflops": tf(med[best_id]) if best_id else None,
            "best_spread": ((max(rounds[best_id]) - min(rounds[best_id])) / min(rounds[best_id])) if best_id else None,
            "ratio_vs_cublas": (med["gemm.cublas"] / med[best_id]) if best_id else None,
            "family_best": {f: {"config": c.id, "ms": med[c.id],
                                "vs_cublas": med["gemm.cublas"] / med[c.id]}
                            for f, c in family_best.items()},
            "configs": len(per_problem[p]), **{f"n_{k}": v for k, v in status.items()},
            "wrong_examples": wrong_examples,
            "finalists": {cid: {"median_ms": med[cid], "rounds_ms": rounds[cid]} for cid in rounds},
            "seconds": time.time() - ts,
        }
        rows.append(row)
        print(f"{row['shape']:>18s} cuBLAS {row['cublas_tflops']:7.1f} TF/s  best {row['best_tflops'] or 0:7.1f} "
              f"TF/s  x{row['ratio_vs_cublas'] or 0:.3f}  {best_id}  ok={status['ok']} "
              f"invalid={status['invalid']} wrong={status['wrong']}  ({row['seconds']:.0f} s)", flush=True)
        print("    by family: " + ", ".join(f"{f.split('.', 1)[1]} x{v['vs_cublas']:.3f}"
                                          for f, v in row["family_best"].items()), flush=True)
        del data
        torch.cuda.empty_cache()
    ratios = [r["ratio_vs_cublas"] for r in rows if r["ratio_vs_cublas"]]
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None
    result = {"provenance": prov, "args": vars(args), "compile": {
        "binaries": binaries_of(compiled), "failed": n_compile_fail, "wall_s": compile_wall,
        "processes": args.processes, "median_s_per_binary": statistics.median(compile_secs),
        "binaries_per_s": binaries_of(compiled) / compile_wall if compile_wall else None},
        "rows": rows, "geomean_ratio_vs_cublas": geo, "total_s": time.time() - t_start}
    name = f"space_vs_cublas_{args.dtype}_{args.layout}{args.name}"
    write_json(os.path.join(args.out, name + ".json"), result)
    lines = ["| shape (MxNxK) | cuBLAS TFLOP/s | best Triton TFLOP/s | best / cuBLAS | best config | "
             "spread (best, cuBLAS) | target |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        shape = tuple(int(x) for x in r["shape"].split("x"))
        tgt = TARGETS.get(shape)
        lines.append(f"| {r['shape']} | {r['cublas_tflops']:.1f} | {r['best_tflops'] or 0:.1f} | "
                     f"{r['ratio_vs_cublas'] or 0:.3f} | `{r['best_config']}` | "
                     f"{(r['best_spread'] or 0) * 100:.1f}%, {r['cublas_spread'] * 100:.1f}% | "
                     f"{'>= %.2f' % tgt if tgt else ''} |")
    lines.append(f"\nGeomean best / cuBLAS: {geo:.3f} (target >= 1.0)" if geo else "")
    with open(os.path.join(args.out, name + ".md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"total {time.time() - t_start:.0f} s; provenance {json.dumps(prov)}")


if __name__ == "__main__":
    main()
