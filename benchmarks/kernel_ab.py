"""Does a kernel edit change its speed? The edited kernel against an older copy of it.

A kernel edit retires every measured row of that kernel unless its speed is unchanged; this
times both versions of the pointer kernel (``--kernel ptr``) or the GEMV (``--kernel gemv``)
on the same launches (grid, arguments and constexprs from today's solver; the older copy gets
``extra`` constexprs, e.g. the split count the pointer kernel took as a constexpr before, and
loses ``--drop-constexprs`` it did not know, e.g. the GEMV's BLOCK_M) and the same split-K
reduction, in interleaved rounds of ``triton.testing.do_bench`` medians (L2 flushed), and
checks both outputs against a float64 product. The contenders are each family's best configs
on problems of a measured dataset where that family comes within 10% of the problem's best.
On the GPU:

    git show REV:src/tilepick/kernels/gemm_ptr.py > work/ab/gemm_ptr_old.py   # (not tracked)
    PYTHONPATH=src python3 benchmarks/kernel_ab.py --old work/ab/gemm_ptr_old.py \
        --extra-split-constexpr SPLIT_K --data data/gemm/bf16/h200/validation --out FILE
    git show REV:src/tilepick/kernels/gemm_gemv.py > work/ab/gemm_gemv_old.py
    PYTHONPATH=src python3 benchmarks/kernel_ab.py --kernel gemv --old work/ab/gemm_gemv_old.py \
        --extra-split-constexpr '' --drop-constexprs BLOCK_M,EVEN_M \
        --data data/gemm/bf16/h200/train_gemv --out FILE
    # session 28: the GEMV took C's column stride as a new last run-time argument
    PYTHONPATH=src python3 benchmarks/kernel_ab.py --kernel gemv --old work/ab/gemm_gemv_old.py \
        --extra-split-constexpr '' --drop-last-args 1 --data data/gemm/bf16/h200/train_gemv
    # session 35: C stored without the VEC_C hint (pointer kernel and one-launch split-K)
    git show f196813:src/tilepick/kernels/gemm_ptr.py > work/ab/gemm_ptr_old.py
    PYTHONPATH=src python3 benchmarks/kernel_ab.py --old work/ab/gemm_ptr_old.py \
        --extra-split-constexpr '' --old-vec-c --data data/gemm/bf16/h200/validation
    PYTHONPATH=src python3 benchmarks/kernel_ab.py --kernel splitk_fused \
        --old work/ab/gemm_ptr_old.py --extra-split-constexpr '' --old-vec-c
"""

import argparse
import importlib
import importlib.util
import json
import statistics
import sys


# --kernel -> (today's module, the kernel's name in it and in the older copy, the families
# that launch it)
KERNELS = {"ptr": ("tilepick.kernels.gemm_ptr", "gemm_ptr_kernel",
                   ("gemm.ptr", "gemm.splitk", "gemm.splitk_atomic")),
           "splitk_fused": ("tilepick.kernels.gemm_ptr", "gemm_splitk_fused_kernel",
                            ("gemm.splitk_fused",)),
           "gemv": ("tilepick.kernels.gemm_gemv", "gemv_kernel", ("gemm.gemv",))}


