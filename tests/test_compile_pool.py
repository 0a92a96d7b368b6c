"""The compile pool's workers: how they start, and what a failing task reports."""

import os
import sys

import pytest

from tilepick.bench import compile_pool


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
    pkey, cid, ok, reason, secs = compile_pool._warm(("gemm.bf16.rr.m8.n8.k8", "not-a-config"))
    assert (pkey, cid, ok) == ("gemm.bf16.rr.m8.n8.k8", "not-a-config", False)
    assert reason.split(":")[0].endswith("Error") and secs >= 0
