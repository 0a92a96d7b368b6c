"""Re-time a measured dataset's contenders together, so that each problem's oracle and the
picks scored against it come from one timing regime.

Why: a sweep screens every config (a few calls each, the GPU often idle between them) and then
re-times its best few and cuBLAS in interleaved rounds (sustained load, clocks lower). For
kernels of milliseconds the two regimes differ by more than the differences being ranked: on
the H200 validation sets, for problems whose best config runs over 2 ms the best *screened*
(never re-timed) config read a median 2.4% and up to 7% faster than the best re-timed one.
Efficiency against such an oracle penalises every re-timed pick (cuBLAS is always re-timed)
and flatters a screened one.

A pass, per problem: the contenders (the configs re-timed before unless ``previous`` is off,
cuBLAS, every config within ``within`` of the problem's best TFLOP/s, at most ``top`` of them
best first, the model's first ``model_top`` measured configs and the untrained baselines'
candidates) are compiled
in a spawned pool, launched once each (one that fails is left out and counted), then timed
in ``rounds`` interleaved rounds by the sweep's protocol
(:func:`tilepick.bench.timing.interleaved`). Each becomes a row of a new sweep: the
old row's fields with the round medians' median as its time, ``retimed`` set, the round
spread, the 20/80% quantiles of the round medians, the round medians themselves
(``round_ms``, in round order: a problem's contenders share its rounds, so a pick and the
oracle can be compared round by round), the pass's provenance and date. The loader
prefers the latest re-timing of a (problem, config) (:func:`tilepick.model.dataset.clean`), so
the rows are added next to the dataset's chunks and the old ones stay as measured; and
``validate`` scores a problem that has a pass *inside* it (``within_pass``): every method's
pick and the oracle from the same rounds, the configs left out of the pass not counted.
"""

from __future__ import annotations

import datetime as _dt
import json
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tilepick import config as cfg
from tilepick import solvers
from tilepick.config import KernelConfig
from tilepick.data import io
from tilepick.data.schema import RETIME_PREFIX, STORED_NAMES
from tilepick.hardware import DEFAULT_ARCH, arch_from_name, arch_label
from tilepick.problem import GemmProblem

CUBLAS_ID = cfg.VENDOR_FAMILIES[0]


@dataclass
class RetimeOptions:
    within: float = 0.9          # contenders: configs at >= within x the problem's best TFLOP/s
    top: int = 32                # ... at most this many of them, best first
    model_top: int = 8           # plus the model's first k measured configs (0: none)
    previous: bool = True        # plus every config re-timed before (False: a narrower pass
                                 # of the near ones, for more rounds in the same GPU time)
    model_dir: str | None = None  # that model (None: the shipped one for the dtype)
    baselines: bool = True       # plus the untrained baselines' candidates (validate's)
    rounds: int = 5
    reps: int = 10               # repetitions per round (about max_ms of GPU time, at most reps)
    max_ms: float = 20.0
    processes: int | None = None
    seed: int = 0
    flush_every: int = 8
    progress: bool = True
    only: frozenset | None = None  # problem keys to re-time (None: every problem of the data)
    picks: dict | None = None    # {problem key: config ids} to add (measured ones): read_picks

    def __post_init__(self):
        if not 0.0 < self.within <= 1.0:
            raise ValueError(f"within={self.within}: a fraction of the best, in (0, 1]")
        if self.top < 1 or self.rounds < 1 or self.model_top < 0:
            raise ValueError("top and rounds must be >= 1, model_top >= 0")


def current_view(paths) -> pd.DataFrame:
    """The dataset as the model tools read it: valid, timed rows, one per (problem, config),
    repeats merged (re-timings preferred), with their TFLOP/s (interpreter timings only under
    the interpreter)."""
    from tilepick.bench.timing import interpreting
    from tilepick.model.dataset import clean, read_raw

    return clean(read_raw(paths), meaningful_only=not interpreting())


