"""Chunked checking and screening (bench.screen) and the batched timing under it
(timing.gather / timed_round's late-sample rule), on the CPU: outcomes through the interpreter,
the GPU-side decisions with a scripted clock."""

from collections import Counter

import pytest
import torch

from tilepick import solvers
from tilepick.bench import screen as screen_mod
from tilepick.bench import timing
from tilepick.bench.runner import ProblemInputs
from tilepick.bench.screen import Screener, ScreenSettings
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.tensors import make_inputs, make_output, reference, tolerance

PROBLEM = GemmProblem(32, 48, 64, dtype="fp16")
CUBLAS = KernelConfig("gemm.cublas")
TMA = KernelConfig.from_id("gemm.tma.m64n64k32.g1.w4.s2")
PTR = KernelConfig.from_id("gemm.ptr.m32n32k32.g8.w4.s2")
PTR2 = KernelConfig.from_id("gemm.ptr.m16n32k32.g8.w4.s4")


@pytest.fixture
def data():
    return ProblemInputs.make(PROBLEM, "cpu", seed=0)


# -- batched errors and outputs ---------------------------------------------------------------


def test_make_output_matches_the_inputs_layout():
    p = GemmProblem(8, 12, 16, ldc=20, base_align=4, dtype="fp16")
    inp = make_inputs(p, "cpu")
    out = make_output(p, "cpu")
    assert out.shape == inp.out.shape and out.stride() == inp.out.stride()
    assert out.dtype == inp.out.dtype and bool(torch.isnan(out).all())
    assert out.data_ptr() % 16 == inp.out.data_ptr() % 16


def test_errors_of_several_outputs_in_one_read(data):
    ref = data.ref
    good = reference(PROBLEM, data.inputs).to(data.inputs.out.dtype)
    off = good * 1.1
    hole = good.clone()
    hole[3, 5] = float("nan")
    errs = ref.errors([good, off, hole])
    assert errs[0] <= tolerance(PROBLEM)
    assert errs[1] == pytest.approx(0.1, rel=1e-2)
    assert errs[2] == float("inf")
    assert ref.error(off) == pytest.approx(errs[1])


# -- the screener through the interpreter ------------------------------------------------------


def test_screen_chunk_outcomes(data, monkeypatch):
    """One chunk, four fates: ok, wrong (garbage output), invalid (raises at launch), not
    applicable; each config is checked into its own output."""
    def garbage(problem, config, a, b, out, scale_a=None, scale_b=None):
        out.fill_(1.0)
        return out

    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", garbage)
    original = solvers.SOLVERS["gemm.ptr"].launch

    def ptr(problem, config, a, b, out, scale_a=None, scale_b=None):
        if config == PTR2:
            raise solvers.ConfigInvalidError(f"{config.id}: OutOfResources: shared memory")
        return original(problem, config, a, b, out, scale_a, scale_b)

    monkeypatch.setattr(solvers.SOLVERS["gemm.ptr"], "launch", ptr)
    narrow = GemmProblem(32, 48, 64, lda=65, dtype="fp16")   # TMA needs 16-byte strides
    d2 = ProblemInputs.make(narrow, "cpu")
    s = Screener(narrow, d2)
    out = s.screen([CUBLAS, TMA, PTR, PTR2])
    status = {o.config.id: o.status for o in out}
    assert [o.config for o in out] == [CUBLAS, TMA, PTR, PTR2]
    assert status == {CUBLAS.id: "ok", TMA.id: "not_applicable", PTR.id: "ok",
                      PTR2.id: "invalid"}
    assert "OutOfResources" in out[3].reason
    ok = [o for o in out if o.status == "ok"]
    assert all(o.rel_error <= tolerance(narrow) and o.timing.reps == 2 and
               not o.timing.meaningful for o in ok)
    assert set(s.fns) == {CUBLAS.id, PTR.id}       # what the re-timing may call
    # a config that writes garbage is wrong, and keeps its measured error
    s2 = Screener(PROBLEM, data)
    wrong = s2.screen([TMA, PTR])
    assert wrong[0].status == "wrong" and wrong[0].rel_error > 0.1
    assert "tolerance" in wrong[0].reason and wrong[1].status == "ok"
    assert s2.host["check"] > 0


def test_chunks_fit_the_output_budget(data, monkeypatch):
    configs = [CUBLAS] + [TMA, PTR, PTR2] * 7
    s = Screener(PROBLEM, data, ScreenSettings(chunk=8))
    sizes = [len(c) for c in s.chunks(configs)]
    assert sizes == [1, 8, 8, 5]       # the first alone: it sets the others' first bound
    nbytes = data.inputs.out.untyped_storage().nbytes()
    monkeypatch.setattr(screen_mod, "OUTPUT_BUDGET_BYTES", 2 * nbytes)
    assert s.chunk_size() == 3          # the problem's own output and two more
    monkeypatch.setattr(screen_mod, "OUTPUT_BUDGET_BYTES", 0)
    assert [len(c) for c in s.chunks(configs)] == [1] * len(configs)


