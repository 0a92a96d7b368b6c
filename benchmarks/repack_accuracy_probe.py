"""Does an fp32 product fix `gemm.cublas_repack`'s inaccurate long-K results, and what does it
cost? (GPU, ~2 minutes.)

The bf16 data holds 20 repack results 3-17x less accurate than plain cuBLAS on the same
problem (relative error up to 0.028 against float64, plain cuBLAS <= 0.0077 anywhere), all with
K >= 20,000 and most with small outputs. Session 46 showed the padded shape's own cuBLAS
algorithm does it (torch.matmul on the padded problem reads the same), with torch's
reduced-precision-reduction switch on or off (``repack_precision_probe.py``). A guess: a split-K
algorithm that rounds partial sums to C's type. Asking cuBLAS for an fp32 C
(``torch.bmm(..., out_dtype=torch.float32)``) and rounding once in the crop copy would avoid it
for the price of writing C in fp32.

For each problem: the relative error of plain cuBLAS, of the repack as it is, and of the repack
with an fp32 product (same seeded inputs, one float64 reference); then the two repack forms
timed in ``--rounds`` interleaved rounds (``time_fn``: L2 flushed, CUDA events, medians).

Problems: the data's repack results with an error over ``--bad`` (all), a seeded sample of the
other long-K small-output repack problems, and of larger-output ones (the cost of fp32 C).

Result (session 52, ``benchmarks/results/repack_accuracy_probe_s52_25ee3c5.json``): the fp32
product reads the same errors (0.0278 on rr 22 x 13 x 32020): the cause is elsewhere
(``cublas_splitk_remainder_probe.py``: cuBLAS's split-K leaves out the last K mod s terms).
That run used a solver option of commit 25ee3c5 (C cropped by ``kernels.pad_copy``), removed
after it; the variant lives here now and crops with torch's copy (the same rounding, so the same
errors; the crop's time differs).

    PYTHONPATH=src python3 benchmarks/repack_accuracy_probe.py --out F.json [--device cpu]
"""

from __future__ import annotations

import argparse
import glob
import statistics

import pandas as pd

from tilepick.bench.runner import ProblemInputs, run_config
from tilepick.bench.timing import time_fn
from tilepick.config import KernelConfig
from tilepick.data.io import write_json
from tilepick.problem import GemmProblem
from tilepick.provenance import collect
from tilepick.solvers import SOLVERS, repack

REPACK = "gemm.cublas_repack"


def fp32_product_run(p: GemmProblem):
    """The repack with cuBLAS writing an fp32 C (``torch.bmm(..., out_dtype=torch.float32)``),
    rounded once by torch's copy into C: the same padded copies of A and B as the solver's."""
    import torch

    q = repack.padded_problem(p)
    copy_a, copy_b, _ = repack.padded_copies(p, q)

    def run(a, b, out):
        a3, b3, c3 = (t.unsqueeze(0) if t.dim() == 2 else t for t in (a, b, out))
        if copy_a:
            a3 = repack.padded_copy(a3, q.m, q.k, p.a_row_major, True)
        if copy_b:
            b3 = repack.padded_copy(b3, q.k, q.n, p.b_row_major, True)
        prod = (torch.bmm(a3, b3, out_dtype=torch.float32) if a3.is_cuda
                else torch.bmm(a3.float(), b3.float()))
        c3.copy_(prod[:, :p.m, :p.n])
        return out
    return run


def pick_problems(data_glob: str, bad: float, sample: int, seed: int) -> dict[str, list[str]]:
    cols = ["problem_key", "m", "n", "k", "batch", "family", "rel_error"]
    df = pd.concat((pd.read_parquet(f, columns=cols) for f in sorted(glob.glob(data_glob))),
                   ignore_index=True)
    r = df[df.family == REPACK].drop_duplicates("problem_key").reset_index(drop=True)
    out = r.m * r.n * r.batch
    worse = r[r.rel_error > bad]
    rest = r[~r.problem_key.isin(worse.problem_key)]
    small = rest[(rest.k >= 16384) & (out <= 65536)]
    large = rest[(out > 65536) & (rest.k >= 1024)]
    pick = lambda d: sorted(d.sample(min(sample, len(d)), random_state=seed).problem_key)  # noqa: E731
    return {"worse": sorted(worse.problem_key), "long_k_small_out": pick(small),
            "large_out": pick(large)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/gemm/bf16/h200/*/*.parquet")
    ap.add_argument("--bad", type=float, default=0.004, help="repack errors over this: all")
    ap.add_argument("--sample", type=int, default=25, help="problems of each other group")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the script itself")
    ap.add_argument("--limit", type=int, default=None, help="first N problems of each group")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    groups = pick_problems(args.data, args.bad, args.sample, args.seed)
    config = KernelConfig.from_id(REPACK)
    solver = SOLVERS[REPACK]
    rows = []
    for group, keys in groups.items():
        for key in keys[:args.limit]:
            p = GemmProblem.from_key(key)
            data = ProblemInputs.make(p, args.device, seed=0)
            inp = data.inputs
            row = {"problem": key, "group": group,
                   "cublas_error": run_config(p, "gemm.cublas", data, timed=False).rel_error}
            calls = {}
            for wide in (False, True):
                run = (fp32_product_run(p) if wide
                       else solver.bind(p, config, inp.a, inp.b, inp.out))
                calls[wide] = lambda run=run: run(inp.a, inp.b, inp.out)
                inp.out.fill_(float("nan"))
                calls[wide]()
                row[f"error_fp32_{wide}"] = data.ref.error(inp.out)
            times = {False: [], True: []}
            for _ in range(args.rounds):
                for wide, call in calls.items():
                    times[wide].append(time_fn(call).ms)
            for wide, ts in times.items():
                row[f"ms_fp32_{wide}"] = statistics.median(ts)
                row[f"ms_fp32_{wide}_rounds"] = ts
            row["time_ratio"] = row["ms_fp32_True"] / row["ms_fp32_False"]
            rows.append(row)
            print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items()
                   if not k.endswith("_rounds")}, flush=True)
    out = pd.DataFrame(rows)
    summary = {}
    for group, d in out.groupby("group"):
        summary[group] = {"problems": len(d),
                          "error_max": {"cublas": d.cublas_error.max(),
                                        "repack": d.error_fp32_False.max(),
                                        "repack_fp32": d.error_fp32_True.max()},
                          "time_ratio_median": d.time_ratio.median(),
                          "time_ratio_max": d.time_ratio.max()}
    print(summary)
    if args.out:
        write_json(args.out, {"provenance": collect(), "args": vars(args), "summary": summary,
                              "rows": rows})


if __name__ == "__main__":
    main()
