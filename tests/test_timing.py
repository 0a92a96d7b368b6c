"""Timing statistics and the runner that judges one candidate (ok / wrong / invalid / n.a.)."""

from collections import Counter

import pytest
import torch

from tilepick import solvers
from tilepick.bench import timing
from tilepick.bench.runner import ProblemInputs, RunResult, run_config
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.solvers import ConfigInvalidError
from tilepick import tensors
from tilepick.tensors import reference, tolerance

# -- statistics ------------------------------------------------------------------------------


@pytest.mark.parametrize("xs, q, expected", [
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.5, 3.0),
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.2, 1.8),    # position 0.8 between 1 and 2
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.8, 4.2),    # position 3.2 between 4 and 5
    ([5.0, 1.0, 4.0, 2.0, 3.0], 0.2, 1.8),    # order does not matter
    ([10.0, 20.0], 0.2, 12.0),
    ([10.0, 20.0], 0.8, 18.0),
    ([7.0], 0.2, 7.0),
    ([3.0, 1.0, 2.0], 0.0, 1.0),
    ([3.0, 1.0, 2.0], 1.0, 3.0),
    ([2.0, 2.0, 2.0, 9.0], 0.5, 2.0),
])
def test_quantile(xs, q, expected):
    assert timing._quantile(xs, q) == pytest.approx(expected)


def test_quantile_does_not_sort_in_place():
    xs = [3.0, 1.0, 2.0]
    timing._quantile(xs, 0.5)
    assert xs == [3.0, 1.0, 2.0]


def test_summarize_even_count():
    t = timing.summarize([4.0, 1.0, 3.0, 2.0])
    # sorted 1 2 3 4: median 2.5; p20 at position 0.6 -> 1.6; p80 at position 2.4 -> 3.4
    assert t.ms == pytest.approx(2.5)
    assert t.p20_ms == pytest.approx(1.6)
    assert t.p80_ms == pytest.approx(3.4)
    assert t.reps == 4 and t.meaningful and not t.stopped_early


def test_summarize_odd_count_and_flags():
    t = timing.summarize([0.9, 0.5, 0.7, 0.6, 0.8, 10.0], meaningful=False, stopped_early=True)
    # sorted .5 .6 .7 .8 .9 10: median .75; p20 at 1.0 -> .6; p80 at 4.0 -> .9
    assert (t.ms, t.p20_ms, t.p80_ms) == pytest.approx((0.75, 0.6, 0.9))
    assert t.reps == 6 and not t.meaningful and t.stopped_early
    assert t.p20_ms <= t.ms <= t.p80_ms


def test_summarize_single_sample():
    t = timing.summarize([1.25])
    assert (t.ms, t.p20_ms, t.p80_ms, t.reps) == (1.25, 1.25, 1.25, 1)


def test_timing_to_dict():
    d = timing.summarize([1.0, 2.0, 3.0]).to_dict()
    assert d == {"ms": 2.0, "p20_ms": pytest.approx(1.4), "p80_ms": pytest.approx(2.6), "reps": 3,
                 "meaningful": True, "stopped_early": False}


# -- time_fn under the interpreter -----------------------------------------------------------


@pytest.mark.parametrize("reps, calls", [(25, 2), (2, 2), (1, 1)])
def test_time_fn_interpreter(reps, calls):
    n = []
    t = timing.time_fn(lambda: n.append(1), reps=reps)
    assert len(n) == calls  # no warmup, no L2 flush, no CUDA events on the CPU
    assert t.meaningful is False
    assert t.reps == calls
    assert t.ms >= 0 and t.p20_ms <= t.ms <= t.p80_ms


def test_interleaved_interpreter():
    order = []
    out = timing.interleaved({"a": lambda: order.append("a"), "b": lambda: order.append("b")},
                             rounds=3, reps=1)
    assert set(out) == {"a", "b"}
    assert all(len(v.rounds_ms) == 3 and not v.meaningful for v in out.values())
    assert order == ["a", "b"] * 3


