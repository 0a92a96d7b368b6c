"""gemm.gemv with a column-major A: the transposed tile load (session 30) against the earlier
one-element loads, config by config (GPU).

Why: a column-major A's rows are adjacent, not K-contiguous; until session 30 the GEMV loaded
them one element at a time (the plan's VEC_A = 1, no A_T), while gemm.gemv_t's row-major B,
the same access pattern, gained a median 1.12x from loading its K x rows tile with one vector
per K index and transposing it in registers (BENCHMARKS "Session 29"). No dataset measures
layout cc, so this probe is the evidence that the new plans are right and what they are worth.

Per shape (``MxNxK``, layout cc): every valid gemm.gemv config whose block_m is M, once with
today's plan (``new.<config>``) and once with the earlier plan (``old.<config>``: A_T dropped,
VEC_A 1), each checked against a float64 reference (``probe_kit``), then all of them and cuBLAS
timed in interleaved rounds (L2 flushed). On the GPU:

    PYTHONPATH=src python3 benchmarks/gemv_cc_probe.py --out FILE.json [--shapes 4x4096x4096 ...]
"""

import argparse
import json
import statistics

from probe_kit import CheckedCandidates, best_by_prefix, best_line

SHAPES = ["2x4096x4096", "4x4096x4096", "2x8192x8192", "4x8192x8192", "2x28672x4096",
          "4x28672x4096"]


def earlier_solver():
    """gemm.gemv as it planned a column-major A before session 30: one element at a time."""
    from tilepick.solvers import SOLVERS
    from tilepick.solvers.triton_gemm import LaunchPlan

    base = type(SOLVERS["gemm.gemv"])

    class Earlier(base):
        def plan(self, problem, config):
            plan = base.plan(self, problem, config)
            kw = dict(plan.constexprs)
            if kw.pop("A_T", False):
                kw["VEC_A"] = 1
            return LaunchPlan(plan.grid, tuple(sorted(kw.items())))
    return Earlier()


def probe(spec: str, rounds: int, max_ms: float, device: str = "cuda") -> dict:
    from tilepick.solvers import SOLVERS

    cands = CheckedCandidates(spec + ":cc", device=device)
    p = cands.p
    new, old = SOLVERS["gemm.gemv"], earlier_solver()
    configs = [c for c in new.configs(p) if c.block_m == p.m]
    for c in configs:
        for name, solver in (("new", new), ("old", old)):
            out = cands.output()
            cands.add(f"{name}.{c.id}", lambda s=solver, c=c, o=out: s.launch(
                p, c, cands.inp.a, cands.inp.b, o), out)
    rows, _ = cands.time(rounds, max_ms)
    ms = {r["candidate"]: r["ms"] for r in rows}
    ratios = [ms[f"old.{c.id}"] / ms[f"new.{c.id}"] for c in configs
              if f"old.{c.id}" in ms and f"new.{c.id}" in ms]
    best = best_by_prefix(rows, ("new.", "old.", "cublas"))
    print(best_line(spec, best), f" old/new per config: median {statistics.median(ratios):.3f}",
          flush=True)
    return {"shape": spec, "layout": "cc", "configs": len(configs), "rows": rows,
            "notes": cands.notes, "old_over_new_per_config": ratios,
            "best_new_over_best_old": best["old."]["ms"] / best["new."]["ms"],
            "best_new_over_cublas": best["cublas"]["ms"] / best["new."]["ms"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", nargs="+", default=SHAPES)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-ms", type=float, default=30.0)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run in Triton's interpreter")
    args = ap.parse_args()
    from tilepick.provenance import collect

    results = [probe(s, args.rounds, args.max_ms, args.device) for s in args.shapes]
    with open(args.out, "w") as f:
        json.dump({"provenance": collect(), "args": vars(args), "shapes": results}, f, indent=1)


if __name__ == "__main__":
    main()
