"""Where kernels run: the GPU, or the CPU through Triton's interpreter.

``TRITON_INTERPRET=1`` must be set before triton is imported; :func:`interpreting` reads it.
The interpreter of the Triton releases we test with computes ``tl.dot`` on bf16 operands
from their raw uint16 bits (garbage results, while fp16/fp32 are right); :func:`patch_interpreter`
upcasts bf16 dot operands to fp32 first so bf16 kernels can be checked on the CPU too.
"""

from __future__ import annotations

import os

from tilepick.problem import DeviceMismatch


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


_patched = False


def patch_interpreter() -> None:
    """Fix bf16 ``tl.dot`` in Triton's interpreter (no effect when not interpreting)."""
    global _patched
    if _patched or not interpreting():
        return
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as itp

    original = itp.InterpreterBuilder.create_dot

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        if a.dtype.scalar == tl.bfloat16 or b.dtype.scalar == tl.bfloat16:
            def up(h):
                if h.dtype.scalar != tl.bfloat16:
                    return h.data.astype(np.float32)
                return itp._convert_float(h.data, tl.bfloat16, tl.float32, None).view(np.float32)
            out = np.matmul(up(a), up(b)).astype(d.data.dtype) + d.data
            return itp.TensorHandle(out, d.dtype.scalar)
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    itp.InterpreterBuilder.create_dot = create_dot
    _patched = True


def device_for_kernels() -> str:
    """'cuda' when kernels run on a GPU, 'cpu' under the interpreter."""
    return "cpu" if interpreting() else "cuda"


def require_device(tensor, what: str = "tensor") -> None:
    """Refuse tensors that cannot reach the kernel: CPU tensors without the interpreter.
    Raises :class:`tilepick.problem.DeviceMismatch` (a ``ProblemError`` and a ``RuntimeError``)."""
    if tensor.device.type == "cuda":
        if interpreting():
            raise DeviceMismatch(f"{what} is on {tensor.device} but TRITON_INTERPRET=1 runs "
                                 "kernels on the CPU; move it to the CPU or unset TRITON_INTERPRET")
        return
    if tensor.device.type == "cpu" and not interpreting():
        raise DeviceMismatch(f"{what} is on the CPU: Triton kernels need CUDA tensors "
                             "(or TRITON_INTERPRET=1 to run them on the CPU through the "
                             "interpreter)")
    if tensor.device.type not in ("cpu", "cuda"):
        raise DeviceMismatch(f"{what} is on unsupported device {tensor.device}")


def require_devices(**tensors) -> None:
    """:func:`require_device` for each named tensor that is given (None: not this call's)."""
    for name, tensor in tensors.items():
        if tensor is not None:
            require_device(tensor, name)


def cache_root():
    """tilepick's folder in the user's cache (``$XDG_CACHE_HOME/tilepick``, by default
    ``~/.cache/tilepick``): the user perf-db, compiled trees and the unpacked system db live
    under it."""
    from pathlib import Path

    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tilepick"


def raw_stream_getter():
    """``get(device_index) -> int``: the CUDA handle of torch's current stream on a device.

    Why not ``torch.cuda.current_stream(d).cuda_stream``: it builds a Stream object on the way,
    ~2 us of a cached launch's host time; ``torch._C._cuda_getCurrentRawStream`` is one C
    call (Triton's launcher uses it too). A torch without it gets the public spelling."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device_index: torch.cuda.current_stream(device_index).cuda_stream


def device_guard_getter():
    """``guard(tensor)``: ``torch.cuda.device(tensor.device)`` where the tensor is on a GPU
    that is not the current one, else None (nothing to enter: a ``with`` of a null context
    costs ~0.3 us a call).

    Why: Triton and cuBLASLt launch on the current CUDA device, torch's own ops on their
    tensors' device; tensors of cuda:1 while cuda:0 is current (model-parallel code) hung on two
    H200s without it (BENCHMARKS "Session 44"). The current device comes from
    ``torch._C._cuda_getDevice``, one C call where torch has it (~0.1 us, against ~1 us for
    ``torch.cuda.current_device()``): the check runs on every ``tilepick.matmul`` call. A
    process that sees one GPU skips it: its tensors' GPU is always the current one. The GPU
    count is read at the first CUDA tensor, not at import, so that importing tilepick neither
    initialises CUDA nor fixes the count before the caller sets CUDA_VISIBLE_DEVICES."""
    import torch

    current = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    switch = torch.cuda.device
    several: list[bool] = []   # [torch.cuda.device_count() > 1], once a CUDA tensor came

    def guard(tensor):
        if not tensor.is_cuda:
            return None
        if not several:
            several.append(torch.cuda.device_count() > 1)
        return switch(tensor.device) if several[0] and tensor.get_device() != current() \
            else None
    return guard


def capturing() -> bool:
    """Whether the current CUDA stream is capturing a graph (False where torch has no CUDA).

    Why one function: buffers that outlive a launch (per-stream workspaces, zero-kept split-K
    pairs) must not be baked into a graph, so every solver that keeps one asks this on each
    launch and takes a buffer of that launch's own from the graph's pool instead."""
    import torch

    try:
        return bool(torch.cuda.is_current_stream_capturing())
    except (RuntimeError, AssertionError):   # a CPU-only torch build
        return False


def allocate_outside_graph_pools(make, device=None):
    """``make()`` (which allocates tensors that outlive the call: per-stream workspaces, the
    L2 flush buffer) run where no CUDA graph memory pool takes its allocations.

    Why: ``torch.compile(mode="reduce-overhead")`` warms a graph up with every allocation of
    the warming thread routed into the graph's private pool
    (``torch._C._cuda_beginAllocateCurrentThreadToPool``), then refuses any live pool tensor
    that is not a graph output ("tensor(s) in the cudagraph pool not tracked as outputs").
    The routing is per thread, so a short-lived thread allocates from the ordinary caching
    allocator. It runs with ``device`` (default: the current one) and that device's current
    stream, so the memory belongs to (and a zero-fill is ordered on) the stream that will use
    it. Under the interpreter, for a CPU device or before CUDA is initialised, ``make`` runs
    here."""
    import threading

    import torch

    if interpreting() or not torch.cuda.is_available() or not torch.cuda.is_initialized() \
            or (device is not None and torch.device(device).type != "cuda"):
        return make()
    device = torch.device("cuda", torch.cuda.current_device()) if device is None \
        else torch.device(device)
    stream = torch.cuda.current_stream(device)
    box: dict = {}

    def work():
        try:
            with torch.cuda.device(device), torch.cuda.stream(stream):
                box["value"] = make()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=work, name="tilepick-alloc", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
