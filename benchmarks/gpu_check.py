"""GPU correctness check of every kernel family (run through the device tool).

Runs a sample of valid configs of every family on shapes that stress edges (M=1, N=1, K=1,
primes, unaligned leading dimensions, batch > 1, all four layouts) in bf16, fp16, fp8 e4m3 and
fp32/tf32, each against a float64 reference of the same inputs. Exits 1 on any wrong result.
Compile failures are reported (they make a config invalid for that problem) but do not fail.
``--bound`` also checks, for every config that passed, the dispatcher's prepared launch
(``solvers.bind``, prepared on the first inputs) on two more sets of inputs of the same layout
(the second call takes the direct launch path of ``solvers.direct_launch``).

    PYTHONPATH=src python benchmarks/gpu_check.py [--per-family 3] [--bound] [--out DIR]
"""

import argparse
import os
import random
import sys
from collections import Counter

from tilepick.problem import GemmProblem
from tilepick.data.io import write_json

SHAPES = [(1, 4096, 4096), (128, 512, 256), (257, 129, 67), (97, 1, 512), (64, 96, 1),
          (1000, 1000, 1000), (4097, 4095, 1023), (512, 768, 384),
          (2000, 3008, 1008),   # more tiles than SMs (persistent programs loop), partial edges
          (3, 8191, 999), (4, 1000, 1024),   # decode steps (gemm.gemv): ragged N, odd K
          (13, 2049, 1030), (16, 512, 4096),   # its row blocks: ragged M, full blocks
          (4097, 4, 1023), (300, 3, 4096), (8192, 2, 520)]   # narrow outputs (gemm.gemv_t)
LAYOUTS = ["rr", "rc", "cr", "cc"]


def problems():
    for dtype in ("bf16", "fp16", "fp8e4m3", "fp32"):
        for i, (m, n, k) in enumerate(SHAPES):
            for layout in LAYOUTS:
                yield GemmProblem(m, n, k, dtype=dtype, layout=layout)
        yield GemmProblem(256, 384, 512, batch=3, dtype=dtype, layout="rc")
        yield GemmProblem(100, 200, 136, batch=2, dtype=dtype, layout="cr")
        yield GemmProblem(496, 1008, 256, batch=3, dtype=dtype, layout="cc")
        yield GemmProblem(2, 1000, 520, batch=3, dtype=dtype, layout="rc")
        # x @ W decode steps in batches (gemm.gemv_n_splitk): ragged N and K, both layouts
        for layout in ("rr", "cr"):
            yield GemmProblem(1, 8190, 999, batch=2, dtype=dtype, layout=layout)
    yield GemmProblem(512, 512, 512, dtype="fp32", tf32=True)
    yield GemmProblem(256, 128, 512, dtype="fp32", tf32=True, layout="rc")
    yield GemmProblem(300, 200, 136, dtype="bf16", lda=160, ldb=256, ldc=208)


def check_bound(p, c, first, seed):
    """The launch prepared on ``first``'s tensors, run on fresh tensors of the same layout."""
    from tilepick import solvers
    from tilepick.bench.runner import ProblemInputs
    from tilepick.tensors import tolerance

    f = first.inputs
    try:
        run = solvers.bind(p, c, f.a, f.b, f.out, f.scale_a, f.scale_b)
        err = 0.0
        # the first call goes through Triton's launch, the second through the compiled
        # kernel's launcher (solvers.direct_launch): both on fresh inputs
        for s in (seed, seed + 1000):
            data = ProblemInputs.make(p, f.a.device.type, seed=s)
            i = data.inputs
            run(i.a, i.b, i.out, i.scale_a, i.scale_b)
            err = max(err, data.ref.error(i.out))
    except Exception as exc:  # noqa: BLE001 - reported per config
        return "wrong", None, f"{type(exc).__name__}: {exc}"[:300]
    ok = err <= tolerance(p)
    return ("ok" if ok else "wrong"), err, "" if ok else f"rel. error {err:.3g}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-family", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--families", default=None, help="comma-separated families (default: all)")
    ap.add_argument("--bound", action="store_true",
                    help="also check solvers.bind's prepared launch on a second set of inputs")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()

    from tilepick import solvers
    from tilepick.bench.compile_pool import compile_all
    from tilepick.solvers import direct_launch
    from tilepick.bench.runner import ProblemInputs, run_config
    from tilepick.runtime import device_for_kernels

    rng = random.Random(args.seed)
    plan = []
    for p in problems():
        for fam, solver in solvers.SOLVERS.items():
            if args.families and fam not in args.families.split(","):
                continue
            cfgs = solver.configs(p)
            for c in rng.sample(cfgs, min(args.per_family, len(cfgs))):
                plan.append((p, c))
    compiled = compile_all(plan)
    counts, rows = Counter(), []
    wrong = []
    current = None
    for p, c in plan:
        if current is None or current.problem != p:
            current = ProblemInputs.make(p, device_for_kernels(), seed=args.seed)
        cr = compiled.get((p.key(), c.id))
        if cr is not None and not cr.ok:
            status, err, reason = "invalid", None, cr.reason
        else:
            r = run_config(p, c, current, timed=False)
            status, err, reason = r.status, r.rel_error, r.reason
        counts[(c.family, p.dtype_token, status)] += 1
        rows.append({"problem": p.key(), "config_id": c.id, "status": status, "rel_error": err,
                     "reason": reason})
        if status == "wrong":
            wrong.append(rows[-1])
        if args.bound and status == "ok":
            status, err, reason = check_bound(p, c, current, args.seed + 1)
            counts[("bound " + c.family, p.dtype_token, status)] += 1
            rows.append({"problem": p.key(), "config_id": c.id, "bound": True, "status": status,
                         "rel_error": err, "reason": reason})
            if status == "wrong":
                wrong.append(rows[-1])
    write_json(os.path.join(args.out, "gpu_check.json"), rows)
    print("family               dtype    ok  wrong invalid")
    for fam in [*solvers.SOLVERS, *("bound " + f for f in solvers.SOLVERS)]:
        for dt in ("bf16", "fp16", "fp8e4m3", "fp32", "tf32"):
            ok, bad, inv = (counts[(fam, dt, s)] for s in ("ok", "wrong", "invalid"))
            if ok + bad + inv:
                print(f"{fam:20s} {dt:8s} {ok:4d} {bad:5d} {inv:6d}")
    for r in rows:
        if r["status"] == "invalid":
            print("INVALID", r["problem"], r["config_id"], r["reason"][:160])
    if wrong:
        for r in wrong:
            print("WRONG", r["problem"], r["config_id"], r["reason"])
        print(f"FAILED: {len(wrong)} wrong results")
        sys.exit(1)
    print(f"PASSED: {sum(1 for r in rows if r['status'] == 'ok')} checks, no wrong result; "
          f"{direct_launch.STATS['direct']} bound launches took the direct path")


if __name__ == "__main__":
    main()
