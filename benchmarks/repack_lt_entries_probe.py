"""Which cuBLAS algorithms make `gemm.cublas_repack` inaccurate on long-K padded problems?
(GPU, ~1 minute.)

``repack_accuracy_probe.py`` (session 52) found the repack's error unchanged with an fp32 C
(0.0278 on rr 22 x 13 x 32020 either way): the accumulation itself is off, not C's rounding.
Here each padded problem (the aligned shape cuBLAS is given, fresh inputs) is run through
torch.matmul and through every cuBLASLt heuristic entry for it (split-K, reduction scheme and
tile in each entry's name, ``LtAlgo``); the relative error of each against float64 is printed.

    PYTHONPATH=src python3 benchmarks/repack_lt_entries_probe.py --out F.json
"""

from __future__ import annotations

import argparse

from tilepick.bench.runner import ProblemInputs, run_config
from tilepick.config import KernelConfig
from tilepick.data.io import write_json
from tilepick.problem import GemmProblem
from tilepick.provenance import collect
from tilepick.solvers import SOLVERS, repack

PROBLEMS = [  # the worst repack results of the bf16 data, then accurate controls
    "gemm.bf16.rr.m22.n13.k32020", "gemm.bf16.cc.m1.n2.k24196", "gemm.bf16.rc.m29.n5.k130597",
    "gemm.bf16.rc.m2.n22.k69137", "gemm.bf16.rr.m20.n13.k92946", "gemm.bf16.rr.m113.n38.k20484",
    "gemm.bf16.cr.m15.n12.k101130", "gemm.bf16.rr.m736.n1.k111239",
    "gemm.bf16.rr.m9.n18.k38402", "gemm.bf16.rr.m2104.n2.k121349",
    "gemm.bf16.rr.m16.n193.k130045", "gemm.bf16.cc.m8.n26.k101008",
    "gemm.bf16.rr.m1024.n1.k100000", "gemm.bf16.rc.m7.n45.k26110"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lt = SOLVERS["gemm.cublaslt"]
    rows = []
    for key in PROBLEMS:
        p = GemmProblem.from_key(key)
        q = repack.padded_problem(p)
        aligned = GemmProblem(q.m, q.n, q.k, q.batch, q.dtype, q.layout)   # packed, fresh
        data = ProblemInputs.make(aligned, "cuda", seed=0)
        row = {"problem": key, "padded": aligned.key(),
               "torch.matmul": run_config(aligned, "gemm.cublas", data, timed=False).rel_error,
               "entries": []}
        import torch

        flag = torch.backends.cuda.matmul
        flag.allow_bf16_reduced_precision_reduction = False
        row["torch.matmul_no_reduced_precision_reduction"] = run_config(
            aligned, "gemm.cublas", data, timed=False).rel_error
        flag.allow_bf16_reduced_precision_reduction = True
        row["preferred_blas_library"] = str(torch.backends.cuda.preferred_blas_library())
        try:
            entries = lt.entries(aligned)
        except Exception as exc:  # noqa: BLE001 - recorded, the next problem goes on
            row["entries_error"] = f"{type(exc).__name__}: {exc}"
            entries = []
        for name, info in entries:
            cfg = KernelConfig("gemm.cublaslt", entry=name.name)
            r = run_config(aligned, cfg, data, timed=False)
            row["entries"].append({"entry": name.name, "rank": info["rank"],
                                   "splitk": name.splitk, "reduction": name.reduction,
                                   "error": r.rel_error, "status": r.status})
        rows.append(row)
        print(key, aligned.key(), "torch.matmul", round(row["torch.matmul"], 5), "flag off",
              round(row["torch.matmul_no_reduced_precision_reduction"], 5),
              row["preferred_blas_library"], flush=True)
        for e in row["entries"]:
            print("   ", e["rank"], e["entry"], e["status"],
                  None if e["error"] is None else round(e["error"], 5), flush=True)
    if args.out:
        write_json(args.out, {"provenance": collect(), "rows": rows})


if __name__ == "__main__":
    main()
