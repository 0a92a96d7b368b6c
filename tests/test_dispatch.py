"""Dispatcher, find modes, perf-db and fallbacks, on a simulated device that replays the
measured H200 dataset (no GPU needed)."""

import json
import math
import multiprocessing as mp
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
import torch

import tilepick
from tilepick import solvers
from tilepick.data.io import read_frame
from tilepick.dispatch import Dispatcher, Environment, PerfDb, SimulatedDevice
from tilepick.dispatch.dispatcher import analytic_order, mode_from_env
from tilepick.dispatch.perfdb import PerfDbError
from tilepick.hardware import profile
from tilepick.problem import GemmProblem

DATA = Path(__file__).resolve().parent.parent / "data" / "gemm" / "bf16" / "h200" / "train_rr"
ENV = Environment("NVIDIA H200", "580", "13.0", "2.11", "3.6", "abc")
HW = profile("h200")


@pytest.fixture(scope="module")
def frame():
    """The sweeps' chunks: one row per (problem, config) (a re-timing pass, retime-*.parquet,
    repeats configs of its problems)."""
    return pd.concat([read_frame(f) for f in sorted(DATA.glob("chunk-*.parquet"))],
                     ignore_index=True)


@pytest.fixture(scope="module")
def problem_rows(frame):
    """A measured problem with many valid configs, and its rows."""
    counts = frame[frame.valid].groupby("problem_key").size()
    key = counts.sort_values().index[-1]
    return GemmProblem.from_key(key), frame[(frame.problem_key == key) & frame.valid]


class RankByList:
    """A stand-in model: ranks the given config ids in the given order, with given uncertainty."""

    def __init__(self, order, uncertainty=0.01, preds=None):
        self.order, self.uncertainty, self.preds = order, uncertainty, preds
        self.calls = 0

    def rank(self, problem, top=None):
        self.calls += 1
        preds = self.preds or [1000.0 / (i + 1) for i in range(len(self.order))]
        return [(cid, p, self.uncertainty) for cid, p in zip(self.order, preds)]


def tensors_for(p: GemmProblem):
    a = torch.randn(p.m, p.k).bfloat16()
    b = torch.randn(p.k, p.n).bfloat16()
    return a, b, torch.empty(p.m, p.n, dtype=torch.bfloat16)


def make(tmp_path, mode, predictor, frame, **kw):
    dev = SimulatedDevice.from_frame(frame)
    return Dispatcher(mode=mode, device=dev, predictor=predictor,
                      user_db=str(tmp_path / "user.db"), hw=HW, env=ENV, **kw), dev


