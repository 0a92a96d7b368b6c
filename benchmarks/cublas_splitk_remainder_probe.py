"""Does cuBLAS drop the last K % splits terms of some split-K GEMMs? (GPU, ~2 minutes.)

``repack_lt_entries_probe.py`` (session 52) found the inaccurate long-K results tied to the
split count s of the cuBLASLt heuristic entry that runs them (torch.matmul runs the first: its
error equalled that entry's on all 14 problems): every inaccurate entry had floor(K / s) a
multiple of 64 and K not a multiple of s, and its error matched sqrt((K mod s) / K), the error
of leaving out the last K mod s terms of random data (22 x 16 x 32024 rr, s = 25: 24 terms,
0.027 predicted, 0.028 measured).

Part 1 (``--which``): for such a problem, which terms are missing? The residual of
torch.matmul against float64 is compared with the contribution of the last K mod s terms,
the first K mod s, and the last of each split.

Part 2 (rule): over random K for a few narrow outputs, the first entry's s, whether the rule
(K % s != 0 and (K // s) % 64 == 0) holds, and torch.matmul's relative error; the confusion
table of the rule against errors over 3x the bf16 rounding level. ``--dtype fp16``: the same
in fp16 (the guard checks both).

Part 3 (``--batched``): the problems part 2's rule named, and as many it passed, as a batch of
2 through torch.bmm: does the batched call (cuBLAS's strided-batched GEMM, which tilepick's
cuBLASLt binding does not describe) leave terms out too?

    PYTHONPATH=src python3 benchmarks/cublas_splitk_remainder_probe.py --out F.json
        [--dtype fp16] [--batched] [--skip-which]
"""

from __future__ import annotations

import argparse
import math
import random

import torch

from tilepick.data.io import write_json
from tilepick.problem import GemmProblem
from tilepick.provenance import collect
from tilepick.solvers import SOLVERS

OUTPUTS = [(1, 8), (8, 8), (16, 16), (22, 16), (64, 8), (128, 40), (736, 8), (9, 24)]


def first_split(p: GemmProblem) -> int:
    name, _ = SOLVERS["gemm.cublaslt"].entries(p)[0]
    return int(name.splitk)


def rule(k: int, s: int) -> bool:
    return s > 1 and k % s != 0 and (k // s) % 64 == 0


TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def operands(p: GemmProblem, seed: int):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = TORCH_DTYPES[p.dtype_token]
    a = torch.randn(p.m, p.k, device="cuda", generator=g).to(dt)
    b = torch.randn(p.k, p.n, device="cuda", generator=g).to(dt)
    if p.layout[0] == "c":
        a = a.t().contiguous().t()
    if p.layout[1] == "c":
        b = b.t().contiguous().t()
    return a, b


def rel(x, ref) -> float:
    return float((x.double() - ref).norm() / ref.norm())


def which_terms(p: GemmProblem) -> dict:
    """torch.matmul's result against float64, and against float64 without candidate terms."""
    s = first_split(p)
    a, b = operands(p, 0)
    a64, b64 = a.double(), b.double()
    ref = a64 @ b64
    out = torch.matmul(a, b)
    r = p.k % s
    per = p.k // s
    sets = {"none": [], "last_r": list(range(p.k - r, p.k)), "first_r": list(range(r)),
            "after_s_splits": list(range(s * per, p.k))}
    got = {"problem": p.key(), "splitk": s, "remainder": r, "k_per_split": per,
           "rule": rule(p.k, s), "error": rel(out, ref),
           "predicted_error_if_last_r_dropped": math.sqrt(r / p.k)}
    for name, idx in sets.items():
        if name == "none":
            continue
        i = torch.tensor(idx, device="cuda", dtype=torch.long)
        without = ref - a64[:, i] @ b64[i, :]
        got[f"error_vs_ref_without_{name}"] = rel(out, without)
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-output", type=int, default=40, help="random K per (M, N)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", default="bf16", choices=sorted(TORCH_DTYPES))
    ap.add_argument("--batched", action="store_true")
    ap.add_argument("--skip-which", action="store_true", help="leave part 1 out")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    which = []
    for key in () if args.skip_which else ("gemm.bf16.rr.m22.n16.k32024", "gemm.bf16.rr.m113.n40.k20488",
                "gemm.bf16.rr.m736.n8.k111240", "gemm.bf16.rc.m29.n8.k130600",
                "gemm.bf16.cc.m8.n8.k24200"):
        which.append(which_terms(GemmProblem.from_key(key)))
        print(which[-1], flush=True)
    rng = random.Random(args.seed)
    rows = []
    for m, n in OUTPUTS:
        for layout in ("rr", "rc"):
            ks = set()
            while len(ks) < args.per_output:
                ks.add(8 * rng.randint(8192 // 8, 262144 // 8))
            for k in sorted(ks):
                p = GemmProblem(m, n, k, dtype=args.dtype, layout=layout)
                s = first_split(p)
                a, b = operands(p, k)
                err = rel(torch.matmul(a, b), a.double() @ b.double())
                rows.append({"problem": p.key(), "splitk": s, "rule": rule(k, s),
                             "error": err, "predicted": math.sqrt((k % s) / k) if rule(k, s)
                             else None})
            print(m, n, layout, "rule hits", sum(r["rule"] for r in rows[-args.per_output:]),
                  flush=True)
    # 3x the rounding level of random data (bf16 0.0016, fp16 0.0002)
    level = {"bf16": 0.005, "fp16": 0.0006}[args.dtype]
    bad = lambda r: r["error"] > level  # noqa: E731
    table = {f"rule_{x}_bad_{y}": sum(1 for r in rows if r["rule"] == x and bad(r) == y)
             for x in (True, False) for y in (True, False)}
    print(table)
    for r in rows:
        if r["rule"] or bad(r):
            print(r)
    batched = []
    if args.batched:
        named = [r["problem"] for r in rows if r["rule"]]
        passed = [r["problem"] for r in rows if not r["rule"]][:len(named)]
        for key in named + passed:
            p = GemmProblem.from_key(key)
            a, b = operands(p, p.k)
            # each batch in the problem's layout (a column-major operand stays column-major)
            a2 = (torch.stack([a.t(), a.t()]).transpose(1, 2) if p.layout[0] == "c"
                  else torch.stack([a, a]))
            b2 = (torch.stack([b.t(), b.t()]).transpose(1, 2) if p.layout[1] == "c"
                  else torch.stack([b, b]))
            err = rel(torch.bmm(a2, b2), a2.double() @ b2.double())
            batched.append({"problem": key, "rule_at_batch_1": key in named, "error": err})
            print("batched", batched[-1], flush=True)
    if args.out:
        write_json(args.out, {"provenance": collect(), "args": vars(args), "which_terms": which,
                              "rows": rows, "confusion": table, "batched": batched})


if __name__ == "__main__":
    main()
