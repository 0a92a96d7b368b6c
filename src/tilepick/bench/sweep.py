"""The sweep: measure (problem, config) pairs on the GPU into a dataset.

Order of work, and why:
1. pick the configs of every problem (all valid ones, or a seeded sample that keeps every
   family represented, plus a model's best-ranked ones if asked), skipping problems already
   in the output (resume);
2. compile everything in a spawned pool before the parent touches CUDA;
3. per problem: time cuBLAS, then check the configs against float64 and screen them, a chunk
   of configs per host synchronisation (:mod:`tilepick.bench.screen`: L2 flushed, event
   medians; a config clearly slower than the best so far stops early; ``order="model"``
   measures the model's likely winners first, so that bound is tight early);
4. re-time the best ``retime_top`` configs and cuBLAS in interleaved rounds and store those
   medians (a best-of-hundreds single timing is inflated: the winner's curse);
5. write the problem's rows as an atomic parquet part every ``flush_every`` problems;
6. noise report: re-measure the top 5 of a fraction of the problems later in the same run.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import random
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tilepick import config as cfg
from tilepick import solvers
from tilepick.bench import timing
from tilepick.bench.screen import ScreenSettings
from tilepick.config import KernelConfig
from tilepick.data import io
from tilepick.data.schema import config_fields, problem_fields
from tilepick.problem import GemmProblem

CUBLAS = KernelConfig(cfg.VENDOR_FAMILIES[0])
ORDERS = ("id", "model")
ALWAYS = frozenset(cfg.tutorial_ids("bf16") + cfg.tutorial_ids("fp8e4m3"))
# What a sweep measures unless ``families`` names others: every family the main ranker ranks.
# Not the cuBLASLt entries (NAMED_VENDOR_FAMILIES): their model learns from its own probes
# (benchmarks/cublaslt_probe.py) and a model's Dataset leaves their rows out, yet as vendor
# candidates they were measured on top of every sample: 11% of session 46's first sweep.
SWEPT_FAMILIES = tuple(f for f in solvers.SOLVERS if f not in cfg.NAMED_VENDOR_FAMILIES)


@dataclass
class SweepOptions:
    families: list[str] | None = None
    sample: int | None = None        # configs per problem (None = every valid config)
    pool: int | None = None          # distinct configs per family for the whole sweep: bounds
    #                                  the binaries to compile (None = the whole space)
    seed: int = 0
    # the pool's own seed (None: ``seed``). Why: with one seed every sweep drew the same pool,
    # and the training data never measured ~9 in 10 fused split-K configs (data PROVENANCE,
    # session 24); a campaign continuing a seeded problem list keeps ``seed`` and moves this
    pool_seed: int | None = None
    processes: int | None = None
    retime_top: int = 5
    rounds: int = 3
    # repetitions per re-timing round (about retime_max_ms of GPU time, at most retime_reps):
    # 20 / 40 ms until session 11, where re-timing took a fifth of a small-problem sweep
    retime_reps: int = 10
    retime_max_ms: float = 20.0
    noise_fraction: float = 0.1
    flush_every: int = 8
    flush_s: float = 20.0
    screen: ScreenSettings = field(default_factory=ScreenSettings)
    progress: bool = True
    model_top: int = 0               # also measure the model's this many best Triton configs
    model_dir: str | None = None     # that model (None: the shipped one for the dtype)
    order: str = "id"                # measuring order per problem: "id", or "model" (the
    #                                  model's ranking over the whole space, best first)
    # top-up: bring each problem to this many measured configs, drawing only configs not in
    # ``measured`` (a dataset's {problem key: config ids}); rows of configs already there
    # (cuBLAS, timed again as the stop bound's first reference) are not written
    top_up: int | None = None
    measured: dict = field(default_factory=dict)


@dataclass
class SweepSummary:
    sweep_id: str
    problems: int = 0
    skipped_done: int = 0
    rows: int = 0
    timed: int = 0
    invalid_by_reason: Counter = field(default_factory=Counter)
    compile_s: float = 0.0
    binaries: int = 0            # compiled kernels
    configs_compiled: int = 0    # configs x specialisation they serve (split counts share)
    measure_s: float = 0.0
    # where the measuring wall time goes (inputs, check = each config's first launch and its
    # comparison with float64, screen, retime); BENCHMARKS.md reads it against kernel time
    host_s: Counter = field(default_factory=Counter)
    # check launches: a sample (long kernels), the probe only, a probe that stopped its
    # config, or late (the GPU reached it before the host had submitted it: not used)
    check_samples: Counter = field(default_factory=Counter)
    # timing.STATS over the measuring: samples taken, late ones (retaken), late ones kept
    samples: Counter = field(default_factory=Counter)
    noise: dict = field(default_factory=dict)

    @property
    def configs_per_s(self) -> float:
        return self.timed / self.measure_s if self.measure_s else 0.0

    def to_dict(self) -> dict:
        return {"sweep_id": self.sweep_id, "problems": self.problems,
                "skipped_done": self.skipped_done, "rows": self.rows, "timed": self.timed,
                "invalid_by_reason": dict(self.invalid_by_reason.most_common()),
                "compile_s": self.compile_s, "binaries": self.binaries,
                "binaries_per_s": self.binaries / self.compile_s if self.compile_s else None,
                "configs_compiled": self.configs_compiled,
                "configs_compiled_per_s": (self.configs_compiled / self.compile_s
                                           if self.compile_s else None),
                "measure_s": self.measure_s, "timed_configs_per_s": self.configs_per_s,
                "host_s": {k: round(v, 3) for k, v in self.host_s.items()},
                "check_samples": dict(self.check_samples),
                "samples": dict(self.samples),
                "noise": self.noise}


def config_pool(per_family: int | None, seed: int) -> set[str] | None:
    """A seeded subset of each family's declared space (None: no restriction)."""
    if per_family is None:
        return None

    rng = random.Random(seed)
    pool: set[str] = set()
    for fam in cfg.SPACES:
        space = cfg.space(fam)
        pool.update(c.id for c in rng.sample(space, min(per_family, len(space))))
    return pool


