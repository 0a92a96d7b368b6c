"""Dispatcher benchmark on an LLM inference suite (GPU; one run per table).

Suite: Llama-3-8B and Llama-3-70B projections (QKV, O, gate/up, down) at M = 1, 16, 128,
1024, 4096, 8192 and a few odd M, as ``x @ W`` (layout rr) and ``x @ W.T`` (layout rc), bf16.
Methods, per problem:
- torch.matmul (cuBLAS);
- tilepick heuristic and hybrid find modes (each with a fresh perf-db; every candidate a mode
  could launch is compiled ahead in parallel, as ``tilepick warmup`` does, and that wall time
  is reported once; the tuning cost per mode is the wall time of its first call and the GPU
  time its benchmarks spent);
- the Triton tutorial's 8 configs, benchmarked per shape and the best kept (what
  ``triton.autotune`` does with that list), on tilepick's masked pointer kernel;
- ``torch.compile(mode="max-autotune-no-cudagraphs")`` (``--max-autotune-mode``; see
  ``MAX_AUTOTUNE_MODE`` for why not plain max-autotune) of a bare matmul on the first ``--max-autotune``
  problems: first-call time (tuning cost) and its steady-state time; then, for
  ``--max-autotune-budget-s`` more seconds, on the others (a second pass that re-times it
  against torch.matmul in interleaved rounds of its own).
Exhaustive mode (``--modes heuristic,hybrid,exhaustive``) fits a device call on a handful of
shapes only (``--shapes``; ~1000 candidates per shape, ~10-40 s each on an H200 after a
warm-up that compiles them all); the measured validation set is its broad comparison
(benchmarks/hybrid_vs_exhaustive.py replays it).
Steady state: every method's chosen kernel re-timed in interleaved rounds on the same inputs.
``--heuristic-model NAME=DIR`` (repeatable) adds a heuristic dispatcher on the model in DIR as
method ``heuristic:NAME``: two models' picks timed in the same rounds, the A/B comparison that
two runs cannot give (the kernels whose picks agree moved by ~0.2% between two calls).
``--lt-model NAME=DIR`` does the same for a cuBLASLt entry model (method ``heuristic:NAME``:
the shipped main model with the entry model in DIR).

    PYTHONPATH=src python benchmarks/dispatch_llm_suite.py --out $OUT [--models llama3-8b,llama3-70b]
        [--budget-s 420]
"""

import argparse
import json
import math
import os
import random
import statistics
import tempfile
import time

import torch

from tilepick import solvers
from tilepick.bench import shapes
from tilepick.bench.signals import interrupt_on_sigterm
from tilepick.bench import timing
from tilepick.bench.timing import interleaved, time_fn
from tilepick.config import KernelConfig
from tilepick.dispatch import Dispatcher, RealDevice
from tilepick.model.lt_ranker import LtRanker
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem
from tilepick.data.io import write_json

M_VALUES = (1, 16, 77, 128, 1000, 1024, 3000, 4096, 8192)
TUTORIAL = [(128, 256, 64, 8, 8, 3), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4),
            (128, 64, 32, 8, 4, 4), (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4),
            (64, 32, 32, 8, 2, 5), (32, 64, 32, 8, 2, 5)]


def suite(models, m_values=M_VALUES, dtype="bf16"):
    out = []
    for name in models:
        for proj in shapes.llm_projections(shapes.MODELS[name]):
            if proj.layer not in ("qkv", "attn_out", "gate_up", "down"):
                continue
            for m in m_values:
                for layout in ("rr", "rc"):
                    out.append(GemmProblem(m, proj.n, proj.k, dtype=dtype, layout=layout))
    return list(dict.fromkeys(out))


def inputs(p):
    from tilepick.tensors import make_inputs

    from tilepick.runtime import device_for_kernels

    return make_inputs(p, device_for_kernels(), seed=0)


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


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


def warm(problems, disps, top, processes):
    """Compile ahead, in parallel, what every mode could launch (``tilepick warmup``)."""
    from tilepick.dispatch.warmup import candidates, compile_pairs

    pairs = [(p, c) for p in problems for d in disps.values() for c in candidates(d, p, top)]
    pairs += [(p, KernelConfig("gemm.ptr", *t)) for p in problems for t in TUTORIAL]
    return compile_pairs(pairs, len(problems), processes).to_dict()


