"""Launch a Triton kernel again without Triton's per-call argument binding.

Why: ``JITFunction.run`` binds and specialises every argument, builds a cache key and looks
the binary up on every call. On the GPU machines that is most of a launch's host time (H200,
commit 8485669, ``benchmarks/dispatch_overhead.py``: 20.5 us for a pointer kernel launched
with prepared arguments, of which the driver's launcher is a fraction), more than the kernel
itself for small GEMMs, and the bulk of a sweep's host time per timed sample. A bound launch
(``Solver.bind``) runs the same binary on every call by contract (same shapes, strides,
dtypes, device), so after its first call, which goes through ``JITFunction.run`` (compiling
or loading the binary and returning it), the compiled kernel's own launcher is called
directly with the same arguments in the same order, as ``JITFunction.run`` itself does.

What the contract cannot promise is checked on every call: the facts Triton specialises a
pointer on, its 16-byte alignment and whether it is None, and the current device (the binary
is loaded on the first call's); a call that differs (a sliced view, a missing scale, another
current GPU) goes through ``JITFunction.run``, which picks or compiles the right binary.
So does every call while a launch hook is set (profilers such as proton), every call under
the interpreter (it has no compiled kernels) and every call when Triton's compiled kernel
does not expose what this needs (another Triton release): the direct path is an
optimisation that can only be absent, never a different kernel. ``TILEPICK_DIRECT_LAUNCH=0``
turns it off (A/B timing of the host path).

Measured (H200, Triton 3.6, commit a6f41e1, ``benchmarks/launch_path_ab.sh``): a bound launch
26.2 -> 12.8 us of host a call (pointer kernel), 24.7 -> 15.5 us (TMA); ``gpu_check.py
--bound``: 962 checks, 0 wrong, 695 of them through this path.
"""

from __future__ import annotations

import os


# launches that took the direct path, all instances together (checks and benchmarks read it)
STATS = {"direct": 0}


def enabled() -> bool:
    return os.environ.get("TILEPICK_DIRECT_LAUNCH", "1") not in ("0", "")


def _descriptor_type():
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:     # a Triton without host-side descriptors: no argument is one
        return ()
    return TensorDescriptor


def _device_and_stream():
    """The functions ``JITFunction.run`` asks for the current device and its stream."""
    from triton.runtime.driver import driver

    return driver.active.get_current_device, driver.active.get_current_stream


def _hooked(rt) -> bool:
    """Whether a launch hook is set: None (older Triton) or an empty ``HookChain`` (newer) is
    none, and then passing None for the hooks and their metadata calls nothing, as Triton's
    own launch would."""
    for hook in (rt.launch_enter_hook, rt.launch_exit_hook):
        if hook is not None and getattr(hook, "calls", True):
            return True
    return False


class DirectLaunch:
    """``fn[grid](*args, **kwargs)`` for varying tensors, the first ``guarded`` positional
    arguments being the pointers (tensors, tensor descriptors or None) whose specialisation
    facts are checked per call; the other positional arguments and ``kwargs`` are the same on
    every call (the bound launch's sizes, strides and constexprs)."""

    __slots__ = ("_jit", "_kwargs", "_names", "_guarded", "_direct", "_grid", "_function",
                 "_meta", "_run", "_tail", "_nones", "_device", "_stream", "_knobs", "_desc",
                 "_home", "direct_calls")

    def __init__(self, fn, grid: tuple, kwargs: dict, guarded: int):
        self._jit = fn[grid]
        self._kwargs = kwargs
        self._names = getattr(fn, "arg_names", None)
        self._guarded = guarded
        self._direct = False
        self._grid = (tuple(grid) + (1, 1))[:3]
        self.direct_calls = 0

    def _facts(self, args) -> tuple[int, int]:
        """(None mask, OR of the pointers' addresses) of the guarded arguments."""
        nones, ptrs = 0, 0
        desc = self._desc
        for i, x in enumerate(args[:self._guarded]):
            if x is None:
                nones |= 1 << i
            elif type(x) is desc:
                ptrs |= x.base.data_ptr()
            else:
                ptrs |= x.data_ptr()
        return nones, ptrs

    def __call__(self, *args):
        if self._direct:
            nones, ptrs = self._facts(args)
            device = self._device()
            if nones == self._nones and not ptrs & 15 and device == self._home \
                    and not _hooked(self._knobs):
                g = self._grid
                try:
                    self._run(g[0], g[1], g[2], self._stream(device), self._function,
                              self._meta, None, None, None, *args, *self._tail)
                except (TypeError, SystemError):
                    # the launcher refused the arguments before launching (a Triton whose
                    # launcher takes them differently): Triton's path from now on
                    self._direct = False
                    self._jit(*args, **self._kwargs)
                    return
                self.direct_calls += 1
                STATS["direct"] += 1
                return
            self._jit(*args, **self._kwargs)
            return
        kernel = self._jit(*args, **self._kwargs)
        if not hasattr(self, "_tail"):   # only the first call may adopt the binary
            self._adopt(kernel, args)

    def _adopt(self, kernel, args) -> None:
        """Take the binary of the first call for the next ones, if everything the direct path
        needs is there; otherwise leave every call to ``JITFunction.run``."""
        self._tail = ()
        if kernel is None or not enabled() or self._names is None:
            return   # interpreter (no compiled kernel), disabled, or not a JIT function
        try:
            from triton import knobs

            names = self._names[len(args):]
            if any(n not in self._kwargs for n in names):
                return   # a defaulted argument: its value is Triton's business
            self._desc = _descriptor_type()
            nones, ptrs = self._facts(args)
            if ptrs & 15:
                return   # unaligned pointers (rare): keep Triton's own specialisation
            self._tail = tuple(self._kwargs[n] for n in names)
            self._nones = nones
            self._run, self._function, self._meta = (kernel.run, kernel.function,
                                                     kernel.packed_metadata)
            self._device, self._stream = _device_and_stream()
            self._home = self._device()   # the binary is loaded on this device only
            self._knobs = knobs.runtime
            _hooked(self._knobs)   # the hooks exist under these names
        except (AttributeError, ImportError, TypeError, RuntimeError):
            return
        self._direct = True