def sample_configs(problem: GemmProblem, n: int | None, rng: random.Random,
                   families: list[str] | None = None,
                   pool: set[str] | None = None,
                   exclude: frozenset | set = frozenset()) -> list[KernelConfig]:
    """All valid configs but cuBLAS's (of the pool, if any; none of ``exclude``), or ``n``
    of them drawn so that every applicable family keeps at least its share (n / families, and
    at least one: with fewer than one config per family asked for, one per family is
    returned), the rest at random; the valid configs of the Triton tutorial (``ALWAYS``) and
    the other vendor candidates come on top of the ``n``. (cuBLAS itself is measured with
    every problem: :func:`_measure_problem`.) ``families`` None: :data:`SWEPT_FAMILIES`."""
    families = SWEPT_FAMILIES if families is None else families

    def always_measured(c: KernelConfig) -> bool:
        return c.id in ALWAYS or c.is_vendor

    cfgs = [c for c in solvers.applicable_configs(problem, families=families)
            if c != CUBLAS and c.id not in exclude
            and (pool is None or c.id in pool or always_measured(c))]
    # the Triton tutorial's configs (what triton.autotune users run) are always measured, on
    # top of the sample, so the evaluation's tutorial baseline has its data; a vendor
    # candidate is one config, measured wherever it applies
    always = [c for c in cfgs if always_measured(c)]
    if n is None or len(cfgs) <= n + len(always):
        return cfgs
    if n == 0:
        return always
    cfgs = [c for c in cfgs if not always_measured(c)]
    by_fam: dict[str, list[KernelConfig]] = {}
    for c in cfgs:
        by_fam.setdefault(c.family, []).append(c)
    share = max(1, n // len(by_fam))
    chosen: list[KernelConfig] = []
    for fam in sorted(by_fam):
        pool = by_fam[fam]
        chosen.extend(rng.sample(pool, min(share, len(pool))))
    taken = set(chosen)
    rest = [c for c in cfgs if c not in taken]
    chosen.extend(rng.sample(rest, max(0, min(n - len(chosen), len(rest)))))
    return sorted(chosen + always)


class ModelPicks:
    """The Triton configs a trained model ranks best for a problem: measured on top of the
    random sample (``--model-top``), they put into the data what the model believes, so its
    mistakes become training rows; cheap next to a random sample, so a sweep can afford more
    problems with fewer random configs each (density alone did not help the model:
    BENCHMARKS, "Does sampling density limit the model?"). Ranking runs on the CPU: no CUDA
    context before compilation."""

    def __init__(self, n: int, model_dir: str | None = None,
                 families: list[str] | None = None):
        self.n, self.model_dir, self.families = n, model_dir, families
        self._predictors: dict = {}

    def predictor(self, dtype: str, catalog: str | None = None):
        """The model for ``dtype``; ``catalog="space"`` ranks every config of the declared
        spaces (for the measuring order), not only those it saw in training."""
        from tilepick.hardware import DEFAULT_ARCH
        from tilepick.model import Predictor

        if (dtype, catalog) not in self._predictors:
            from tilepick.model.artifacts import ModelError

            pred = Predictor.load(arch=DEFAULT_ARCH, dtype=dtype, model_dir=self.model_dir,
                                  strict=False)
            if pred.dtype != dtype:
                raise ModelError(f"model {pred.model_dir} ranks {pred.dtype} problems; the "
                                 f"sweep has {dtype} ones")
            if catalog is not None:
                pred = Predictor(pred.model_dir, hw=pred.hw, strict=False, catalog=catalog)
            self._predictors[dtype, catalog] = pred
        return self._predictors[dtype, catalog]

    def order(self, problem: GemmProblem, configs: list[KernelConfig]) -> list[KernelConfig]:
        """``configs`` in the model's order over the whole space, best first (configs it does
        not rank keep their order, after the rest). Measuring likely winners first tightens
        the screening's stop bound (``ScreenSettings.stop_factor`` x the best so far) at
        once, so the slow majority stops after one call: on huge odd problems, where a slow
        pointer config runs for hundreds of milliseconds, that is most of an exhaustive
        sweep's GPU time."""
        rank = {cid: i for i, (cid, _, _) in
                enumerate(self.predictor(problem.dtype_token, "space").rank(problem))}
        return sorted(configs, key=lambda c: rank.get(c.id, len(rank)))

    def __call__(self, problem: GemmProblem) -> list[KernelConfig]:
        if self.n <= 0:
            return []
        picks = []
        for cid, _, _ in self.predictor(problem.dtype_token).rank(problem):
            c = KernelConfig.from_id(cid)
            if not c.is_vendor and (self.families is None or c.family in self.families):
                picks.append(c)
                if len(picks) == self.n:
                    break
        return picks


def plan_configs(problems: list[GemmProblem], opts: SweepOptions) -> list[tuple]:
    """[(problem, configs)]: the seeded sample (one sampler per problem, seeded by (seed,
    problem): a resumed or chunked sweep draws the same configs for a problem as an
    uninterrupted one), plus the model's picks when asked; in id order, or, with
    ``order="model"``, the model's (which configs are measured does not depend on it). With
    ``top_up``: only configs not measured yet, as many as the problem lacks (problems that
    have enough, or of whose families nothing is left, are left out)."""
    if opts.order not in ORDERS:
        raise ValueError(f"unknown measuring order {opts.order!r}: {', '.join(ORDERS)}")
    pool = config_pool(opts.pool, opts.seed if opts.pool_seed is None else opts.pool_seed)
    picks = ModelPicks(opts.model_top, opts.model_dir, opts.families)
    plan = []
    for p in problems:
        have, n = set(), opts.sample
        if opts.top_up is not None:
            have = opts.measured.get(p.key(), set())
            n = opts.top_up - len(have)
            if n <= 0:
                continue
        cfgs = sample_configs(p, n, random.Random(f"{opts.seed}:{p.key()}"),
                              opts.families, pool, exclude=have)
        cfgs = sorted(set(cfgs) | {c for c in picks(p) if c.id not in have})
        if opts.top_up is not None and not cfgs:
            continue   # nothing of these families left to measure: cuBLAS alone would be dropped
        plan.append((p, picks.order(p, cfgs) if opts.order == "model" else cfgs))
    return plan


def _row(problem, config, prov, sweep_id, **m) -> dict:
    row = {**problem_fields(problem), **config_fields(config), **prov, "sweep_id": sweep_id}
    row.update(m)   # tflops and gbps are not set: the schema derives them on reading
    return row


def _measure_problem(problem, configs, compiled, opts, prov, sweep_id, bar, host: Counter,
                     checks: Counter):
    from tilepick.bench.runner import ProblemInputs
    from tilepick.bench.screen import Screener
    from tilepick.bench.timing import interleaved
    from tilepick.runtime import device_for_kernels

    t0 = time.perf_counter()
    data = ProblemInputs.make(problem, device_for_kernels(), seed=opts.seed)
    host["inputs"] += time.perf_counter() - t0
    prov = dict(prov, date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    rows: dict[str, dict] = {}
    timed = 0
    best = math.inf
    todo = []
    compile_s: dict[str, float] = {}   # seconds the pool took to compile each config
    for config in [CUBLAS] + configs:
        cr = compiled.get((problem.key(), config.id))
        if cr is not None and not cr.ok:
            rows[config.id] = _row(problem, config, prov, sweep_id, valid=False,
                                   invalid_reason=f"compile: {cr.reason}", compile_s=cr.seconds)
            bar.update(1)
        else:
            todo.append(config)
            compile_s[config.id] = cr.seconds if cr else 0.0
    screener = Screener(problem, data, opts.screen, host=host, checks=checks)
    for chunk in screener.chunks(todo):
        for o in screener.screen(chunk, best):
            bar.update(1)
            config = o.config
            if o.status == "not_applicable":
                continue
            if o.status != "ok":
                rows[config.id] = _row(problem, config, prov, sweep_id, valid=False,
                                       invalid_reason=f"{o.status}: {o.reason}",
                                       rel_error=o.rel_error, compile_s=compile_s[config.id])
                continue
            t = o.timing
            timed += 1
            best = min(best, t.ms)
            rows[config.id] = _row(problem, config, prov, sweep_id, valid=True,
                                   invalid_reason="", rel_error=o.rel_error, time_ms=t.ms,
                                   time_p20_ms=t.p20_ms, time_p80_ms=t.p80_ms, reps=t.reps,
                                   stopped_early=t.stopped_early, retimed=False,
                                   timing_meaningful=t.meaningful,
                                   compile_s=compile_s[config.id])
    # winner's curse: re-time the best few and cuBLAS in interleaved rounds
    valid = sorted((r for r in rows.values() if r["valid"]), key=lambda r: r["time_ms"])
    finalists = [r["config_id"] for r in valid[:opts.retime_top]]
    if CUBLAS.id in rows and rows[CUBLAS.id]["valid"] and CUBLAS.id not in finalists:
        finalists.append(CUBLAS.id)
    if opts.rounds > 0 and len(finalists) > 1:
        fns = {cid: screener.fns[cid] for cid in finalists}
        t0 = time.perf_counter()
        for cid, r in interleaved(fns, rounds=opts.rounds, warmup=1, reps=opts.retime_reps,
                                  max_ms=opts.retime_max_ms).items():
            row = rows[cid]
            row.update(time_ms=r.ms, retimed=True, retime_spread=r.spread)
        host["retime"] += time.perf_counter() - t0
    return list(rows.values()), timed, data


def noise_report(samples: list[tuple[GemmProblem, list[tuple[str, float]]]], opts) -> dict:
    """Re-measure (later in the run) configs timed earlier; relative differences of medians.

    The headline figures re-measure a problem's configs by the protocol their stored times
    came from (the re-timing: interleaved rounds of bound launches); up to session 11 they
    were re-measured one by one with ``time_fn`` (20 repetitions, 40 ms), which also measured
    the difference between the two protocols: that figure is kept as ``time_fn_*``."""
    from tilepick.bench.runner import ProblemInputs
    from tilepick.bench.timing import interleaved, time_fn
    from tilepick.runtime import device_for_kernels

    diffs, diffs_fn = [], []
    for problem, pairs in samples:
        data = ProblemInputs.make(problem, device_for_kernels(), seed=opts.seed)
        inp = data.inputs
        fns = {}
        for cid, _ in pairs:
            run = solvers.bind(problem, cid, inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b)
            fns[cid] = (lambda f=run: f(inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b))
        again = interleaved(fns, rounds=max(1, opts.rounds), warmup=1, reps=opts.retime_reps,
                            max_ms=opts.retime_max_ms)
        for cid, before in pairs:
            diffs.append(abs(again[cid].ms - before) / before)
            after = time_fn(fns[cid], warmup=1, reps=20, max_ms=40).ms
            diffs_fn.append(abs(after - before) / before)
    if not diffs:
        return {}

    def stats(xs, prefix=""):
        xs = sorted(xs)
        return {f"{prefix}median_rel_diff": statistics.median(xs),
                f"{prefix}p90_rel_diff": xs[min(len(xs) - 1, int(0.9 * len(xs)))],
                f"{prefix}max_rel_diff": xs[-1]}
    return {"pairs": len(diffs), **stats(diffs), **stats(diffs_fn, "time_fn_")}


def run_sweep(problems: list[GemmProblem], out_dir: str | Path,
              opts: SweepOptions | None = None) -> SweepSummary:
    from tqdm import tqdm

    from tilepick.bench.compile_pool import (binaries_of, compile_all, prestart,
                                             specialisation_key)

    opts = opts or SweepOptions()
    prestart()   # the compile workers' server imports torch and Triton while this plans
    out_dir = Path(out_dir)
    summary = SweepSummary(sweep_id=uuid.uuid4().hex[:10])
    done = io.done_problems(out_dir)
    todo = []
    seen = set()
    for p in problems:
        if p.key() in done:
            summary.skipped_done += 1
        elif p.key() not in seen:
            seen.add(p.key())
            todo.append(p)
    plan = plan_configs(todo, opts)
    t0 = time.time()
    compiled = compile_all([(p, c) for p, cfgs in plan for c in cfgs],
                           processes=opts.processes, progress=opts.progress)
    summary.compile_s = time.time() - t0
    summary.binaries = binaries_of(compiled)
    summary.configs_compiled = len({specialisation_key(p, c) for p, cfgs in plan for c in cfgs
                                    if (p.key(), c.id) in compiled})

    from tilepick.provenance import collect

    prov = {k: v for k, v in collect().items() if k not in ("python_version",)}
    total = sum(len(c) + 1 for _, c in plan)
    bar = tqdm(total=total, desc="sweep", unit="cfg", disable=not opts.progress, mininterval=2.0)
    buffer: list[dict] = []
    noise_rng = random.Random(opts.seed + 1)
    noise_samples = []
    t1 = last_flush = time.time()
    stats0 = Counter(timing.STATS)
    interrupted = None
    try:
        for i, (problem, configs) in enumerate(plan):
            rows, timed, _ = _measure_problem(problem, configs, compiled, opts, prov,
                                              summary.sweep_id, bar, summary.host_s,
                                              summary.check_samples)
            if opts.top_up is not None:
                have = opts.measured.get(problem.key(), set())
                rows = [r for r in rows if r["config_id"] not in have]
            summary.problems += 1
            summary.timed += timed
            summary.rows += len(rows)
            for r in rows:
                if not r["valid"]:
                    summary.invalid_by_reason[r["invalid_reason"].split(":")[0]] += 1
            buffer.extend(rows)
            if noise_rng.random() < opts.noise_fraction:
                top = sorted((r for r in rows if r["valid"]), key=lambda r: r["time_ms"])[:5]
                noise_samples.append((problem, [(r["config_id"], r["time_ms"]) for r in top]))
            # a part every few problems or seconds: a killed sweep loses at most one interval
            if (i + 1) % opts.flush_every == 0 or time.time() - last_flush > opts.flush_s:
                io.write_part(out_dir, buffer)
                buffer, last_flush = [], time.time()
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (bench.signals): keep what is done
        interrupted = exc
    io.write_part(out_dir, buffer)
    bar.close()
    summary.measure_s = time.time() - t1
    summary.samples = Counter(timing.STATS) - stats0
    extra = {}
    if interrupted is None:
        summary.noise = noise_report(noise_samples, opts)
    else:
        summary.noise, extra = {"skipped": "interrupted"}, {"interrupted": True}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"sweep-{summary.sweep_id}.json").write_text(
        json.dumps({**summary.to_dict(), **extra}, indent=1))
    if interrupted is not None:
        raise interrupted
    return summary