@pytest.mark.parametrize("n", range(1, 9))
def test_carryover_balanced_orders(n):
    """Every order a permutation; every candidate right after every other one equally often,
    and first equally often (a Williams design)."""
    orders = timing.carryover_balanced_orders(n)
    assert len(orders) == (n if n % 2 == 0 or n == 1 else 2 * n)
    assert all(sorted(o) == list(range(n)) for o in orders)
    follows = Counter((o[j - 1], o[j]) for o in orders for j in range(1, n))
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b]
    assert all(follows[p] == follows[pairs[0]] for p in pairs)
    assert not any(a == b for a, b in follows)
    assert Counter(o[0] for o in orders) == Counter({i: len(orders) // n for i in range(n)})


def test_interleaved_rounds_vary_the_order(monkeypatch):
    """On the GPU each round queues the candidates' blocks in the next order of the Williams
    design, so no candidate always runs after the same one (the rotation it replaced kept
    every candidate's predecessor)."""
    orders = []

    def fake_gather(fns, want, host_ms=0.1, **kw):
        orders.append(list(want))
        return {k: [1.0] * n for k, n in want.items()}, host_ms

    monkeypatch.setattr(timing, "interpreting", lambda: False)
    monkeypatch.setattr(timing, "gather", fake_gather)
    names = ["a", "b", "c", "d", "e", "f"]
    out = timing.interleaved({n: (lambda: None) for n in names}, rounds=3, reps=2, max_ms=1)
    sizing, *rounds = orders
    assert sizing == names
    design = timing.carryover_balanced_orders(len(names))
    assert rounds == [[names[j] for j in design[i]] for i in range(3)]
    before = {n: {r[r.index(n) - 1] for r in rounds if r.index(n) > 0} for n in names}
    assert all(len(b) >= 2 for n, b in before.items() if sum(r.index(n) > 0 for r in rounds) >= 2)
    assert all(len(out[n].rounds_ms) == 3 for n in names)


# -- repetition plan (the GPU loop's decisions, without a GPU) --------------------------------


def plan(samples, n, stop_ms=None, reps=10, min_reps=3, max_ms=25.0):
    return timing.next_target(samples, n, reps=reps, min_reps=min_reps, max_ms=max_ms,
                              stop_ms=stop_ms)


def test_probe_stops_a_candidate_far_beyond_the_bound():
    bound = 1.5  # 1.5x a best of 1.0 ms
    assert plan([timing.PROBE_FACTOR * bound * 1.01], 1, stop_ms=bound) == (1, True)
    # inside PROBE_FACTOR x the bound: on to the first batch of min_reps samples
    assert plan([timing.PROBE_FACTOR * bound * 0.99], 1, stop_ms=bound) == (3, False)
    assert plan([0.5], 1, stop_ms=bound) == (3, False)


def test_first_batch_sizes_the_rest_and_may_stop():
    # 3 samples of 1 ms, 25 ms budget: up to reps=10
    assert plan([1.0, 1.0, 1.0], 3) == (10, False)
    assert plan([5.0, 5.0, 5.0], 3) == (5, False)
    assert plan([50.0, 50.0, 50.0], 3) == (3, False)   # never below min_reps
    assert plan([2.0, 2.0, 2.0], 3, stop_ms=1.5) == (10, True)   # median over the bound
    assert plan([1.0, 1.0, 2.0], 3, stop_ms=1.5) == (10, False)
    # later batches: the target stays
    assert plan([1.0] * 10, 10, stop_ms=1.5) == (10, False)


def test_min_reps_of_one_probe_is_the_first_batch():
    assert plan([1.0], 1, stop_ms=10.0, min_reps=1) == (10, False)
    assert plan([1.0], 1, min_reps=1) == (10, False)


# -- runner ----------------------------------------------------------------------------------

PROBLEM = GemmProblem(64, 64, 64, dtype="bf16")
TMA = KernelConfig.from_id("gemm.tma.m64n64k32.g1.w4.s2")


@pytest.fixture
def data():
    return ProblemInputs.make(PROBLEM, "cpu", seed=0)


def test_problem_inputs_reference_is_cached(data):
    ref = data.ref
    assert ref.rows is None and ref.cols is None  # small output: checked in full
    assert ref.values.dtype == torch.float64 and ref.values.shape == (64, 64)
    assert torch.equal(ref.values, reference(PROBLEM, data.inputs))
    assert data.ref is ref


def test_run_config_large_output_lattice_check(monkeypatch):
    """Large outputs are checked on a lattice; an unwritten element anywhere still fails."""
    monkeypatch.setattr(tensors, "FULL_CHECK_MAX_ELEMS", 1 << 12)
    p = GemmProblem(1024, 512, 16, dtype="fp16")
    data = ProblemInputs.make(p, "cpu", seed=0)
    assert data.ref.rows is not None and len(data.ref.rows) < p.m
    assert run_config(p, "gemm.cublas", data, timed=False).status == "ok"
    original = solvers.SOLVERS["gemm.cublas"].launch

    def one_hole(problem, config, a, b, out, scale_a=None, scale_b=None):
        original(problem, config, a, b, out, scale_a, scale_b)
        out[1023, 511] = float("nan")
        return out

    monkeypatch.setattr(solvers.SOLVERS["gemm.cublas"], "launch", one_hole)
    res = run_config(p, "gemm.cublas", data, timed=False)
    assert res.status == "wrong" and res.rel_error == float("inf")


def test_run_config_ok(data):
    res = run_config(PROBLEM, TMA, data, timed=False)
    assert res.status == "ok" and res.ok
    assert res.config_id == TMA.id
    assert 0 <= res.rel_error <= tolerance(PROBLEM)
    assert res.timing is None and res.reason == ""
    assert not bool(torch.isnan(data.inputs.out).any())


def test_run_config_ok_timed_and_string_id(data):
    res = run_config(PROBLEM, TMA.id, data)
    assert res.status == "ok"
    assert res.timing is not None and res.timing.meaningful is False
    d = res.to_dict()
    assert d["status"] == "ok" and d["config_id"] == TMA.id
    assert {"ms", "p20_ms", "p80_ms", "reps", "meaningful"} <= set(d)


def test_run_config_unchecked(data):
    res = run_config(PROBLEM, TMA, data, check=False, timed=False)
    assert res.status == "ok" and res.rel_error is None


def test_run_config_cublas(data):
    res = run_config(PROBLEM, "gemm.cublas", data, timed=False)
    assert res.status == "ok" and res.rel_error <= tolerance(PROBLEM)


def test_run_config_not_applicable():
    p = GemmProblem(64, 64, 64, lda=65, dtype="fp16")
    data = ProblemInputs.make(p, "cpu")
    res = run_config(p, "gemm.tma.m64n64k32.g1.w4.s2", data)
    assert res.status == "not_applicable" and not res.ok
    assert "lda=65" in res.reason and "16" in res.reason
    assert res.rel_error is None and res.timing is None
    assert bool(torch.isnan(data.inputs.out).all())  # never launched


def test_run_config_wrong_when_kernel_writes_garbage(data, monkeypatch):
    calls = []

    def zeros(problem, config, a, b, out, scale_a=None, scale_b=None):
        calls.append(config.id)
        out.zero_()
        return out

    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", zeros)
    res = run_config(PROBLEM, TMA, data)
    assert res.status == "wrong" and not res.ok
    assert res.rel_error == pytest.approx(1.0)
    assert "tolerance" in res.reason
    assert res.timing is None  # a wrong candidate is not timed
    assert calls == [TMA.id]


def test_run_config_wrong_when_output_not_written(data, monkeypatch):
    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", lambda p, c, a, b, out, *s: out)
    res = run_config(PROBLEM, TMA, data, timed=False)
    assert res.status == "wrong" and res.rel_error == float("inf")


def test_run_config_wrong_when_slightly_off(data, monkeypatch):
    original = solvers.SOLVERS["gemm.tma"].launch

    def off(problem, config, a, b, out, scale_a=None, scale_b=None):
        original(problem, config, a, b, out, scale_a, scale_b)
        out.mul_(1.05)  # 5% off: above the bf16 tolerance of 2%
        return out

    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", off)
    res = run_config(PROBLEM, TMA, data, timed=False)
    assert res.status == "wrong" and 0.02 < res.rel_error < 0.1


def test_run_config_refills_output_before_checking(data):
    data.inputs.out.fill_(0.0)  # a stale (or correct) previous result must not count
    assert run_config(PROBLEM, TMA, data, timed=False).status == "ok"


@pytest.mark.parametrize("exc, reason", [
    (ConfigInvalidError("gemm.tma... failed: OutOfResources"), "OutOfResources"),
    (RuntimeError("launch failed\nsecond line"), "RuntimeError: launch failed"),
])
def test_run_config_invalid(data, monkeypatch, exc, reason):
    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", fail)
    res = run_config(PROBLEM, TMA, data)
    assert res.status == "invalid" and reason in res.reason
    assert "second line" not in res.reason


def test_run_result_to_dict_without_timing():
    d = RunResult("gemm.cublas", "not_applicable", reason="why").to_dict()
    assert d == {"config_id": "gemm.cublas", "status": "not_applicable", "rel_error": None,
                 "reason": "why"}


# -- allocations that outlive a call -----------------------------------------------------------

def test_kept_allocations_run_on_a_fresh_thread_with_the_callers_stream(monkeypatch):
    """torch.compile's cudagraph warm-up routes every allocation of the warming thread into
    the graph's pool (and then refuses pool tensors that are not outputs), so per-stream
    workspaces and the L2 flush buffer are made on another thread, with the caller's device
    and stream. CUDA stand-ins show the plumbing on the CPU; the GPU check is
    benchmarks/graph_capture_check.py."""
    import contextlib
    import threading

    from tilepick import runtime

    entered = []

    @contextlib.contextmanager
    def enter(kind, what):
        entered.append((kind, what, threading.current_thread().name))
        yield

    monkeypatch.setattr(runtime, "interpreting", lambda: False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda d=None: ("stream-of", str(d)))
    monkeypatch.setattr(torch.cuda, "device", lambda d: enter("device", str(d)))
    monkeypatch.setattr(torch.cuda, "stream", lambda s: enter("stream", s))
    made_on = runtime.allocate_outside_graph_pools(lambda: threading.current_thread().name)
    assert made_on == "tilepick-alloc" != threading.current_thread().name
    assert entered == [("device", "cuda:3", "tilepick-alloc"),
                       ("stream", ("stream-of", "cuda:3"), "tilepick-alloc")]

    def fails():
        raise ValueError("out of memory, say")

    with pytest.raises(ValueError, match="out of memory"):   # the caller sees the error
        runtime.allocate_outside_graph_pools(fails)
    # a CPU device (the interpreter's workspaces) is made where it is asked for
    entered.clear()
    assert runtime.allocate_outside_graph_pools(lambda: threading.current_thread().name,
                                                torch.device("cpu")) \
        == threading.current_thread().name and entered == []


def test_raw_stream_getter_is_torchs_c_call_or_the_public_spelling(monkeypatch):
    """A cached launch asks for its stream on every call: torch's one C call where torch has
    it, else torch.cuda.current_stream(...).cuda_stream, the same handle."""
    torch = pytest.importorskip("torch")
    from tilepick import runtime

    monkeypatch.delattr(torch._C, "_cuda_getCurrentRawStream", raising=False)
    monkeypatch.setattr(torch.cuda, "current_stream",
                        lambda d=None: type("S", (), {"cuda_stream": 0x50 + d})())
    assert runtime.raw_stream_getter()(2) == 0x52
    raw = lambda index: 0x70 + index   # noqa: E731
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", raw, raising=False)
    assert runtime.raw_stream_getter() is raw