# Inductor's autotuning without its CUDA graphs: mode="max-autotune" also wraps the compiled
# matmul in a CUDA graph whose inputs, not being parameters or graph-internal tensors here,
# are copied into static buffers on every call (the whole weight: +0.65 ms on 1 x 57344 x
# 8192), which a model's matmul would not pay; the autotuning itself is the same.
MAX_AUTOTUNE_MODE = "max-autotune-no-cudagraphs"


def max_autotune(inp, rounds, mode=MAX_AUTOTUNE_MODE):
    """torch.compile(mode=...) of a bare matmul: first-call wall time, then the fn."""
    a, b = inp.a, inp.b
    torch._dynamo.reset()
    f = torch.compile(lambda x, y: x @ y, mode=mode, dynamic=False)
    t0 = time.time()
    f(a, b)
    sync()
    return time.time() - t0, (lambda: f(a, b))


def host_us(fns: dict, calls: int = 20) -> dict:
    """Each kernel's host time per call (us, median of ``calls`` back to back, synchronised
    after): a launch path whose host time nears its kernel's GPU time would make the rounds
    time the host. Why recorded: in session 42 the entry ``a66.t15`` read 44.4 us alone and
    45.8-46.0 us inside the full suite (torch.matmul 44.2-44.3 us in both)."""
    out = {}
    for name, fn in fns.items():
        ts = []
        for _ in range(calls):
            t0 = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t0) * 1e6)
        sync()
        out[name] = statistics.median(ts)
    return out


def summarize(rows):
    names = sorted({k for r in rows for k in r["ms"]})
    ratio = {n: [r["ms"]["torch"] / r["ms"][n] for r in rows if n in r["ms"]] for n in names}
    geo = {n: math.exp(statistics.mean(math.log(x) for x in v)) for n, v in ratio.items() if v}
    worst = {n: min(v) for n, v in ratio.items() if v}
    tuning = {n: sum(r["tuning_s"].get(n, 0.0) for r in rows) for n in names}
    by_layout = {lay: {n: math.exp(statistics.mean(math.log(r["ms"]["torch"] / r["ms"][n])
                                                   for r in rows if n in r["ms"]
                                                   and r["problem"].split(".")[2] == lay))
                       for n in names if any(n in r["ms"] and r["problem"].split(".")[2] == lay
                                             for r in rows)}
                 for lay in sorted({r["problem"].split(".")[2] for r in rows})}
    paired = {n: [p for p in (paired_speedup(r, n) for r in rows) if p is not None]
              for n in names}
    return {"problems": len(rows), "problems_per_method": {n: len(v) for n, v in ratio.items()},
            "geomean_speedup_vs_torch": geo,
            "worst_speedup_vs_torch": worst, "geomean_by_layout": by_layout,
            "paired_geomean_speedup_vs_torch": {
                n: math.exp(statistics.mean(math.log(x) for x in v)) for n, v in paired.items()
                if v},
            "paired_worst_speedup_vs_torch": {n: min(v) for n, v in paired.items() if v},
            "paired_rows_below_0.97": {n: sum(x < 0.97 for x in v) for n, v in paired.items()},
            "tuning_s_total": tuning,
            # late samples over the steady-state timing (rows before session 42 lack them)
            "timing_samples": {k: sum(r.get("timing_samples", {}).get(k, 0) for r in rows)
                               for k in ("samples", "late", "late_kept")}}


