"""The other-GPU guard of tilepick.matmul's hot path (runtime.device_guard_getter), with torch's
CUDA queries replaced: Triton and cuBLASLt launch on the current device, so tensors of another
GPU need its context entered, and a process with one GPU need not ask on every call."""

import pytest
import torch

from tilepick.runtime import device_guard_getter


class FakeCudaTensor:
    is_cuda = True

    def __init__(self, index: int):
        self.device = f"cuda:{index}"
        self._index = index

    def get_device(self) -> int:
        return self._index


@pytest.fixture
def gpus(monkeypatch):
    """Set ``gpus.count`` and ``gpus.current``; counts how often torch is asked."""
    class State:
        count, current, count_calls, current_calls = 1, 0, 0, 0
    state = State()

    def device_count():
        state.count_calls += 1
        return state.count

    def current():
        state.current_calls += 1
        return state.current
    monkeypatch.setattr(torch.cuda, "device_count", device_count)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", current, raising=False)
    monkeypatch.setattr(torch.cuda, "device", lambda device: ("entered", device))
    return state


def test_cpu_tensors_ask_nothing(gpus):
    guard = device_guard_getter()
    assert guard(torch.ones(2)) is None
    assert gpus.count_calls == 0 and gpus.current_calls == 0


def test_one_gpu_never_asks_for_the_current_device(gpus):
    guard = device_guard_getter()
    for _ in range(3):
        assert guard(FakeCudaTensor(0)) is None
    assert gpus.count_calls == 1 and gpus.current_calls == 0


def test_several_gpus_enter_the_tensors_one(gpus):
    gpus.count, gpus.current = 2, 0
    guard = device_guard_getter()
    assert guard(FakeCudaTensor(0)) is None
    assert guard(FakeCudaTensor(1)) == ("entered", "cuda:1")
    gpus.current = 1   # the caller switched devices: the guard follows, every call
    assert guard(FakeCudaTensor(1)) is None
    assert guard(FakeCudaTensor(0)) == ("entered", "cuda:0")
    assert gpus.count_calls == 1 and gpus.current_calls == 4


def test_the_count_is_read_at_the_first_cuda_tensor_not_at_import(gpus):
    guard = device_guard_getter()
    gpus.count = 2          # e.g. CUDA_VISIBLE_DEVICES set after tilepick was imported
    gpus.current = 0
    assert guard(FakeCudaTensor(1)) == ("entered", "cuda:1")