# -- the screening rules with a scripted clock -------------------------------------------------


class Clock:
    """Stands in for the GPU: config id -> ms per call; check launches are told apart by
    their order in the chunk. Records what was asked for."""

    def __init__(self, times, late_first=()):
        self.times, self.late_first = times, set(late_first)
        self.asked = Counter()
        self.rounds = 0

    def timed_round(self, calls, timed=None, host_ms=0.1, gpu_ms=0.0, flush_l2=True, then=None):
        for fn in calls:
            fn()
        ids = self.chunk_ids[:len(calls)]
        return timing.Round([self.times[i] for i in ids], [i in self.late_first for i in ids],
                            [0.1] * len(calls), then() if then else None)

    def gather(self, fns, want, host_ms=0.1, *, lead=0, flush_l2=True, gpu_ms=None):
        assert lead == 1                 # each block warmed by a call of its own kernel
        self.rounds += 1
        self.asked.update(want)
        return {k: [self.times[k]] * n for k, n in want.items()}, host_ms


@pytest.fixture
def clock(monkeypatch):
    def install(times, chunk_ids, late_first=()):
        c = Clock(times, late_first)
        c.chunk_ids = chunk_ids
        monkeypatch.setattr(timing, "interpreting", lambda: False)
        monkeypatch.setattr(timing, "timed_round", c.timed_round)
        monkeypatch.setattr(timing, "gather", c.gather)
        return c
    return install


def test_screen_rules(data, clock):
    """Bound 1.5 x best = 1.5 ms: a check launch over 2 x that stops at once; a first batch
    over it stops; the rest are sized to max_ms (at most reps)."""
    configs = [TMA, PTR, PTR2]
    times = {TMA.id: 0.5, PTR.id: 1.8, PTR2.id: 10.0}
    c = clock(times, [cfg.id for cfg in configs])
    s = Screener(PROBLEM, data, ScreenSettings(reps=10, min_reps=3, max_ms=25.0, long_ms=2.0))
    out = {o.config.id: o.timing for o in s.screen(configs, best=1.0)}
    # 10 ms check launch > 2 x 1.5: stopped on it, one sample
    assert out[PTR2.id].stopped_early and out[PTR2.id].reps == 1
    assert out[PTR2.id].ms == 10.0
    # 1.8 ms: the check was the probe only (a short kernel's first launch); then a batch of 3
    # whose median is over the bound: stopped
    assert out[PTR.id].stopped_early and out[PTR.id].reps == 3
    # 0.5 ms: 3, then sized to min(10, 25 / 0.5) = 10
    assert not out[TMA.id].stopped_early and out[TMA.id].reps == 10
    assert s.checks == Counter({"probe_stop": 1, "probe": 2})
    assert c.rounds == 2                 # two synchronisations for the whole chunk
    assert c.asked == Counter({TMA.id: 10, PTR.id: 3})


def test_long_check_launch_counts_as_a_sample_late_one_does_not(data, clock):
    configs = [TMA, PTR]
    c = clock({TMA.id: 4.0, PTR.id: 5.0}, [cfg.id for cfg in configs], late_first=[PTR.id])
    s = Screener(PROBLEM, data, ScreenSettings(reps=10, min_reps=3, max_ms=25.0, long_ms=2.0))
    out = {o.config.id: o.timing for o in s.screen(configs, best=4.0)}
    # 4 ms >= long_ms: the check launch is the first of its samples: 2 more, then sized to
    # max(3, 25 / 4) = 6
    assert c.asked[TMA.id] == 5 and out[TMA.id].reps == 6
    # late check launch: not used; 3 fresh samples (under the 6 ms bound), sized to 5
    assert c.asked[PTR.id] == 5 and out[PTR.id].reps == 5
    assert s.checks == Counter({"sample": 1, "late": 1})


def test_no_bound_without_a_best(data, clock):
    clock({CUBLAS.id: 100.0}, [CUBLAS.id])
    s = Screener(PROBLEM, data, ScreenSettings(reps=10, min_reps=3, max_ms=25.0, long_ms=200.0))
    (o,) = s.screen([CUBLAS])
    assert not o.timing.stopped_early and o.timing.reps == 3


# -- gather: rounds, interleaving, late samples ------------------------------------------------


def test_blocks_keep_a_candidates_calls_together():
    assert timing.blocks({"a": 2, "b": 1}) == [("a", True), ("a", True), ("b", True)]
    assert timing.blocks({"a": 2, "b": 0, "c": 1}, lead=1) == [
        ("a", False), ("a", True), ("a", True), ("c", False), ("c", True)]
    assert timing.blocks({}) == []
    assert timing.blocks({"a": 1, "b": 1}, lead={"a": 0, "b": 1}) == [
        ("a", True), ("b", False), ("b", True)]


