"""The compile pool's workers: how they start, and what a failing task reports."""

import os
import sys

import pytest

from tilepick import solvers
from tilepick.bench import compile_pool
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem


def _worker_state(_):
    import torch

    return (os.getpid(), "torch" in sys.modules, "tilepick.solvers" in sys.modules,
            "tilepick.kernels.gemm_ptr" in sys.modules, torch.cuda.is_initialized())


def test_start_method_default_env_and_bad_name(monkeypatch):
    monkeypatch.delenv("TILEPICK_COMPILE_START", raising=False)
    assert compile_pool.start_method() == "forkserver"
    monkeypatch.setenv("TILEPICK_COMPILE_START", "spawn")
    assert compile_pool.start_method() == "spawn"
    assert compile_pool.start_method("forkserver") == "forkserver"   # the caller wins
    monkeypatch.setenv("TILEPICK_COMPILE_START", "fork")
    with pytest.raises(ValueError, match="TILEPICK_COMPILE_START"):
        compile_pool.start_method()


@pytest.mark.parametrize("method", compile_pool.START_METHODS)
def test_workers_start_with_the_kernels_importable_and_no_cuda(method):
    with compile_pool.make_pool(2, method) as pool:
        states = list(pool.map(_worker_state, range(4)))
    assert all(s[0] != os.getpid() for s in states)
    assert not any(s[4] for s in states)          # no worker inherits a CUDA context
    if method == "forkserver":                    # imported once by the server, before the task
        assert all(s[1] and s[2] and s[3] for s in states)


def test_a_failing_task_is_a_result_with_its_reason():
    task = ("gemm.bf16.rr.m8.n8.k8", "not-a-config", 0)
    got, ok, reason, secs = compile_pool._warm(task)
    assert got == task and not ok
    assert reason.split(":")[0].endswith("Error") and secs >= 0


P = GemmProblem(64, 512, 8192)


def _cfg(family, sk=1):
    return KernelConfig(family, 32, 64, 64, 8, 4, 3, sk)


def test_split_counts_share_the_gemm_binary_but_not_the_reduction():
    det = [_cfg("gemm.splitk", sk) for sk in (2, 4, 8)]
    atomic = [_cfg("gemm.splitk_atomic", sk) for sk in (2, 4, 8)]
    tasks, needs = compile_pool.binary_tasks([(P, c) for c in det + atomic])
    # one GEMM binary per family; the deterministic reduction unrolls its slices (one per
    # split count), the atomic one always reads one slice
    assert sorted(k[0] for k in tasks) == ["gemm_ptr_kernel"] * 2 + ["splitk_reduce_kernel"] * 4
    assert all(len(needs[(P.key(), c.id)]) == 2 for c in det + atomic)
    assert needs[(P.key(), det[0].id)][0] == needs[(P.key(), det[2].id)][0]
    assert needs[(P.key(), det[0].id)][1] != needs[(P.key(), det[2].id)][1]


def test_binaries_differ_with_what_triton_specialises_on():
    c = _cfg("gemm.ptr")
    variants = [P, GemmProblem(64, 512, 8192, layout="rc"), GemmProblem(64, 512, 8192, dtype="fp16"),
                GemmProblem(64, 512, 8192, base_align=2),
                GemmProblem(64, 512, 8160)]   # K no longer a multiple of BLOCK_K: EVEN_K flips
    keys = {solvers.SOLVERS[c.family].binaries(q, c) for q in variants}
    assert len(keys) == len(variants)
    # sizes alone are run-time arguments: another M and N reuse the binary
    assert (solvers.SOLVERS[c.family].binaries(GemmProblem(100, 320, 8192), c)
            == solvers.SOLVERS[c.family].binaries(P, c))


def test_repack_compiles_the_tma_binary_of_its_aligned_problem():
    odd = GemmProblem(64, 500, 1000, lda=1001, ldb=501, ldc=501)
    c_tma, c_rep = _cfg("gemm.tma"), _cfg("gemm.tma_repack")
    rep = solvers.SOLVERS["gemm.tma_repack"]
    assert rep.binaries(odd, c_rep) == solvers.SOLVERS["gemm.tma"].binaries(
        rep.aligned_problem(odd), c_tma)


def test_a_pairs_result_combines_its_binaries(monkeypatch):
    import tilepick.runtime

    monkeypatch.setattr(tilepick.runtime, "interpreting", lambda: False)

    class Inline:   # the pool, run in this process
        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, task):
            from concurrent.futures import Future

            f = Future()
            f.set_result((task, task[2] == 0, "" if task[2] == 0 else "PTXASError: boom", 0.5))
            return f

    monkeypatch.setattr(compile_pool, "make_pool", Inline)
    det = [_cfg("gemm.splitk", sk) for sk in (2, 4)] + [_cfg("gemm.ptr")]
    res = compile_pool.compile_all([(P, c) for c in det], progress=False)
    ptr = res[(P.key(), det[2].id)]
    assert ptr.ok and ptr.seconds == 0.5 and len(ptr.binaries) == 1
    for c in det[:2]:   # the shared GEMM compiled, each reduction failed
        r = res[(P.key(), c.id)]
        assert not r.ok and r.reason == "PTXASError: boom" and r.seconds == 1.0
    assert compile_pool.binaries_of(res) == 4


@pytest.mark.parametrize("family", ["gemm.ptr", "gemm.splitk", "gemm.splitk_atomic", "gemm.tma",
                                    "gemm.tma_persistent", "gemm.tma_repack"])
def test_binaries_name_each_launch_of_calls(family):
    """The pool compiles what ``binaries`` lists: one key per launch ``calls`` makes, in order
    (a launch added to ``calls`` but not to ``kernels`` would go uncompiled ahead)."""
    from tilepick.solvers.triton_gemm import _as3d
    from tilepick.tensors import make_inputs

    p = GemmProblem(64, 500, 1000, lda=1001) if family == "gemm.tma_repack" else P
    solver = solvers.SOLVERS[family]
    c = _cfg(family, 4 if "splitk" in family else 1)
    q = solver.compiled_problem(p)
    inp = make_inputs(q, "cpu")
    launched = [getattr(k, "__name__", None) or k.fn.__name__
                for k, *_ in solver.calls(q, c, _as3d(inp.a), _as3d(inp.b), _as3d(inp.out),
                                          inp.scale_a, inp.scale_b)]
    assert launched == [k[0] for k in solver.binaries(p, c)]
