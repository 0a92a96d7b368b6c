"""tilepick.matmul on tensors of a GPU that is not the current one (needs 2 GPUs; run through
the device tool on a two-GPU machine).

Why: Triton and cuBLASLt launch on the *current* CUDA device, while torch's own ops follow
their tensors; a model-parallel program that keeps the current device at 0 and calls
``tilepick.matmul`` on tensors of cuda:1 must get the product computed on cuda:1, with no
candidate recorded as failing and the current device unchanged.

For each find mode (heuristic, hybrid), on problems whose picks span the families (pointer,
TMA, split-K, GEMV, cuBLAS, a cuBLASLt entry), with a scratch user db: the product on cuda:1
while cuda:0 is current (a fresh call, the prepared launch of a repeated one, ``out=``, and
``Dispatcher.run`` called directly)
against float64, then the current device, the dispatcher's fallbacks and the db's invalid
records. Each mode runs in a subprocess of its own, so that a kernel that faults the CUDA
context is reported instead of ending the check. Exits 1 on any failure.

    PYTHONPATH=src python benchmarks/multi_gpu_check.py [--modes heuristic,hybrid] [--out DIR]
"""

import argparse
import json
import os
import subprocess
import sys

# (m, n, k, layout): the session-44 suite run's heuristic picks on them: pointer, TMA,
# cuBLASLt entry, cuBLAS, split-K fused, GEMV
PROBLEMS = [(16, 10240, 8192, "rc"), (128, 57344, 8192, "rr"), (1024, 28672, 4096, "rc"),
            (16, 4096, 4096, "rr"), (16, 4096, 14336, "rc"), (1, 6144, 4096, "rc"),
            (4097, 4, 1023, "rr")]


def one_mode(mode: str) -> dict:
    import tempfile

    import torch

    import tilepick
    from tilepick.dispatch import Dispatcher, PerfDb
    from tilepick.problem import GemmProblem

    failures, picks, checks = [], {}, 0

    def check(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            failures.append(what)

    torch.cuda.set_device(0)
    dev = torch.device("cuda", 1)
    with tempfile.TemporaryDirectory() as tmp:
        db = PerfDb(os.path.join(tmp, "user.sqlite"))
        d = Dispatcher(mode=mode, user_db=db)
        for m, n, k, layout in PROBLEMS:
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            b = torch.randn(k, n, device=dev, dtype=torch.bfloat16) if layout == "rr" \
                else torch.randn(n, k, device=dev, dtype=torch.bfloat16).t()
            ref = a.double() @ b.double()
            tol = 2e-2 * ref.abs().max().item() + 5e-2
            key = f"{layout} {m}x{n}x{k}"
            for rep in range(2):
                y = tilepick.matmul(a, b, dispatcher=d)
                torch.cuda.synchronize(dev)
                check(y.device == dev and (y.double() - ref).abs().max().item() <= tol,
                      f"{mode} {key} call {rep}")
            out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
            tilepick.matmul(a, b, out=out, dispatcher=d)
            torch.cuda.synchronize(dev)
            check((out.double() - ref).abs().max().item() <= tol, f"{mode} {key} out=")
            out2 = torch.empty(m, n, device=dev, dtype=torch.bfloat16)   # Dispatcher.run itself
            d.run(GemmProblem.from_tensors(a, b, out2), a, b, out2)
            torch.cuda.synchronize(dev)
            check((out2.double() - ref).abs().max().item() <= tol, f"{mode} {key} Dispatcher.run")
            check(torch.cuda.current_device() == 0, f"{mode} {key}: current device changed")
            p = GemmProblem.from_tensors(a, b)
            picks[key] = d.cache[p].config_id if p in d.cache else None
            rec = db.lookup(d.env, p.key())
            check(rec is None or not rec.invalid, f"{mode} {key}: invalid records "
                  f"{sorted(rec.invalid) if rec else ''}")
        check(d.stats["fallbacks"] == 0, f"{mode}: fallbacks {d.stats['fallbacks']}")
    return {"mode": mode, "checks": checks, "failures": failures, "picks": picks}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--modes", default="heuristic,hybrid")
    ap.add_argument("--mode", default=None, help=argparse.SUPPRESS)   # the subprocess's
    args = ap.parse_args()
    if args.mode:
        print(json.dumps(one_mode(args.mode)), flush=True)
        return
    import torch

    from tilepick.data.io import write_json
    from tilepick.provenance import collect

    assert torch.cuda.device_count() >= 2, "needs two GPUs"
    results = []
    for mode in args.modes.split(","):
        r = subprocess.run([sys.executable, __file__, "--mode", mode], capture_output=True,
                           text=True, timeout=600)
        try:
            res = json.loads(r.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            res = {"mode": mode, "checks": 0, "failures": [f"{mode}: the process ended "
                                                           f"(rc {r.returncode}): "
                                                           f"{r.stderr[-1500:]}"]}
        print(json.dumps(res), flush=True)
        results.append(res)
    summary = {"provenance": collect(), "gpus": torch.cuda.device_count(), "results": results}
    if args.out:   # (write_json makes the folder: a bare $OUT/sub crashed session 45's run)
        write_json(os.path.join(args.out, "multi_gpu_check.json"), summary)
    sys.exit(1 if any(r["failures"] for r in results) else 0)


if __name__ == "__main__":
    main()