def contenders(view: pd.DataFrame, opts: RetimeOptions, ranker=None,
               others=None) -> dict[str, list[str]]:
    """{problem key: config ids to re-time together}; ``ranker(problem)`` -> config ids best
    first (the model's order), or None; ``others(problem)`` -> more config ids (the
    baselines' candidates, :func:`baseline_candidates`), or None."""
    out: dict[str, list[str]] = {}
    for key, g in view.groupby("problem_key", sort=True):
        g = g.sort_values("tflops", ascending=False, kind="stable")
        ids = list(g.loc[g["retimed"], "config_id"]) if opts.previous else []
        if (g["config_id"] == CUBLAS_ID).any():
            ids.append(CUBLAS_ID)
        near = g.loc[g["tflops"] >= opts.within * g["tflops"].iloc[0], "config_id"]
        ids.extend(near.iloc[:opts.top])
        measured, problem = set(g["config_id"]), GemmProblem.from_key(key)
        if ranker is not None and opts.model_top:
            ids.extend(first_measured(problem, measured, ranker, opts.model_top))
        if others is not None:
            ids.extend([cid for cid in others(problem) if cid in measured])
        ids = list(dict.fromkeys(ids))
        if len(ids) > 1:   # one candidate alone has nothing to be compared with
            out[key] = ids
    return out


def model_ranker(dtype: str, model_dir: str | None):
    """The shipped (or given) model's order of a problem's configs, for :func:`contenders`."""
    from tilepick.model import Predictor

    pred = Predictor.load(arch=DEFAULT_ARCH, dtype=dtype, model_dir=model_dir, strict=False)
    return lambda problem: [cid for cid, _, _ in pred.rank(problem)]


def first_measured(problem: GemmProblem, measured: set, ranker, n: int) -> list[str]:
    """The ranker's first ``n`` configs among those ``measured`` for the problem: what
    ``model_top`` adds to a pass's contenders, and what a picks file holds."""
    return [cid for cid in ranker(problem) if cid in measured][:n]


def write_picks(paths, out_file, model_dir: str | None = None, n: int = 8,
                only: frozenset | None = None) -> dict[str, list[str]]:
    """A model's first ``n`` measured configs per problem of ``paths``, as JSON, for a pass on
    a machine the model does not travel to (``data retime --picks``): the device's upload
    limit leaves no room for a variant model beside the repository's data."""
    view = current_view(paths)
    if only is not None:
        view = view[view["problem_key"].isin(only)]
    picks: dict[str, list[str]] = {}
    for dtype, part in view.groupby("dtype"):
        ranker = model_ranker(str(dtype), model_dir)
        for key, g in part.groupby("problem_key", sort=True):
            picks[key] = first_measured(GemmProblem.from_key(key), set(g["config_id"]), ranker, n)
    save_picks(picks, out_file)
    return picks


def save_picks(picks: dict[str, list[str]], path) -> None:
    """A picks file ({problem key: config ids}), gzip'd when ``path`` ends in ``.gz``."""
    with io.open_text(path, "w") as fh:
        fh.write(json.dumps(picks, indent=0, sort_keys=True))


def read_picks(path) -> dict[str, list[str]]:
    """The file :func:`write_picks` writes (or its gzip'd copy, ``.gz``); a clear error for
    anything else."""
    try:
        with io.open_text(path) as fh:
            picks = json.load(fh)
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a picks file ({exc})") from None
    if not isinstance(picks, dict) or not all(
            isinstance(v, list) and all(isinstance(c, str) for c in v) for v in picks.values()):
        raise ValueError(f"{path}: expected a JSON object of problem key -> list of config ids")
    return picks


def _with_picks(others, picks: dict | None):
    """``others`` (problem -> ids, or None) plus a picks file's ids for the problem."""
    if not picks:
        return others
    return lambda problem: (list(others(problem)) if others else []) + list(
        picks.get(problem.key(), []))