def load_kernel(path, name):
    spec = importlib.util.spec_from_file_location("kernel_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kernel_old"] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def contenders(data, dtype, per_family, families):
    from tilepick.model.dataset import load
    from tilepick.problem import GemmProblem
    from tilepick.config import KernelConfig

    ds = load([data], dtype, "h200", within_pass=True)
    f = ds.frame.assign(tflops=ds.tflops)
    best = f.groupby("problem_key")["tflops"].transform("max")
    f = f[(f["tflops"] >= 0.9 * best) & f["family"].isin(families)]
    out = []
    for fam, part in f.groupby("family"):
        top = part.sort_values("tflops", ascending=False).drop_duplicates("problem_key")
        top = top.sort_values("problem_key").head(per_family)
        out += [(GemmProblem.from_key(k), KernelConfig.from_id(c))
                for k, c in zip(top["problem_key"], top["config_id"])]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", choices=sorted(KERNELS), default="ptr")
    ap.add_argument("--old", required=True, help="the older kernel module (gemm_ptr.py ...)")
    ap.add_argument("--extra-split-constexpr", default="SPLIT_K",
                    help="constexpr the older kernel took the split count as ('' for none)")
    ap.add_argument("--drop-constexprs", default="",
                    help="comma-separated constexprs today's kernel has and the older lacks")
    ap.add_argument("--drop-last-args", type=int, default=0,
                    help="run-time arguments today's kernel takes last and the older lacks")
    ap.add_argument("--old-vec-c", action="store_true",
                    help="give the older kernel the C vector hint (VEC_C) it took before "
                         "session 35: 16 bytes' worth of elements where C allowed it, else 1")
    ap.add_argument("--data", default="data/gemm/bf16/h200/validation")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--per-family", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import torch
    import triton.testing

    from tilepick import solvers
    from tilepick.kernels.gemm_ptr import splitk_reduce_kernel
    from tilepick.data.io import write_json
    from tilepick.provenance import collect
    from tilepick.solvers.triton_gemm import _as3d
    from tilepick.tensors import make_inputs, reference

    module, kernel_name, families = KERNELS[args.kernel]
    new_kernel = getattr(importlib.import_module(module), kernel_name)
    old_kernel = load_kernel(args.old, kernel_name)
    pairs = contenders(args.data, args.dtype, args.per_family, families)
    runs = []
    for p, c in pairs:
        solver = solvers.SOLVERS[c.family]
        inp = make_inputs(p, "cuda")
        a, b, out = _as3d(inp.a), _as3d(inp.b), _as3d(inp.out)
        if args.kernel == "splitk_fused":   # its own arguments (the counters): as it launches
            [(_, grid, full_args, kw)] = solver.calls(p, c, a, b, out, inp.scale_a,
                                                      inp.scale_b)
            sargs, reduce = full_args, None
        elif args.kernel == "ptr":
            (grid, sargs, kw), reduce = solver._static(p, c, a, b, out, inp.scale_a is not None)
        else:
            grid, (a, b, out), sargs, kw = solver._args(p, c, a, b, out)
            reduce = None
        old_kw = {k: v for k, v in kw.items() if k not in args.drop_constexprs.split(",")}
        if args.extra_split_constexpr:
            old_kw[args.extra_split_constexpr] = c.split_k
        if args.old_vec_c:
            it = p.dtype.out_dtype.itemsize
            old_kw["VEC_C"] = 16 // it if p.operand_align("c") == 16 else 1

        def make(kernel, kwargs, solver=solver, p=p, c=c, grid=grid, sargs=sargs, reduce=reduce,
                 inp=inp, a=a, b=b, out=out):
            def run():
                if args.kernel == "splitk_fused":
                    kernel[grid](*sargs, **kwargs)
                    return
                if args.kernel == "gemv":
                    kernel[grid](a, b, out, inp.scale_a, inp.scale_b, *sargs, **kwargs)
                    return
                ws = solver._workspace(p, c, a.device)
                kernel[grid](a, b, out, ws, inp.scale_a, inp.scale_b, *sargs, **kwargs)
                if reduce is not None:
                    rgrid, rargs, rkw = reduce
                    splitk_reduce_kernel[rgrid](ws, out, inp.scale_a, inp.scale_b, *rargs, **rkw)
            return run

        fns = {"new": make(new_kernel, kw),
               "old": make(old_kernel, old_kw,
                           sargs=sargs[:len(sargs) - args.drop_last_args])}
        ref = reference(p, inp)
        errs = {}
        for name, fn in fns.items():
            out.zero_()
            fn()
            torch.cuda.synchronize()
            errs[name] = float(((inp.out.double() - ref).abs().max() / ref.abs().max()).item())
        runs.append({"problem": p.key(), "config": c.id, "fns": fns, "errors": errs,
                     "ms": {"new": [], "old": []}})
    for r in range(args.rounds):
        for run in runs:
            order = ("new", "old") if r % 2 == 0 else ("old", "new")
            for name in order:
                run["ms"][name].append(triton.testing.do_bench(run["fns"][name], warmup=5,
                                                               rep=20))
    rows = []
    for run in runs:
        new, old = statistics.median(run["ms"]["new"]), statistics.median(run["ms"]["old"])
        spread = max((max(v) - min(v)) / min(v) for v in run["ms"].values())
        rows.append({"problem": run["problem"], "config": run["config"], "new_ms": new,
                     "old_ms": old, "new_over_old": new / old, "round_spread": spread,
                     "errors": run["errors"]})
        print(f"{run['problem']:40s} {run['config']:42s} new/old {new / old:.4f} "
              f"(spread {spread:.3f}) err {run['errors']}", flush=True)
    summary = {}
    for fam in families:
        rs = [r["new_over_old"] for r in rows if r["config"].startswith(fam + ".")]
        if rs:
            summary[fam] = {"pairs": len(rs), "median": statistics.median(rs),
                            "min": min(rs), "max": max(rs)}
    result = {"provenance": collect(), "old": args.old, "data": args.data,
              "rounds": args.rounds, "summary": summary, "rows": rows}
    print(json.dumps(summary, indent=1))
    write_json(args.out, result)


if __name__ == "__main__":
    main()