def test_heuristic_takes_model_top1_without_benchmarking(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    order = list(rows.sort_values("time_ms", ascending=False).config_id)  # worst first
    d, dev = make(tmp_path, "heuristic", RankByList(order), frame)
    a, b, out = tensors_for(p)
    d.run(p, a, b, out)
    assert dev.launched == [(p.key(), order[0])]
    assert dev.benchmarked == []
    torch.testing.assert_close(out.float(), (a.float() @ b.float()).bfloat16().float(),
                               rtol=2e-2, atol=2e-2)


def test_hybrid_benchmarks_top_k_plus_cublas_and_records(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    times = dict(zip(rows.config_id, rows.time_ms))
    order = [c for c in rows.sort_values("time_ms").config_id if c != "gemm.cublas"]
    order = order[3:] + order[:3]  # the true best three are ranked last by the "model"
    d, dev = make(tmp_path, "hybrid", RankByList(order, uncertainty=0.0), frame, k=4)
    d.run(p, *tensors_for(p))
    benched = [c for _, c in dev.benchmarked]
    assert set(benched) == set(order[:4]) | {"gemm.cublas"}
    best = min(benched, key=lambda c: times[c])
    assert dev.launched[-1] == (p.key(), best)
    rec = d.user_db.lookup(ENV, p.key())
    assert rec.winner == best and rec.mode == "hybrid" and set(rec.timings) == set(benched)
    # a new process (new dispatcher, same db) serves it from the db without benchmarking
    d2, dev2 = make(tmp_path, "hybrid", RankByList(order), frame)
    assert d2.decide(p, tensors_for(p)).config_id == best
    assert dev2.benchmarked == [] and d2.stats["db_hits"] == 1


class RankWithOutside(RankByList):
    """A stand-in model whose catalog is ``order``, with ``outside`` the configs it ranks
    beyond it (Predictor.outside_catalog)."""

    def __init__(self, order, outside, outside_rel=1.0, **kw):
        super().__init__(order, **kw)
        self.outside, self.outside_rel = outside, outside_rel

    def outside_catalog(self, problem, n):
        best = self.rank(problem)[0][1]
        return [(cid, best * self.outside_rel, None) for cid in self.outside[:n]]


def test_hybrid_explores_the_models_best_configs_outside_its_catalog(tmp_path, frame,
                                                                     problem_rows):
    p, rows = problem_rows
    times = dict(zip(rows.config_id, rows.time_ms))
    fastest = [c for c in rows.sort_values("time_ms").config_id if c != "gemm.cublas"]
    catalog, outside = fastest[5:], fastest[:3]   # the best configs are not in the catalog
    d, dev = make(tmp_path, "hybrid", RankWithOutside(catalog, outside, uncertainty=0.0),
                  frame, k=2, explore=2)
    d.decide(p, tensors_for(p))
    benched = [c for _, c in dev.benchmarked]
    assert set(benched) == set(catalog[:2]) | set(outside[:2]) | {"gemm.cublas"}
    assert d.cache[p].config_id == min(outside[:2] + ["gemm.cublas"], key=times.get)
    from tilepick.dispatch.warmup import candidates   # warming up compiles them too

    assert {c.id for c in candidates(d, p, top=2)} == set(catalog[:2]) | set(outside[:2])
    # explore=0, or a model without the method: the catalog's top-k only
    off, dev_off = make(tmp_path / "off", "hybrid",
                        RankWithOutside(catalog, outside, uncertainty=0.0), frame, k=2,
                        explore=0)
    off.decide(p, tensors_for(p))
    assert {c for _, c in dev_off.benchmarked} == set(catalog[:2]) | {"gemm.cublas"}
    with pytest.raises(ValueError, match="explore"):
        make(tmp_path, "hybrid", RankByList(catalog), frame, explore=-1)
    with pytest.raises(ValueError, match="explore_rel"):
        make(tmp_path, "hybrid", RankByList(catalog), frame, explore_rel=1.5)


@pytest.mark.parametrize("outside_rel, uncertainty, explore_rel, explored", [
    (0.5, 0.0, 0.85, False),    # predicted far below the catalog's best: not worth a benchmark
    (0.9, 0.0, 0.85, True),     # near it: explored
    (0.5, 0.4, 0.85, True),     # the model is unsure (two uncertainties reach 0.45)
    (0.5, 0.0, 0.0, True),      # explore_rel 0: every unseen config the model ranks first
])
def test_hybrid_explores_only_configs_predicted_near_the_best(tmp_path, frame, problem_rows,
                                                              outside_rel, uncertainty,
                                                              explore_rel, explored):
    p, rows = problem_rows
    fastest = [c for c in rows.sort_values("time_ms").config_id if c != "gemm.cublas"]
    catalog, outside = fastest[5:], fastest[:3]
    model = RankWithOutside(catalog, outside, outside_rel=outside_rel, uncertainty=uncertainty)
    d, dev = make(tmp_path, "hybrid", model, frame, k=2, max_k=2, explore=2,
                  explore_rel=explore_rel)
    d.decide(p, tensors_for(p))
    benched = {c for _, c in dev.benchmarked}
    if explored:
        assert set(outside[:2]) <= benched
    else:
        assert not set(outside) & benched
    assert set(catalog[:2]) | {"gemm.cublas"} <= benched


class RoundsDevice(SimulatedDevice):
    """A replay whose benchmarks have interleaved rounds: ``rounds[cid]`` per config."""

    def __init__(self, rounds, **kw):
        super().__init__(**kw)
        self.rounds = rounds

    def benchmark(self, problem, config_ids, *tensors):
        out = super().benchmark(problem, config_ids, *tensors)
        for cid, o in out.items():
            if cid in self.rounds and o.status == "ok":
                o.rounds_ms = tuple(self.rounds[cid])
                o.ms = sorted(o.rounds_ms)[len(o.rounds_ms) // 2]
        return out


@pytest.mark.parametrize("keep, expect", [(True, "steady"), (False, "lucky")])
def test_a_benchmark_replaces_cublas_only_with_a_candidate_faster_in_every_round(
        tmp_path, frame, problem_rows, keep, expect):
    p, rows = problem_rows
    lucky, steady = [c for c in rows.config_id if c != "gemm.cublas"][:2]
    # "lucky" has the best median but lost one round to cuBLAS (clock drift); "steady" beat
    # cuBLAS in every round; the rule keeps the steady one, without it the lucky one wins
    rounds = {"gemm.cublas": (1.00, 1.00, 1.20), lucky: (0.90, 0.91, 1.25),
              steady: (0.95, 0.96, 1.10)}
    dev = RoundsDevice(rounds, times=SimulatedDevice.from_frame(frame).times)
    d = Dispatcher(mode="hybrid", device=dev, predictor=RankByList([lucky, steady],
                                                                   uncertainty=0.0),
                   user_db=None, system_db=None, hw=HW, env=ENV, k=2,
                   keep_vendor_unless_beaten=keep)
    assert d.decide(p, tensors_for(p)).config_id == {"steady": steady, "lucky": lucky}[expect]
    # nothing beats cuBLAS in every round: cuBLAS stays
    rounds[steady] = (0.95, 1.05, 1.10)
    d2 = Dispatcher(mode="hybrid", device=RoundsDevice(rounds, times=dev.times),
                    predictor=RankByList([lucky, steady], uncertainty=0.0), user_db=None,
                    system_db=None, hw=HW, env=ENV, k=2)
    assert d2.decide(p, tensors_for(p)).config_id == "gemm.cublas"


def test_rounds_to_win_is_a_one_sided_sign_test():
    from tilepick.dispatch.dispatcher import rounds_to_win

    # P(X >= k) for X ~ Binomial(n, 1/2): n=7: 8/128 at k=6; n=15: 0.059 at 11, 0.151 at 10
    assert [rounds_to_win(n) for n in (1, 3, 4, 5, 7, 15)] == [1, 3, 4, 5, 6, 11]


class DuelDevice(RoundsDevice):
    """RoundsDevice whose duels replay ``duel_rounds`` (config -> the duel's rounds)."""

    def __init__(self, rounds, duel_rounds, **kw):
        super().__init__(rounds, **kw)
        self.duel_rounds, self.duels = duel_rounds, []

    def can_duel(self):
        return True

    def duel(self, problem, config_ids, *tensors):
        self.duels.append(list(config_ids))
        return RoundsDevice(self.duel_rounds, times=self.times).benchmark(problem, config_ids,
                                                                          *tensors)


@pytest.mark.parametrize("wins, expect", [(12, "lucky"), (10, "gemm.cublas")])
def test_a_longer_duel_decides_where_the_fastest_median_lost_a_round(
        tmp_path, frame, problem_rows, wins, expect):
    """The fastest median lost one of 3 rounds to cuBLAS: 3 rounds cannot tell a 5% gain
    from clock noise, so the two are timed again in 15 rounds, and 11 wins (a sign test) are
    needed to replace cuBLAS."""
    p, rows = problem_rows
    lucky = [c for c in rows.config_id if c != "gemm.cublas"][0]
    rounds = {"gemm.cublas": (1.00, 1.00, 1.20), lucky: (0.90, 0.91, 1.25)}
    duel = {"gemm.cublas": (1.0,) * 15, lucky: (0.95,) * wins + (1.05,) * (15 - wins)}
    dev = DuelDevice(rounds, duel, times=SimulatedDevice.from_frame(frame).times)
    d = Dispatcher(mode="hybrid", device=dev, predictor=RankByList([lucky], uncertainty=0.0),
                   user_db=str(tmp_path / "user.db"), system_db=None, hw=HW, env=ENV, k=1)
    got = d.decide(p, tensors_for(p)).config_id
    assert got == {"lucky": lucky}.get(expect, expect)
    assert dev.duels == [[lucky, "gemm.cublas"]] and d.stats["duels"] == 1
    # the perf-db keeps the duel's medians of the two, the better-measured times
    rec = d.user_db.lookup(ENV, p.key())
    assert rec.winner == got
    assert rec.timings["gemm.cublas"][0] == 1.0
    assert rec.timings[lucky][0] == (0.95 if wins >= 8 else 1.05)
    # a duel that fails (timing raised) keeps cuBLAS, with a warning, and decides the problem
    broken = DuelDevice(rounds, duel, times=dev.times)
    broken.duel = lambda *a: (_ for _ in ()).throw(RuntimeError("CUDA error: launch failed"))
    d3 = Dispatcher(mode="hybrid", device=broken, user_db=None, system_db=None, hw=HW, env=ENV,
                    k=1, predictor=RankByList([lucky], uncertainty=0.0))
    with pytest.warns(RuntimeWarning, match=r"duel of .* failed \(RuntimeError: CUDA error"):
        assert d3.decide(p, tensors_for(p)).config_id == "gemm.cublas"
    # a challenger that won every round needs no duel; nor does cuBLAS's own best median
    for first in ((0.90, 0.91, 1.15), (1.10, 1.10, 1.30)):
        dev2 = DuelDevice({**rounds, lucky: first}, duel, times=dev.times)
        d2 = Dispatcher(mode="hybrid", device=dev2, user_db=None, system_db=None, hw=HW,
                        env=ENV, k=1, predictor=RankByList([lucky], uncertainty=0.0))
        assert d2.decide(p, tensors_for(p)).config_id == (lucky if first[0] < 1 else
                                                          "gemm.cublas")
        assert dev2.duels == [] and d2.stats["duels"] == 0


def test_hybrid_k_grows_with_uncertainty(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    order = list(rows.config_id)
    preds = [100.0 - i for i in range(len(order))]  # 1% apart
    sure, _ = make(tmp_path, "hybrid", RankByList(order, 0.0, preds), frame, k=2, max_k=50)
    unsure, _ = make(tmp_path, "hybrid", RankByList(order, 0.05, preds), frame, k=2, max_k=50)
    ranked = sure.ranked(p)[0]
    assert len(sure.top_k(ranked)) == 2
    k = len(unsure.top_k(unsure.ranked(p)[0]))
    # every candidate predicted within exp(-2 * 0.05) of the best: 100 * 0.905 -> 10 configs
    assert k == sum(1 for x in preds if x >= 100.0 * math.exp(-0.1))


def test_exhaustive_benchmarks_every_applicable_candidate(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    d, dev = make(tmp_path, "exhaustive", RankByList(list(rows.config_id)), frame)
    d.decide(p, tensors_for(p))
    benched = {c for _, c in dev.benchmarked}
    assert benched == {c.id for c in solvers.applicable_configs(p, HW)}
    measured = dict(zip(rows.config_id, rows.time_ms))
    assert d.cache[p].config_id == min(measured, key=measured.get)
    # warming up compiles what it will benchmark: every applicable config, not a top k
    from tilepick.dispatch.warmup import candidates

    assert {c.id for c in candidates(d, p, top=4)} == benched
    hybrid, _ = make(tmp_path / "h", "hybrid", RankByList(list(rows.config_id)), frame)
    assert len(candidates(hybrid, p, top=4)) == 4


def test_db_mode_falls_back_to_heuristic_and_cache_hits(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    model = RankByList(list(rows.config_id))
    d, dev = make(tmp_path, "db", model, frame)
    first = d.decide(p, tensors_for(p))
    assert first.source == "model" and dev.benchmarked == []
    again = d.decide(p)
    assert again is first and model.calls == 1  # the in-memory cache answered


def _first_pick_blocked(tmp_path, frame, problem_rows, how: str):
    """A heuristic dispatcher whose first pick fails (``how="failing"``) or refuses the
    context (``"refusing"``), run once: the second pick must have served the call."""
    p, rows = problem_rows
    order = list(rows.sort_values("time_ms").config_id)
    d, dev = make(tmp_path, "heuristic", RankByList(order), frame)
    setattr(dev, how, {order[0]})
    a, b, out = tensors_for(p)
    d.run(p, a, b, out)
    assert dev.launched == [(p.key(), order[1])]
    return p, order, d, dev, (a, b, out)


def test_failing_kernel_falls_back_and_is_recorded(tmp_path, frame, problem_rows):
    p, order, d, dev, (a, b, out) = _first_pick_blocked(tmp_path, frame, problem_rows,
                                                        "failing")
    assert d.stats["fallbacks"] == 1
    rec = d.user_db.lookup(ENV, p.key())
    assert order[0] in rec.invalid
    # a new dispatcher that reads the db never picks it again
    d2, dev2 = make(tmp_path, "db", RankByList(order), frame)
    d2.run(p, a, b, out)
    assert dev2.launched == [(p.key(), order[1])]


def test_a_context_refusal_runs_the_next_candidate_and_records_nothing(tmp_path, frame,
                                                                      problem_rows):
    """Inside CUDA graph capture split-K in one launch refuses (NotInThisContextError): that
    launch takes the next candidate, but nothing says the config is invalid, in memory or in
    the user db, and once the context is gone the first pick runs again."""
    p, order, d, dev, (a, b, out) = _first_pick_blocked(tmp_path, frame, problem_rows,
                                                        "refusing")
    assert d.stats["context_skips"] == 1 and d.stats["fallbacks"] == 0
    assert order[0] not in d.invalid.get(p, set()) and d.cache[p].config_id == order[0]
    rec = d.user_db.lookup(ENV, p.key())
    assert rec is None or order[0] not in rec.invalid
    dev.refusing = set()          # capture over
    d.run(p, a, b, out)
    assert dev.launched[-1] == (p.key(), order[0])


def test_hybrid_inside_capture_runs_the_model_pick_and_tunes_after(tmp_path, frame,
                                                                   problem_rows):
    """Nothing can be timed inside CUDA graph capture: a new problem there runs the model's
    pick without benchmarking and without keeping it, and is tuned at its first call after."""
    p, rows = problem_rows
    order = [c for c in rows.sort_values("time_ms").config_id if c != "gemm.cublas"]
    order = order[3:] + order[:3]
    d, dev = make(tmp_path, "hybrid", RankByList(order, uncertainty=0.0), frame, k=4)
    dev.capturing = True
    a, b, out = tensors_for(p)
    d.run(p, a, b, out)
    assert dev.benchmarked == [] and dev.launched == [(p.key(), order[0])]
    assert p not in d.cache and d.stats["untimed_decisions"] == 1
    assert d.user_db.lookup(ENV, p.key()) is None
    dev.capturing = False
    d.run(p, a, b, out)
    assert {c for _, c in dev.benchmarked} == set(order[:4]) | {"gemm.cublas"}
    assert d.cache[p].source == "benchmark"


def test_a_refusing_candidate_in_a_benchmark_is_not_recorded_invalid(tmp_path, frame,
                                                                    problem_rows):
    p, rows = problem_rows
    order = [c for c in rows.sort_values("time_ms").config_id if c != "gemm.cublas"]
    d, dev = make(tmp_path, "hybrid", RankByList(order, uncertainty=0.0), frame, k=4)
    dev.refusing = {order[0]}
    d.run(p, *tensors_for(p))
    assert order[0] not in d.invalid.get(p, set())
    rec = d.user_db.lookup(ENV, p.key())
    assert order[0] not in rec.invalid and order[0] not in rec.timings
    assert rec.winner in set(order[1:4]) | {"gemm.cublas"}


def test_every_candidate_failing_is_a_clear_error(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    order = list(rows.config_id)[:3]
    d, dev = make(tmp_path, "heuristic", RankByList(order), frame)
    dev.failing = set(order) | {"gemm.cublas"}
    with pytest.raises(RuntimeError, match="every candidate failed"):
        d.run(p, *tensors_for(p))


def test_without_model_analytic_order_starts_with_cublas(tmp_path, frame):
    p = GemmProblem(256, 512, 128)
    order = analytic_order(p, HW)
    assert order[0][0] == "gemm.cublas"
    assert {solvers.KernelConfig.from_id(c).family for c, _, _ in order} >= {"gemm.ptr", "gemm.tma"}
    d = Dispatcher(mode="heuristic", device=SimulatedDevice(), predictor=None, user_db=None,
                   hw=HW, env=ENV)
    decision = d.decide(p)
    assert decision.config_id == "gemm.cublas" and decision.source == "analytic"


def test_a_layout_the_model_was_not_trained_on_is_ranked_by_extrapolation(tmp_path, frame,
                                                                         problem_rows):
    """The model's order, not the analytic one (cuBLAS first: slow with a column-major A of
    odd leading dimension), with no confidence: hybrid benchmarks its widest top-k."""
    p_rr, rows = problem_rows
    order = list(rows.sort_values("time_ms").config_id)
    model = RankByList(order)
    model.layouts = ("rr", "rc")
    d, _ = make(tmp_path, "heuristic", model, frame)
    p = GemmProblem(p_rr.m, p_rr.n, p_rr.k, layout="cc")
    with pytest.warns(RuntimeWarning, match="not trained on layout cc"):
        decision = d.decide(p)
    assert decision.source == "model" and decision.config_id == order[0]
    assert all(math.isinf(u) for _, _, u in decision.ranked)
    assert d.top_k(decision.ranked) == order[:d.max_k]
    # a trained layout keeps the model's uncertainty
    assert d.decide(p_rr).ranked[0][2] == 0.01


def test_missing_model_warns_and_returns_none():
    import tilepick.dispatch.dispatcher as disp

    with pytest.warns(RuntimeWarning, match="analytic default order"):
        assert disp.load_predictor("bf16", "no-such-arch") is None


def test_stale_environment_is_ignored(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    db = PerfDb(tmp_path / "u.db")
    db.record(ENV, p.key(), "gemm.cublas", "hybrid", {"gemm.cublas": (0.1, "ok", "")})
    newer = Environment(ENV.gpu_name, ENV.driver, ENV.cuda, ENV.torch, "3.7", ENV.source_hash)
    assert db.lookup(ENV, p.key()).winner == "gemm.cublas"
    assert db.lookup(newer, p.key()) is None


def test_corrupt_db_is_reported_and_bypassed(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(b"this is not an sqlite database" * 100)
    with pytest.warns(RuntimeWarning, match="unusable"):
        d = Dispatcher(mode="hybrid", device=SimulatedDevice.from_frame(frame),
                       predictor=RankByList(list(rows.config_id)), user_db=str(bad), hw=HW, env=ENV)
        decision = d.decide(p, tensors_for(p))
    assert decision.source == "benchmark"
    assert d.user_db.lookup(ENV, p.key()) is None  # bypassed, no crash


def _writer(path, start):
    db = PerfDb(path)
    for i in range(start, start + 25):
        assert db.record(ENV, f"gemm.bf16.rr.m{i}.n8.k8", "gemm.cublas", "hybrid",
                         {"gemm.cublas": (0.01 * i, "ok", ""), "gemm.ptr.m16n16k32.g1.w4.s3":
                          (None, "invalid", "x")})


def test_concurrent_writers_lose_no_record(tmp_path):
    path = str(tmp_path / "shared.db")
    PerfDb(path).usable  # create the schema once
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, 1 + 25 * i)) for i in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    entries = PerfDb(path).entries()
    assert len(entries) == 100 and all(e["candidates"] == 2 for e in entries)


def test_one_db_serves_several_threads(tmp_path):
    """A PerfDb used from threads other than the one that opened it (autograd's backward
    threads, a server's pool) reads and writes there; before, sqlite3's same-thread check made
    the first such call bypass the db for the rest of the process, with a warning."""
    import threading
    import warnings

    db = PerfDb(tmp_path / "user.sqlite")
    timings = {"gemm.cublas": (1.0, "ok", None)}
    assert db.record(ENV, "gemm.bf16.rr.m1.n2.k3", "gemm.cublas", "hybrid", timings)
    seen = []

    def worker(i):
        seen.append(db.lookup(ENV, "gemm.bf16.rr.m1.n2.k3") is not None)
        seen.append(db.record(ENV, f"gemm.bf16.rr.m{i + 2}.n2.k3", "gemm.cublas", "hybrid",
                              timings))

    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a bypass warning fails the test
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert seen == [True] * 8 and db.usable and db.error is None
        assert all(db.lookup(ENV, f"gemm.bf16.rr.m{i + 2}.n2.k3") for i in range(4))


def test_tuning_file_round_trip(tmp_path):
    src = PerfDb(tmp_path / "a.db")
    src.record(ENV, "gemm.bf16.rr.m8.n8.k8", "gemm.cublas", "exhaustive",
               {"gemm.cublas": (0.01, "ok", ""), "gemm.ptr.m16n16k32.g1.w4.s3": (0.02, "ok", "")})
    src.mark_invalid(ENV, "gemm.bf16.rr.m8.n8.k8", "gemm.tma.m64n64k32.g1.w4.s2", "boom")
    assert src.export(tmp_path / "t.json") == 1
    dst = PerfDb(tmp_path / "b.db")
    assert dst.import_file(tmp_path / "t.json") == 1
    rec = dst.lookup(ENV, "gemm.bf16.rr.m8.n8.k8")
    assert rec.winner == "gemm.cublas" and rec.mode == "exhaustive"
    assert rec.invalid == {"gemm.tma.m64n64k32.g1.w4.s2"}
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(PerfDbError, match="not a tilepick tuning file"):
        dst.import_file(tmp_path / "bad.json")


def test_find_mode_from_environment(monkeypatch):
    monkeypatch.setenv("TILEPICK_FIND_MODE", "hybrid")
    assert mode_from_env() == "hybrid"
    monkeypatch.setenv("TILEPICK_FIND_MODE", "fastest")
    with pytest.raises(ValueError, match="TILEPICK_FIND_MODE"):
        mode_from_env()
    with pytest.raises(ValueError, match="unknown find mode"):
        Dispatcher(mode="nope", device=SimulatedDevice(), predictor=None, user_db=None)


def test_matmul_api_runs_triton_in_the_interpreter(tmp_path):
    """The real device under the interpreter: a model that ranks a Triton config first."""
    a, b = torch.randn(20, 40).bfloat16(), torch.randn(40, 24).bfloat16()
    p = GemmProblem.from_tensors(a, b)
    cid = solvers.SOLVERS["gemm.ptr"].default_config(p, HW).id
    d = Dispatcher(mode="heuristic", predictor=RankByList([cid]), user_db=None, hw=HW, env=ENV)
    y = tilepick.matmul(a, b, dispatcher=d)
    torch.testing.assert_close(y.float(), (a.float() @ b.float()), rtol=2e-2, atol=5e-2)
    assert d.cache[p].config_id == cid
    z = tilepick.linear(torch.randn(2, 5, 40).bfloat16(), b.t().contiguous(), dispatcher=d)
    assert z.shape == (2, 5, 24)


def test_matmul_runs_the_cublas_repack_candidate_on_a_column_major_x(tmp_path):
    """x.t() @ W with an odd token count (cuBLAS's align1 case): the vendor candidate that pads
    and copies is chosen, run through the prepared launch twice, and gives the product."""
    x = torch.randn(40, 21).bfloat16().t()          # 21 x 40, column-major, lda = 21
    w = torch.randn(40, 24).bfloat16()
    p = GemmProblem.from_tensors(x, w)
    assert p.layout == "cr" and solvers.SOLVERS["gemm.cublas_repack"].is_applicable(p, HW)
    d = Dispatcher(mode="heuristic", predictor=RankByList(["gemm.cublas_repack"]), user_db=None,
                   hw=HW, env=ENV)
    for _ in range(2):
        y = tilepick.matmul(x, w, dispatcher=d)
        torch.testing.assert_close(y.float(), x.float() @ w.float(), rtol=2e-2, atol=5e-2)
    assert d.cache[p].config_id == "gemm.cublas_repack"


def test_matmul_repeated_signature_runs_the_prepared_launch():
    """The second call with the same tensor signature runs the launch prepared on the first
    (one lookup in ``Dispatcher.bound``) on the new tensors; a changed decision empties it."""
    a, b = torch.randn(20, 40).bfloat16(), torch.randn(40, 24).bfloat16()
    p = GemmProblem.from_tensors(a, b)
    cid = solvers.SOLVERS["gemm.ptr"].default_config(p, HW).id
    d = Dispatcher(mode="heuristic", predictor=RankByList([cid]), user_db=None, hw=HW, env=ENV)
    tilepick.matmul(a, b, dispatcher=d)
    assert len(d.bound) == 1
    x, y = torch.randn(20, 40).bfloat16(), torch.randn(40, 24).bfloat16()
    calls = []
    (launch, *rest), = d.bound.values()
    d.bound[next(iter(d.bound))] = (lambda *t: calls.append(1) or launch(*t), *rest)
    z = tilepick.matmul(x, y, dispatcher=d)
    assert calls == [1]
    torch.testing.assert_close(z.float(), x.float() @ y.float(), rtol=2e-2, atol=5e-2)
    out = torch.empty(20, 24, dtype=torch.bfloat16)
    tilepick.matmul(a, b, out=out, dispatcher=d)      # out= has signatures of its own
    assert len(d.bound) == 2 and tilepick.matmul(x, y, out=out, dispatcher=d) is out
    torch.testing.assert_close(out.float(), x.float() @ y.float(), rtol=2e-2, atol=5e-2)
    d.decide(GemmProblem.from_tensors(a, b.t().contiguous().t()))   # any new decision
    assert d.bound == {}


def test_matmul_prepared_launch_that_fails_falls_back():
    """A kernel that starts failing after its launch was prepared: the call still returns the
    right product through the next candidate, the failure is recorded, and the next call
    prepares the new winner."""
    a, b = torch.randn(16, 32).bfloat16(), torch.randn(32, 8).bfloat16()
    p = GemmProblem.from_tensors(a, b)
    first = solvers.SOLVERS["gemm.ptr"].default_config(p, HW).id
    dev = SimulatedDevice()
    d = Dispatcher(mode="heuristic", device=dev, predictor=RankByList([first, "gemm.cublas"]),
                   user_db=None, hw=HW, env=ENV)
    tilepick.matmul(a, b, dispatcher=d)
    assert d.bound and d.cache[p].config_id == first
    dev.failing.add(first)
    y = tilepick.matmul(a, b, dispatcher=d)
    torch.testing.assert_close(y.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)
    assert d.cache[p].config_id != first and first in d.invalid[p] and d.stats["fallbacks"] == 1
    tilepick.matmul(a, b, dispatcher=d)
    assert dev.launched[-1] == (p.key(), d.cache[p].config_id) and len(d.bound) == 1


def test_matmul_api_bad_and_unsupported_input():
    d = Dispatcher(mode="heuristic", device=SimulatedDevice(), predictor=None, user_db=None,
                   hw=HW, env=ENV)
    with pytest.raises(tilepick.ProblemError, match="inner dimensions"):
        tilepick.matmul(torch.randn(3, 4), torch.randn(5, 6), dispatcher=d)
    x = torch.randn(3, 4, dtype=torch.float64)  # unsupported dtype: served by torch
    torch.testing.assert_close(tilepick.matmul(x, x.t(), dispatcher=d), x @ x.t())
    with pytest.raises(tilepick.ProblemError, match="3-D"):
        tilepick.bmm(torch.randn(3, 4), torch.randn(4, 3), dispatcher=d)


def test_matmul_api_non_tensors_and_empty_gemms():
    """Lists and arrays are named in the error (not an AttributeError from the signature);
    an empty GEMM gets torch's answer, an empty output or zeros for k = 0, as torch.matmul."""
    d = Dispatcher(mode="heuristic", device=SimulatedDevice(), predictor=None, user_db=None,
                   hw=HW, env=ENV)
    with pytest.raises(tilepick.ProblemError, match="a must be a torch.Tensor, got list"):
        tilepick.matmul([[1, 2]], [[1], [2]], dispatcher=d)
    with pytest.raises(tilepick.ProblemError, match="b must be a torch.Tensor, got ndarray"):
        tilepick.matmul(torch.randn(2, 2), torch.randn(2, 2).numpy(), dispatcher=d)
    b = torch.randn(32, 48).bfloat16()
    assert tilepick.matmul(torch.empty(0, 32, dtype=torch.bfloat16), b, dispatcher=d).shape \
        == (0, 48)
    z = tilepick.matmul(torch.empty(4, 0, dtype=torch.bfloat16),
                        torch.empty(0, 5, dtype=torch.bfloat16), dispatcher=d)
    assert z.shape == (4, 5) and not z.float().abs().any()
    out = torch.full((3, 0), 7.0, dtype=torch.bfloat16)
    assert tilepick.matmul(torch.randn(3, 8).bfloat16(), torch.empty(8, 0).bfloat16(), out=out,
                           dispatcher=d) is out
    assert d.stats["fallbacks"] == 0 and not d.cache


def test_cpu_tensors_without_the_interpreter_are_refused_and_nothing_is_recorded(
        tmp_path, monkeypatch):
    """Without TRITON_INTERPRET a CPU call cannot reach a kernel: a DeviceMismatch naming the
    device, before any candidate is tried; the user db keeps no "invalid" record of it (one
    would later keep the problem's Triton candidates from the interpreter too)."""
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    db = PerfDb(tmp_path / "user.sqlite")
    a, b = torch.randn(20, 40).bfloat16(), torch.randn(40, 24).bfloat16()
    p = GemmProblem.from_tensors(a, b)
    cid = solvers.SOLVERS["gemm.ptr"].default_config(p, HW).id
    for mode in ("heuristic", "hybrid"):
        d = Dispatcher(mode=mode, predictor=RankByList([cid, "gemm.cublas"]), user_db=db,
                       hw=HW, env=ENV)
        with pytest.raises(tilepick.DeviceMismatch, match="a is on the CPU.*TRITON_INTERPRET"):
            tilepick.matmul(a, b, dispatcher=d)
        with pytest.raises(tilepick.DeviceMismatch, match="a is on the CPU"):
            d.run(p, a, b, torch.empty(20, 24, dtype=torch.bfloat16))
        assert d.stats["fallbacks"] == 0 and not d.invalid and not d.cache
    assert db.lookup(ENV, p.key()) is None
    monkeypatch.setenv("TRITON_INTERPRET", "1")   # the same call under the interpreter runs
    y = tilepick.matmul(a, b, dispatcher=Dispatcher(mode="heuristic", predictor=RankByList(
        [cid]), user_db=db, hw=HW, env=ENV))
    torch.testing.assert_close(y.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


def test_matmul_out_checks_survive_the_signature_cache():
    """With ``out=``, the checks are remembered per tensor signature, but an output that
    aliases an operand is refused on every call, also when an earlier call with the same
    shapes and strides was fine; a wrong out is refused whatever was cached."""
    d = Dispatcher(mode="heuristic", device=SimulatedDevice(), predictor=None, user_db=None,
                   hw=HW, env=ENV)
    a, b = torch.randn(8, 8).bfloat16(), torch.randn(8, 8).bfloat16()
    out = torch.empty(8, 8, dtype=torch.bfloat16)
    for _ in range(2):   # the second call takes the cached path
        assert tilepick.matmul(a, b, out=out, dispatcher=d) is out
        torch.testing.assert_close(out.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)
    big = torch.randn(2, 8, 8).bfloat16()
    x, y = big[0], big[1]             # same shape, strides and alignment as a and out
    assert tilepick.matmul(x, b, out=y, dispatcher=d) is y   # cached signature, disjoint
    with pytest.raises(tilepick.ProblemError, match="aliases input a"):
        tilepick.matmul(x, b, out=x, dispatcher=d)
    with pytest.raises(tilepick.ProblemError, match="aliases input b"):
        tilepick.matmul(a, x, out=x, dispatcher=d)
    with pytest.raises(tilepick.ProblemError, match="shape"):
        tilepick.matmul(a, b, out=torch.empty(8, 9, dtype=torch.bfloat16), dispatcher=d)
    with pytest.raises(tilepick.ProblemError, match="out must be"):
        tilepick.matmul(a, b, out=[1, 2], dispatcher=d)


def test_module_under_torch_compile_calls_the_custom_op():
    """An nn.Module that uses tilepick.linear compiles in one graph (fullgraph) through the
    custom op tilepick::matmul, and gives the eager result; the op runs the dispatcher."""
    class Proj(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(24, 40).bfloat16(), requires_grad=False)

        def forward(self, x):
            return tilepick.linear(x, self.weight)

    seen = []

    def backend(gm, example_inputs):   # records the graph, runs it as is
        seen.extend(str(n.target) for n in gm.graph.nodes)
        return gm.forward

    dev = SimulatedDevice()
    d = Dispatcher(mode="heuristic", device=dev, predictor=None, user_db=None, hw=HW, env=ENV)
    tilepick.set_dispatcher(d)
    try:
        m = Proj()
        x = torch.randn(3, 40).bfloat16()
        eager = m(x)
        torch._dynamo.reset()
        compiled = torch.compile(m, backend=backend, fullgraph=True)(x)
    finally:
        tilepick.set_dispatcher(None)
        torch._dynamo.reset()
    assert any("tilepick.matmul" in t for t in seen), seen
    torch.testing.assert_close(compiled, eager)
    torch.testing.assert_close(eager.float(), x.float() @ m.weight.float().t(), rtol=2e-2,
                               atol=5e-2)
    assert len(dev.launched) == 2   # eager and compiled calls both went through the dispatcher


def _grads(fn, *tensors):
    """fn's inputs' gradients under loss = sum(fn(...)^2), on fresh leaves."""
    leaves = [t.detach().clone().requires_grad_(t.requires_grad) for t in tensors]
    fn(*leaves).float().square().sum().backward()
    return [t.grad for t in leaves]


def test_matmul_linear_bmm_are_differentiable():
    """Inputs that require grad get torch's gradients (the kernels' output had no grad_fn, so
    a training step lost the weight's gradient silently); the backward GEMMs go through the
    dispatcher too; under no_grad nothing is recorded; out= with autograd is torch's refusal."""
    dev = SimulatedDevice()
    d = Dispatcher(mode="heuristic", device=dev, predictor=None, user_db=None, hw=HW, env=ENV)
    a = torch.randn(16, 32, requires_grad=True)
    b = torch.randn(32, 8, requires_grad=True)
    for got, want in zip(_grads(lambda x, y: tilepick.matmul(x, y, dispatcher=d), a, b),
                         _grads(torch.matmul, a, b)):
        torch.testing.assert_close(got, want)
    assert len(dev.launched) == 3          # the product and its two gradients
    x = torch.randn(2, 3, 32, requires_grad=True)
    w = torch.randn(8, 32, requires_grad=True)
    bias = torch.randn(8, requires_grad=True)
    for got, want in zip(_grads(lambda *t: tilepick.linear(*t, dispatcher=d), x, w, bias),
                         _grads(torch.nn.functional.linear, x, w, bias)):
        torch.testing.assert_close(got, want)
    p, q = torch.randn(3, 5, 7), torch.randn(3, 7, 4, requires_grad=True)   # only q's
    gp, gq = _grads(lambda u, v: tilepick.bmm(u, v, dispatcher=d), p, q)
    assert gp is None
    torch.testing.assert_close(gq, _grads(torch.bmm, p, q)[1])
    with torch.no_grad():
        assert not tilepick.matmul(a, b, dispatcher=d).requires_grad
    with pytest.raises(RuntimeError, match="out="):
        tilepick.matmul(a, b, out=torch.empty(16, 8), dispatcher=d)


def test_custom_op_is_differentiable_in_a_compiled_graph():
    """A module whose weight requires grad, compiled through AOTAutograd (aot_eager): the
    forward and both gradients are tilepick::matmul calls and equal eager torch's."""
    class Proj(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(24, 40))

        def forward(self, x):
            return tilepick.linear(x, self.weight)

    dev = SimulatedDevice()
    tilepick.set_dispatcher(Dispatcher(mode="heuristic", device=dev, predictor=None,
                                       user_db=None, hw=HW, env=ENV))
    try:
        m, x = Proj(), torch.randn(3, 40, requires_grad=True)
        torch._dynamo.reset()
        torch.compile(m, backend="aot_eager", fullgraph=True)(x).square().sum().backward()
    finally:
        tilepick.set_dispatcher(None)
        torch._dynamo.reset()
    got = (m.weight.grad, x.grad)
    want = _grads(lambda u, v: torch.nn.functional.linear(u, v), x, m.weight)
    torch.testing.assert_close(got[0], want[1])
    torch.testing.assert_close(got[1], want[0])
    assert len(dev.launched) == 3


def test_matmul_takes_torch_matmuls_other_shapes():
    """x @ W with a batched x folds into one 2-D GEMM, equal batch dims beyond one into one
    batched GEMM (one launch each, as torch.matmul folds them); 1-D operands and broadcast
    batches get torch.matmul's own result; gradients flow through the folds."""
    dev = SimulatedDevice()
    d = Dispatcher(mode="heuristic", device=dev, predictor=None, user_db=None, hw=HW, env=ENV)
    x, w = torch.randn(2, 3, 5, 16), torch.randn(16, 8)
    torch.testing.assert_close(tilepick.matmul(x, w, dispatcher=d), torch.matmul(x, w))
    assert len(dev.launched) == 1 and ".rr.m30.n8.k16" in dev.launched[-1][0]
    p, q = torch.randn(2, 3, 5, 16), torch.randn(2, 3, 16, 4)
    torch.testing.assert_close(tilepick.matmul(p, q, dispatcher=d), torch.matmul(p, q))
    assert len(dev.launched) == 2 and ".m5.n4.k16.b6" in dev.launched[-1][0]
    for u, v in ((torch.randn(16), w), (x, torch.randn(16)), (torch.randn(2, 1, 5, 16), q),
                 (torch.randn(5, 16), torch.randn(3, 16, 4))):
        torch.testing.assert_close(tilepick.matmul(u, v, dispatcher=d), torch.matmul(u, v))
    assert len(dev.launched) == 2          # torch served those
    out = torch.empty(2, 3, 5, 8)
    assert tilepick.matmul(x, w, out=out, dispatcher=d) is out
    torch.testing.assert_close(out, torch.matmul(x, w))
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
    for got, want in zip(_grads(lambda u, v: tilepick.matmul(u, v, dispatcher=d), xg, wg),
                         _grads(torch.matmul, xg, wg)):
        torch.testing.assert_close(got, want)


def test_custom_op_fake_shape():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(7, 16, dtype=torch.bfloat16)
        b = torch.empty(16, 9, dtype=torch.bfloat16)
        y = torch.ops.tilepick.matmul(a, b)
    assert tuple(y.shape) == (7, 9) and y.dtype == torch.bfloat16


def test_db_cli(tmp_path):
    from typer.testing import CliRunner

    from tilepick.cli import app

    path = tmp_path / "cli.db"
    PerfDb(path).record(ENV, "gemm.bf16.rr.m8.n8.k8", "gemm.cublas", "hybrid",
                        {"gemm.cublas": (0.01, "ok", "")})
    r = CliRunner().invoke(app, ["db", "list", "--db", str(path), "--json"])
    assert r.exit_code == 0 and json.loads(r.output)[0]["winner"] == "gemm.cublas"
    r = CliRunner().invoke(app, ["db", "show", "gemm.bf16.rr.m8.n8.k8", "--db", str(path)])
    assert r.exit_code == 0 and "gemm.cublas" in r.output and "0.0100 ms" in r.output
    out = tmp_path / "t.json"
    assert CliRunner().invoke(app, ["db", "export", "--out", str(out), "--db", str(path)]).exit_code == 0
    r = CliRunner().invoke(app, ["db", "import", str(out), "--db", str(tmp_path / "n.db")])
    assert r.exit_code == 0 and "1 problems imported" in r.output
    assert CliRunner().invoke(app, ["db", "clear", "--db", str(path)]).exit_code == 2
    r = CliRunner().invoke(app, ["db", "clear", "--yes", "--db", str(path)])
    assert r.exit_code == 0 and PerfDb(path).entries() == []
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_db_winner_refused_by_todays_rules_is_not_served(tmp_path, frame, problem_rows):
    p, rows = problem_rows
    # a tile far larger than the problem needs: the solver's size rule refuses it
    too_big = "gemm.ptr.m128n128k128.g8.w8.s3"   # valid on 4096^3, not on 16^3
    small = GemmProblem(16, 16, 16)
    assert too_big in {c.id for c in solvers.applicable_configs(GemmProblem(4096, 4096, 4096), HW)}
    assert too_big not in {c.id for c in solvers.applicable_configs(small, HW)}
    db = PerfDb(tmp_path / "user.db")
    db.record(ENV, small.key(), too_big, "hybrid", {too_big: (0.001, "ok", "")})
    d, dev = make(tmp_path, "db", RankByList(["gemm.cublas"]), frame)
    decision = d.decide(small)
    assert decision.config_id == "gemm.cublas" and decision.source == "model"
    assert d.stats["db_hits"] == 0
    # a valid stored winner is served
    db.record(ENV, p.key(), "gemm.cublas", "hybrid", {"gemm.cublas": (0.1, "ok", "")})
    assert d.decide(p).source == "db" and d.stats["db_hits"] == 1


def test_torch_served_call_makes_no_default_dispatcher():
    """A call tilepick hands to torch (float64 here) needs no dispatcher, so none is built
    (no model, perf-db or device is touched for it)."""
    from tilepick import api

    tilepick.set_dispatcher(None)
    x = torch.randn(3, 4, dtype=torch.float64)
    for _ in range(2):
        torch.testing.assert_close(tilepick.matmul(x, x.t()), x @ x.t())
    torch.testing.assert_close(tilepick.matmul(x, x.t(), out=torch.empty(3, 3, dtype=torch.float64)),
                               x @ x.t())
    assert api._default is None


def test_matmul_repeated_signature_with_cublas_lets_torch_allocate():
    """A cuBLAS decision's prepared launch for a fresh output is torch.matmul itself
    (``Solver.bind_new``: no Python allocation on the hot path); with ``out=`` the launch
    writes into the caller's tensor; one that raises falls back like any prepared launch."""
    a, b = torch.randn(12, 40).bfloat16(), torch.randn(40, 24).bfloat16()
    d = Dispatcher(mode="heuristic", predictor=RankByList(["gemm.cublas"]), user_db=None,
                   hw=HW, env=ENV)
    tilepick.matmul(a, b, dispatcher=d)
    (launch, p, shape, dtype, new), = d.bound.values()
    assert new is torch.matmul and shape == (12, 24) and dtype is torch.bfloat16
    calls = []
    d.bound[next(iter(d.bound))] = (launch, p, shape, dtype,
                                    lambda x, y: calls.append(1) or new(x, y))
    x, y = torch.randn(12, 40).bfloat16(), torch.randn(40, 24).bfloat16()
    z = tilepick.matmul(x, y, dispatcher=d)
    assert calls == [1] and z.shape == (12, 24) and z.dtype is torch.bfloat16
    torch.testing.assert_close(z.float(), x.float() @ y.float(), rtol=2e-2, atol=5e-2)
    out = torch.empty(12, 24, dtype=torch.bfloat16)
    assert tilepick.matmul(x, y, out=out, dispatcher=d) is out and calls == [1]
    torch.testing.assert_close(out.float(), x.float() @ y.float(), rtol=2e-2, atol=5e-2)

    def broken(x, y):
        raise RuntimeError("launch failed")
    d.bound[next(iter(d.bound))] = (launch, p, shape, dtype, broken)
    z = tilepick.matmul(x, y, dispatcher=d)   # served by run(); the entry is dropped
    torch.testing.assert_close(z.float(), x.float() @ y.float(), rtol=2e-2, atol=5e-2)


def test_bind_new_only_where_the_launch_allocates_no_cheaper():
    """Only plain cuBLAS on bf16/fp16 makes its own output: the repack copies need the
    caller-shaped output, fp32 toggles tf32 around the call, Triton configs write into one."""
    a, b = torch.randn(8, 16).bfloat16(), torch.randn(16, 8).bfloat16()
    p = GemmProblem.from_tensors(a, b)
    assert solvers.bind_new(p, "gemm.cublas", a, b) is torch.matmul
    assert solvers.bind_new(p, "gemm.cublas_repack", a, b) is None
    assert solvers.bind_new(p, solvers.SOLVERS["gemm.ptr"].default_config(p, HW).id, a, b) is None
    p32 = GemmProblem.from_tensors(a.float(), b.float())
    assert solvers.bind_new(p32, "gemm.cublas", a.float(), b.float()) is None


def test_real_device_duels_with_more_rounds_than_its_first_pass(monkeypatch):
    from tilepick.bench import timing
    from tilepick.bench.timing import Rounds
    from tilepick.dispatch.devices import RealDevice

    asked = []

    def interleaved(fns, rounds, **kw):
        asked.append(rounds)
        return {n: Rounds((1.0,) * rounds, 1.0 * rounds) for n in fns}

    monkeypatch.setattr(timing, "interleaved", interleaved)
    dev = RealDevice(rounds=3, duel_rounds=15)
    monkeypatch.setattr(dev, "launch", lambda *a, **k: None)
    p = GemmProblem(16, 32, 64)
    assert dev.can_duel() and not RealDevice(rounds=5, duel_rounds=5).can_duel()
    first = dev.benchmark(p, ["x", "y"], None, None, None)
    duel = dev.duel(p, ["x", "y"], None, None, None)
    assert asked == [3, 15]
    assert len(first["x"].rounds_ms) == 3 and len(duel["y"].rounds_ms) == 15