def baseline_candidates(arch: str):
    """The candidates of ``validate``'s untrained baselines (the Triton tutorial's valid
    configs, nvMatmulHeuristics' projected first ``nvmh.COUNT`` where the library is
    installed): scored inside a pass, each method's picks must be in it."""
    from tilepick.hardware import profile
    from tilepick.model import baselines, nvmh

    hw, use_nvmh = profile(arch), nvmh.unavailable_reason(arch) is None

    def ids(problem: GemmProblem) -> list[str]:
        out = list(baselines.tutorial_valid_ids(problem, hw))
        if use_nvmh:
            try:
                out.extend(nvmh.ranked_ids(problem, arch)[:nvmh.COUNT])
            except Exception:  # noqa: BLE001 - a problem the library refuses adds nothing
                pass
        return out
    return ids


def check_same_gpu(view: pd.DataFrame, gpu_name: str) -> None:
    """Refuse to re-time data measured on another kind of GPU: its rows would mix machines."""
    theirs = sorted({arch_label(str(n)) for n in view["gpu_name"].dropna().unique()})
    mine = arch_label(str(gpu_name))
    if theirs and theirs != [mine]:
        raise ValueError(f"the data was measured on {theirs}; this machine is {gpu_name!r} "
                         f"({mine}): re-time it on the same kind of GPU")


def _quantile(xs, q: float) -> float:
    return float(np.quantile(np.asarray(xs, dtype=float), q))


def retime(paths, out_dir, opts: RetimeOptions | None = None, limit: int | None = None) -> dict:
    """Re-time the contenders of every problem under ``paths`` into parts under ``out_dir``
    (resumable: problems already there are skipped); returns the summary (also written as
    ``retime-<id>.json``)."""
    from tqdm import tqdm

    from tilepick.bench.compile_pool import compile_all, prestart

    opts = opts or RetimeOptions()
    prestart()   # the compile workers' server imports torch and Triton while this plans
    out_dir = Path(out_dir)
    view = current_view(paths)
    if opts.only is not None:
        view = view[view["problem_key"].isin(opts.only)]
        if view.empty:
            raise ValueError("none of the given problems is in the data")
    rankers = {}
    if opts.model_top:
        for dtype in view["dtype"].unique():
            rankers[dtype] = model_ranker(str(dtype), opts.model_dir)
    names = view["gpu_name"].dropna().unique()
    arch = next((a for a in map(arch_from_name, map(str, names)) if a), DEFAULT_ARCH)
    others = _with_picks(baseline_candidates(arch) if opts.baselines else None, opts.picks)
    plan: dict[str, list[str]] = {}
    for dtype, part in view.groupby("dtype"):
        plan.update(contenders(part, opts, rankers.get(dtype), others))
    done = io.done_problems(out_dir)
    todo = [(k, ids) for k, ids in plan.items() if k not in done][:limit]
    t0 = time.time()
    # compile before CUDA is touched in this process (the pool forks nothing after CUDA)
    compiled = compile_all([(GemmProblem.from_key(k), KernelConfig.from_id(c))
                            for k, ids in todo for c in ids if c != CUBLAS_ID],
                           processes=opts.processes, progress=opts.progress)
    compile_s = time.time() - t0

    from tilepick.bench.timing import interpreting
    from tilepick.provenance import collect

    prov = {k: v for k, v in collect().items() if k not in ("python_version", "date")}
    check_same_gpu(view, prov["gpu_name"])
    rows_of = view.set_index(["problem_key", "config_id"])
    sweep_id = RETIME_PREFIX + uuid.uuid4().hex[:8]
    failed: Counter = Counter()
    shifts, oracle_moves = [], []
    buffer: list[dict] = []
    n_rows = 0
    t1 = time.time()
    bar = tqdm(total=len(todo), desc="retime", unit="problem", disable=not opts.progress,
               mininterval=2.0)
    interrupted = None
    try:
        for i, (key, ids) in enumerate(todo):
            n_rows += _retime_problem(key, ids, compiled, rows_of.loc[key], opts, prov,
                                      sweep_id, buffer, failed, shifts, oracle_moves)
            bar.update(1)
            if (i + 1) % opts.flush_every == 0:   # a killed pass loses at most these
                io.write_part(out_dir, buffer)
                buffer.clear()
    except KeyboardInterrupt as exc:   # Ctrl-C or SIGTERM (bench.signals): keep what is done
        interrupted = exc
    io.write_part(out_dir, buffer)
    bar.close()

    def stats(xs):
        if not xs:
            return {}
        return {"median": statistics.median(xs), "p10": _quantile(xs, 0.1),
                "p90": _quantile(xs, 0.9), "min": min(xs), "max": max(xs)}

    summary = {"retime_id": sweep_id, "paths": [str(p) for p in paths],
               "options": {k: (sorted(v) if isinstance(v, frozenset) else v)
                           for k, v in vars(opts).items() if k not in ("progress", "picks")},
               "picks_problems": len(opts.picks or {}),
               "problems_planned": len(plan), "skipped_done": len(set(plan) & done),
               "problems": len(todo), "rows": n_rows, "left_out": dict(failed),
               "compile_s": compile_s, "measure_s": time.time() - t1,
               "retimed_before_new_over_old": stats(shifts),
               "oracle_new_over_old": stats(oracle_moves), "provenance": prov,
               "meaningful": not interpreting()}
    out_dir.mkdir(parents=True, exist_ok=True)
    if interrupted is not None:
        summary["interrupted"] = True
    (out_dir / f"retime-{sweep_id}.json").write_text(json.dumps(summary, indent=1))
    if interrupted is not None:
        raise interrupted
    return summary