def _recorded_rounds(monkeypatch, ms: float) -> list:
    """timed_round replaced: every call reads ``ms``, on time; returns each round's ``timed``."""
    monkeypatch.setattr(timing, "interpreting", lambda: False)
    seen = []

    def fake_round(calls, timed=None, host_ms=0.1, gpu_ms=0.0, flush_l2=True, then=None):
        seen.append(list(timed) if timed is not None else [True] * len(calls))
        return timing.Round([ms] * len(calls), [False] * len(calls), [0.1] * len(calls))

    monkeypatch.setattr(timing, "timed_round", fake_round)
    return seen


def test_gather_leads_only_calls_not_known_to_be_long(monkeypatch):
    seen = _recorded_rounds(monkeypatch, 1.0)
    fns = {k: (lambda: None) for k in "abc"}
    got, _ = timing.gather(fns, {"a": 1, "b": 1, "c": 1}, lead=1,
                           gpu_ms={"a": 0.2, "b": timing.LEAD_MAX_MS})
    # a: short, warmed; b: long, no lead; c: unknown, warmed
    assert seen == [[False, True, True, False, True]]
    assert {k: len(v) for k, v in got.items()} == {"a": 1, "b": 1, "c": 1}


def test_late_sample_rule():
    # submitted 0.5 ms after the origin; the GPU reached the start event 0.6 ms after it
    assert not timing.late_sample(0.5, 0.6)
    assert timing.late_sample(0.5, 0.51)     # inside the slack: may have waited
    assert timing.late_sample(0.7, 0.6)


def test_gather_retakes_late_samples_then_keeps_them(monkeypatch):
    monkeypatch.setattr(timing, "interpreting", lambda: False)
    seen = []

    def fake_round(calls, timed=None, host_ms=0.1, gpu_ms=0.0, flush_l2=True, then=None):
        seen.append((list(timed), host_ms))
        out = [fn() for fn in calls]
        return timing.Round([1.0 if t else float("nan") for t in timed],
                            [o == "late" and t for o, t in zip(out, timed)], [0.2] * len(calls))

    monkeypatch.setattr(timing, "timed_round", fake_round)
    before = Counter(timing.STATS)
    got, host = timing.gather({"a": lambda: "ok", "b": lambda: "late"}, {"a": 2, "b": 1},
                              host_ms=0.1, lead=1)
    assert got == {"a": [1.0, 1.0], "b": [1.0]}
    # one round: a's block and b's, each behind an untimed lead call; then b alone, retaken
    # GATHER_ATTEMPTS - 1 more times with a longer hold
    assert seen[0] == ([False, True, True, False, True], 0.1)
    assert [t for t, _ in seen[1:]] == [[False, True]] * (timing.GATHER_ATTEMPTS - 1)
    assert seen[1][1] == pytest.approx(0.2 * 2)      # measured host time, doubled
    delta = Counter(timing.STATS) - before
    assert delta["late_kept"] == 1 and delta["late"] == timing.GATHER_ATTEMPTS
    assert delta["samples"] == 3 + timing.GATHER_ATTEMPTS - 1
    assert host == pytest.approx(0.2)


def test_gather_splits_long_rounds(monkeypatch):
    seen = _recorded_rounds(monkeypatch, 2.0)
    got, _ = timing.gather({k: (lambda: None) for k in "abc"}, {"a": 50, "b": 50, "c": 1})
    assert [len(t) for t in seen] == [timing.ROUND_MAX_CALLS, 101 - timing.ROUND_MAX_CALLS]
    assert {k: len(v) for k, v in got.items()} == {"a": 50, "b": 50, "c": 1}


def test_interleaved_sizes_rounds_from_one_call(monkeypatch):
    monkeypatch.setattr(timing, "interpreting", lambda: False)
    asked = []

    def fake_gather(fns, want, host_ms=0.1, *, lead=0, flush_l2=True, gpu_ms=None):
        asked.append((dict(want), lead))
        ms = {"fast": 1.0, "slow": 30.0}
        return {k: [ms[k]] * n for k, n in want.items()}, host_ms

    monkeypatch.setattr(timing, "gather", fake_gather)
    out = timing.interleaved({"fast": lambda: None, "slow": lambda: None}, rounds=2,
                             warmup=1, reps=20, max_ms=40, min_reps=3)
    assert asked == [({"fast": 1, "slow": 1}, 0), ({"fast": 20, "slow": 3}, 1),
                     ({"fast": 20, "slow": 3}, 1)]
    assert out["fast"].rounds_ms == (1.0, 1.0) and out["slow"].ms == 30.0
    assert out["fast"].gpu_ms == pytest.approx(41.0) and out["slow"].spread == 0.0