def paired_speedup(row, name):
    """torch.matmul's time over the method's, round by round (the two ran moments apart in
    each round), the median of those ratios; None for a row without round times. Why: the
    ratio of two medians takes each from rounds of its own, so a clock change between rounds
    moves one and not the other; within a round both see it."""
    rounds = row.get("rounds_ms", {})
    if name not in rounds or "torch" not in rounds:
        return None
    return statistics.median(t / m for t, m in zip(rounds["torch"], rounds[name]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="llama3-8b,llama3-70b")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--modes", default="heuristic,hybrid",
                    help="find modes to run (exhaustive benchmarks ~1000 candidates per shape: "
                         "budget a device call for a handful of shapes)")
    ap.add_argument("--m-values", default=",".join(map(str, M_VALUES)))
    ap.add_argument("--max-autotune", type=int, default=2,
                    help="run torch.compile max-autotune on this many problems (cold: ~1 min each)")
    ap.add_argument("--budget-s", type=float, default=1e9,
                    help="start no new problem after this many seconds (the tables say how many ran)")
    ap.add_argument("--max-autotune-mode", default=MAX_AUTOTUNE_MODE,
                    help="torch.compile mode (max-autotune times its CUDA graph's input copies too)")
    ap.add_argument("--max-autotune-budget-s", type=float, default=0.0,
                    help="after the suite, run max-autotune on the problems it skipped for this "
                         "many more seconds (first the first pass's problems, in order)")
    ap.add_argument("--heuristic-model", action="append", default=[], metavar="NAME=DIR",
                    help="also run heuristic mode on the model in DIR, as method "
                         "heuristic:NAME (repeatable)")
    ap.add_argument("--lt-model", action="append", default=[], metavar="NAME=DIR",
                    help="also run heuristic mode with the cuBLASLt entry model in DIR, as "
                         "method heuristic:NAME (repeatable)")
    ap.add_argument("--lt-off-twin", action="store_true",
                    help="add heuristic:no_lt, the heuristic mode without cuBLASLt's entries "
                         "(what it read before the gemm.cublaslt family), in the same rounds")
    ap.add_argument("--processes", type=int, default=None)
    ap.add_argument("--allow-no-model", action="store_true",
                    help="run even when the shipped model cannot be loaded (the heuristic then "
                         "measures the analytic fallback order, not the model)")
    ap.add_argument("--dtype", default="bf16", help="bf16 (the suite's) or fp16")
    ap.add_argument("--shapes", default=None,
                    help="MxNxK,... instead of the LLM suite (each of --layouts; for a quick check)")
    ap.add_argument("--layouts", default="rr,rc",
                    help="the layouts of --shapes (cc: a column-major x and W.T, which the "
                         "shipped models do not rank: the analytic order)")
    args = ap.parse_args()
    t_start = time.time()
    interrupt_on_sigterm()  # `timeout` sends SIGTERM: summarise what is done
    if args.shapes:
        problems = [GemmProblem(*map(int, s.split("x")), dtype=args.dtype, layout=lay)
                    for s in args.shapes.split(",") for lay in args.layouts.split(",")]
    else:
        problems = suite(args.models.split(","), tuple(int(x) for x in args.m_values.split(",")),
                         args.dtype)
    random.Random(0).shuffle(problems)  # a run cut by the budget still covers the suite evenly
    dbdir = tempfile.mkdtemp()
    disp = {mode: Dispatcher(mode=mode, device=RealDevice(), user_db=os.path.join(dbdir, f"{mode}.db"),
                             system_db=None)
            for mode in args.modes.split(",")}
    for flag, specs in (("--heuristic-model", args.heuristic_model),
                        ("--lt-model", args.lt_model)):
        for spec in specs:
            name, _, path = spec.partition("=")
            if not name or not path:
                raise SystemExit(f"{flag} wants NAME=DIR, got {spec!r}")
            model = ({"predictor": Predictor(path)} if flag == "--heuristic-model"
                     else {"lt_ranker": LtRanker.load(path)})
            disp[f"heuristic:{name}"] = Dispatcher(
                mode="heuristic", device=RealDevice(), **model,
                user_db=os.path.join(dbdir, f"heuristic-{name}.db"), system_db=None)
    if args.lt_off_twin:
        disp["heuristic:no_lt"] = Dispatcher(
            mode="heuristic", device=RealDevice(), lt_ranker=None,
            user_db=os.path.join(dbdir, "heuristic-no_lt.db"), system_db=None)
    missing = {p.dtype.value for p in problems
               if any(d.predictor(p.dtype.value) is None for d in disp.values())}
    if missing and not args.allow_no_model:
        # A 2026-11-23 run measured the analytic fallback for an hour's worth of budget because
        # lightgbm was not installed on the device: refuse instead of publishing such numbers.
        raise SystemExit(f"no usable model for {sorted(missing)} on this machine (is lightgbm "
                         "installed? see benchmarks/device_wheels.sh); --allow-no-model to run anyway")
    warm_report = warm(problems, disp, max(d.max_k for d in disp.values()), args.processes)
    print("warmup", json.dumps(warm_report)[:300], flush=True)
    rows = []
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "dispatch_llm_suite.jsonl"), "w")
    try:
        for i, p in enumerate(problems):
            if time.time() - t_start > args.budget_s:
                print(f"budget reached after {len(rows)} of {len(problems)} problems", flush=True)
                break
            inp = inputs(p)
            row = {"problem": p.key(), "tuning_s": {}, "choice": {}, "gpu_ms": {}, "duels": {}}
            for mode, d in disp.items():
                before, duels = d.device.gpu_ms_spent, d.stats["duels"]
                t0 = time.time()
                d.run(p, inp.a, inp.b, inp.out)
                sync()
                row["tuning_s"][mode] = time.time() - t0
                row["gpu_ms"][mode] = d.device.gpu_ms_spent - before
                row["duels"][mode] = d.stats["duels"] - duels   # Dispatcher._beaten_vendor
                row["choice"][mode] = d.cache[p].config_id
                row.setdefault("source", {})[mode] = d.cache[p].source
            row["choice"]["tutorial"], row["tuning_s"]["tutorial"] = tutorial_best(p, inp)
            row["choice"]["torch"] = "gemm.cublas"
            # time each distinct kernel once; methods that chose the same one share its time
            unique = sorted({cid for cid in row["choice"].values() if cid})
            fns = {cid: (lambda c=KernelConfig.from_id(cid): solvers.launch(
                p, c, inp.a, inp.b, inp.out, check=False)) for cid in unique}
            if i < args.max_autotune and torch.cuda.is_available():
                row["tuning_s"]["max_autotune"], fns["max_autotune"] = max_autotune(
                    inp, args.rounds, args.max_autotune_mode)
            stats0 = dict(timing.STATS)
            timed = interleaved(fns, rounds=args.rounds, warmup=1, reps=30, max_ms=40)
            # late samples: calls that reached the GPU after their start event (retaken; the
            # "late_kept" ones may read the host's time, not the kernel's)
            row["timing_samples"] = {k: timing.STATS[k] - stats0.get(k, 0)
                                     for k in ("samples", "late", "late_kept")}
            row["host_us"] = host_us({cid: fn for cid, fn in fns.items()
                                      if cid != "max_autotune"})  # per config id
            row["ms"] = {name: timed[cid].ms for name, cid in row["choice"].items() if cid}
            row["spread"] = {name: timed[cid].spread for name, cid in row["choice"].items() if cid}
            row["rounds_ms"] = {name: list(timed[cid].rounds_ms)
                                for name, cid in row["choice"].items() if cid}
            if "max_autotune" in timed:
                row["ms"]["max_autotune"] = timed["max_autotune"].ms
                row["spread"]["max_autotune"] = timed["max_autotune"].spread
            rows.append(row)
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(p.key(), {k: round(row["ms"]["torch"] / v, 3) for k, v in row["ms"].items()},
                  flush=True)
        # second pass: max-autotune on the problems the first pass did not give it, while the
        # budget lasts (each ~2-8 s cold), re-timed against torch.matmul in interleaved rounds
        for row, p in zip(rows, problems):
            if (args.max_autotune_budget_s <= 0 or "max_autotune" in row["ms"]
                    or time.time() - t_start > args.budget_s + args.max_autotune_budget_s
                    or not torch.cuda.is_available()):
                continue
            inp = inputs(p)
            tune_s, fn = max_autotune(inp, args.rounds, args.max_autotune_mode)
            timed = interleaved({"torch": (lambda: solvers.launch(
                p, KernelConfig.from_id("gemm.cublas"), inp.a, inp.b, inp.out, check=False)),
                "max_autotune": fn}, rounds=args.rounds, warmup=1, reps=30, max_ms=40)
            row["tuning_s"]["max_autotune"] = tune_s
            # its ratio to torch from this pass's own torch timing (same rounds), on the scale
            # of the row's first-pass torch time
            scale = row["ms"]["torch"] / timed["torch"].ms
            row["ms"]["max_autotune"] = timed["max_autotune"].ms * scale
            row["spread"]["max_autotune"] = timed["max_autotune"].spread
            row["max_autotune_pass"] = 2
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(p.key(), "max-autotune", round(timed["torch"].ms / timed["max_autotune"].ms, 3),
                  f"{tune_s:.1f} s", flush=True)
    except KeyboardInterrupt:
        print("interrupted: summarising the problems done", flush=True)
    from tilepick.provenance import collect

    # the rows once, final (the log above also holds the second pass's updates): the summary
    # points at them rather than repeating them (the repository's upload limit)
    log.close()
    with open(os.path.join(args.out, "dispatch_llm_suite.jsonl"), "w") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in rows)
    result = {"provenance": collect(), "args": vars(args), "suite_problems": len(problems),
              "warmup": warm_report, **summarize(rows),
              "rows_file": "dispatch_llm_suite.jsonl (one row a line)"}
    write_json(os.path.join(args.out, "dispatch_llm_suite.json"), result)
    print(json.dumps({k: v for k, v in result.items() if k != "provenance"}, indent=1))


if __name__ == "__main__":
    main()