def _retime_problem(key, ids, compiled, group, opts, prov, sweep_id, buffer, failed,
                    shifts, oracle_moves) -> int:
    """Re-time one problem's contenders (``group``: its current rows, by config id); append
    their rows to ``buffer``; returns how many."""
    from tilepick.bench.runner import ProblemInputs
    from tilepick.bench.timing import interleaved, interpreting
    from tilepick.runtime import device_for_kernels

    problem = GemmProblem.from_key(key)
    inp = ProblemInputs.make(problem, device_for_kernels(), seed=opts.seed).inputs
    fns = {}
    for cid in ids:
        cr = compiled.get((key, cid))
        if cr is not None and not cr.ok:
            failed["compile"] += 1
            continue
        try:
            run = solvers.bind(problem, cid, inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b)
            run(inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b)
        except Exception:  # noqa: BLE001 - a config that no longer launches is left out
            failed["launch"] += 1
            continue
        fns[cid] = (lambda f=run: f(inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b))
    if len(fns) < 2:
        return 0
    date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    res = interleaved(fns, rounds=opts.rounds, warmup=1, reps=opts.reps, max_ms=opts.max_ms)
    before = float(group["tflops"].max())
    new_t = {}
    for cid, r in res.items():
        old = group.loc[cid]
        row = {c: old[c] for c in STORED_NAMES if c in old.index}   # tflops: derived on reading
        row.update(problem_key=key, config_id=cid, **prov, date=date, sweep_id=sweep_id,
                   time_ms=r.ms, retimed=True, retime_spread=r.spread,
                   time_p20_ms=_quantile(r.rounds_ms, 0.2),
                   time_p80_ms=_quantile(r.rounds_ms, 0.8), round_ms=list(r.rounds_ms),
                   reps=r.reps,
                   stopped_early=False, timing_meaningful=not interpreting())
        buffer.append(row)
        new_t[cid] = problem.flops / (r.ms * 1e9)
        if bool(old["retimed"]):
            shifts.append(new_t[cid] / float(old["tflops"]))
    others = group.loc[~group.index.isin(list(new_t)), "tflops"]
    after = max(max(new_t.values()), float(others.max()) if len(others) else 0.0)
    oracle_moves.append(after / before)
    return len(new_t)

