"""Why did `gemm.cublas_repack` fail the check on rr 22 x 13 x 32020 (session 46, error 0.028
against a tolerance of 0.02; plain cuBLAS 0.0016)? (GPU, seconds.)

Hypothesis: cuBLAS runs the padded problem (K and N padded to 16-byte multiples) with a split-K
whose partial sums torch lets it keep in bf16
(`torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction`, on by default), while the
unpadded problem gets an algorithm without that. Each problem is run through tilepick's two
cuBLAS families and through torch.matmul on the padded problem itself, with the switch on and
off; the relative error (the sweep's check, ‖out - ref‖ / ‖ref‖ against float64) is printed.

    PYTHONPATH=src python3 benchmarks/repack_precision_probe.py [--out FILE.json] [--device cpu]
"""

import argparse

import torch

from tilepick.bench.runner import ProblemInputs, run_config
from tilepick.data.io import write_json
from tilepick.provenance import collect
from tilepick.problem import GemmProblem
from tilepick.solvers import repack
from tilepick.tensors import tolerance

PROBLEMS = ["gemm.bf16.rr.m22.n13.k32020", "gemm.bf16.rr.m16.n257.k32768",
            "gemm.bf16.rr.m60.n1.k90716", "gemm.bf16.rr.m64.n7.k65521"]


def error(family: str, data: ProblemInputs) -> float | str:
    """The sweep's check (``run_config``) of one family: its relative error, or why it has
    none (a family that does not serve the problem, a launch that failed)."""
    result = run_config(data.problem, family, data, timed=False)
    return result.rel_error if result.rel_error is not None else result.reason


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the script itself")
    args = ap.parse_args()
    flag = torch.backends.cuda.matmul
    rows = []
    for key in PROBLEMS:
        p = GemmProblem.from_key(key)
        q = repack.padded_problem(p)
        # the same seeded inputs, and one float64 reference each, for every run below
        data, padded = (ProblemInputs.make(x, args.device, seed=0) for x in (p, q))
        for reduced in (True, False):
            flag.allow_bf16_reduced_precision_reduction = reduced
            row = {"problem": key, "padded": q.key(), "reduced_precision_reduction": reduced,
                   "tolerance": tolerance(p)}
            for fam in ("gemm.cublas", "gemm.cublas_repack"):
                row[fam] = error(fam, data)
            row["torch.matmul on the padded problem"] = error("gemm.cublas", padded)
            rows.append(row)
            print(row, flush=True)
    flag.allow_bf16_reduced_precision_reduction = True
    if args.out:
        write_json(args.out, {"provenance": collect(), "rows": rows})


if __name__ == "__main__":
    main()
