"""The direct launch path of bound launches (solvers.direct_launch), with a stand-in for
Triton's JIT function and compiled kernel: the GPU path cannot run here, so what is checked is
the contract: the first call goes through Triton, later calls reach the compiled launcher with
the arguments in Triton's order, and anything that could select another binary goes back to
Triton."""

import pytest

from tilepick.solvers import direct_launch
from tilepick.solvers.direct_launch import DirectLaunch


class Ptr:
    def __init__(self, addr):
        self.addr = addr

    def data_ptr(self):
        return self.addr


class Compiled:
    function = "fn-handle"
    packed_metadata = ("meta",)

    def __init__(self):
        self.launches = []

    def run(self, *args):
        self.launches.append(args)


class Jit:
    """``fn[grid](*args, **kwargs)`` records the call and returns the compiled kernel, as
    ``JITFunction.run`` does (None: the interpreter)."""
    arg_names = ["a", "b", "scale", "M", "BLOCK", "EVEN"]

    def __init__(self, compiled):
        self.compiled = compiled
        self.calls = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.calls.append((grid, args, kwargs))
            return self.compiled
        return launch


class Chain:
    def __init__(self, calls=()):
        self.calls = list(calls)


class Knobs:
    launch_enter_hook = Chain()
    launch_exit_hook = Chain()


CURRENT = {"device": 0}


@pytest.fixture
def fake_triton(monkeypatch):
    CURRENT["device"] = 0
    monkeypatch.setattr(direct_launch, "_device_and_stream",
                        lambda: ((lambda: CURRENT["device"]), (lambda device: f"stream{device}")))
    knobs = Knobs()
    import triton
    monkeypatch.setattr(triton.knobs, "runtime", knobs, raising=False)
    monkeypatch.delenv("TILEPICK_DIRECT_LAUNCH", raising=False)
    return knobs


def make(compiled):
    jit = Jit(compiled)
    kw = dict(BLOCK=64, EVEN=True, num_warps=4, num_stages=3)
    return jit, DirectLaunch(jit, (7, 2), kw, guarded=3)


def test_first_call_through_triton_then_the_compiled_launcher(fake_triton):
    compiled = Compiled()
    jit, launch = make(compiled)
    a, b = Ptr(4096), Ptr(8192)
    launch(a, b, None, 100)
    assert len(jit.calls) == 1 and jit.calls[0][2]["num_warps"] == 4
    launch(Ptr(1024), b, None, 100)
    assert len(jit.calls) == 1 and launch.direct_calls == 1
    (g0, g1, g2, stream, fn, meta, md, enter, exit_, *rest), = compiled.launches
    assert (g0, g1, g2, stream, fn, meta) == (7, 2, 1, "stream0", "fn-handle", ("meta",))
    assert (md, enter, exit_) == (None, None, None)
    assert rest[0].addr == 1024 and rest[1] is b and rest[2:] == [None, 100, 64, True]


@pytest.mark.parametrize("second", [
    (Ptr(1026), Ptr(8192), None),     # an unaligned view: another specialisation
    (Ptr(1024), Ptr(8192), Ptr(64)),  # a pointer that was None
])
def test_a_call_that_could_need_another_binary_goes_to_triton(fake_triton, second):
    compiled = Compiled()
    jit, launch = make(compiled)
    launch(Ptr(4096), Ptr(8192), None, 100)
    launch(*second, 100)
    assert len(jit.calls) == 2 and not compiled.launches
    launch(Ptr(1024), Ptr(8192), None, 100)   # the adopted binary still serves the first kind
    assert len(compiled.launches) == 1


def test_a_launch_hook_sends_calls_to_triton(fake_triton):
    compiled = Compiled()
    jit, launch = make(compiled)
    launch(Ptr(4096), Ptr(8192), None, 100)
    fake_triton.launch_enter_hook = Chain([print])
    launch(Ptr(4096), Ptr(8192), None, 100)
    assert len(jit.calls) == 2 and not compiled.launches


@pytest.mark.parametrize("case", ["interpreter", "disabled", "unaligned first", "defaulted"])
def test_no_direct_path(fake_triton, monkeypatch, case):
    compiled = None if case == "interpreter" else Compiled()
    jit, launch = make(compiled)
    first = (Ptr(4096), Ptr(8192), None, 100)
    if case == "disabled":
        monkeypatch.setenv("TILEPICK_DIRECT_LAUNCH", "0")
    if case == "unaligned first":
        first = (Ptr(4098), Ptr(8192), None, 100)
    if case == "defaulted":   # a constexpr left to its default: not ours to pass
        launch = DirectLaunch(jit, (7,), dict(BLOCK=64), guarded=3)
    launch(*first)
    launch(*first)
    assert len(jit.calls) == 2 and launch.direct_calls == 0
    assert compiled is None or not compiled.launches


def test_a_launcher_that_refuses_the_arguments_turns_the_direct_path_off(fake_triton):
    class Refusing(Compiled):
        def run(self, *args):
            raise TypeError("function takes exactly 14 arguments")
    compiled = Refusing()
    jit, launch = make(compiled)
    for _ in range(3):
        launch(Ptr(4096), Ptr(8192), None, 100)
    assert len(jit.calls) == 3 and launch.direct_calls == 0


def test_another_current_device_goes_to_triton(fake_triton):
    compiled = Compiled()
    jit, launch = make(compiled)
    launch(Ptr(4096), Ptr(8192), None, 100)
    CURRENT["device"] = 1    # the binary was loaded on device 0
    launch(Ptr(4096), Ptr(8192), None, 100)
    assert len(jit.calls) == 2 and not compiled.launches
    CURRENT["device"] = 0
    launch(Ptr(4096), Ptr(8192), None, 100)
    assert len(compiled.launches) == 1
