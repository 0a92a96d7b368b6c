"""``tilepick.matmul`` / ``bmm`` / ``linear``: run the chosen kernel for a PyTorch call.

The default dispatcher is made on first use (find mode from ``TILEPICK_FIND_MODE``, default
``db``); ``set_dispatcher`` replaces it. Problems tilepick does not serve (float64, broadcast
batches, exotic strides, empty GEMMs) go to torch, i.e. cuBLAS; bad input raises
``ProblemError``, and so do tensors on a device the kernels cannot reach (``DeviceMismatch``:
CPU tensors, unless ``TRITON_INTERPRET=1`` runs the kernels on the CPU).
Inside ``torch.compile`` graphs the call goes through the custom op ``tilepick::matmul``.
"""

from __future__ import annotations

import threading

import torch

from tilepick.dispatch.dispatcher import Dispatcher
from tilepick.problem import DType, GemmProblem, ProblemError, UnsupportedProblem, overlaps
from tilepick.runtime import device_guard_getter, require_device

_default: Dispatcher | None = None
_lock = threading.Lock()


def default_dispatcher() -> Dispatcher:
    global _default
    if _default is None:
        with _lock:
            if _default is None:
                _default = Dispatcher()
    return _default


def set_dispatcher(dispatcher: Dispatcher | None) -> None:
    global _default
    _default = dispatcher


_problems: dict[tuple, tuple | None] = {}


def _signature(a, b) -> tuple:
    """Everything ``GemmProblem.from_tensors`` reads of (a, b) when no ``out`` is given:
    a repeated call with the same signature reuses its problem (one dictionary lookup)."""
    try:
        sig = (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device,
               (a.data_ptr() | b.data_ptr()) & 15)
    except AttributeError:   # not tensors: the checks say which and what it is
        GemmProblem.from_tensors(a, b)
        raise
    if a.dtype is torch.float32:  # only fp32 problems depend on the tf32 switch
        sig += (torch.backends.cuda.matmul.allow_tf32,)
    return sig


#: what ``_problem`` remembers for a signature of torch.matmul's other shapes (:func:`_folded`)
_OTHER_SHAPE = "other shape"


def _other_shape(a, b) -> bool:
    """Not 2-D or equally batched 3-D operands (checked on the slow path only: a signature
    that got past it once is remembered)."""
    da = a.dim()
    return da != b.dim() or not 2 <= da <= 3


def _served(a, b, out=None) -> GemmProblem | None:
    """The checked problem of ``a @ b`` (into ``out``), or None for what torch serves instead."""
    try:
        problem = GemmProblem.from_tensors(a, b, out)
    except UnsupportedProblem:
        return None
    require_device(a, "a")   # b and out are on a's device (checked above)
    if problem.dtype is DType.FP8:
        raise UnsupportedProblem("fp8 GEMMs need per-tensor scales, which matmul does not take")
    return problem


def _problem(a, b, sig: tuple) -> tuple | None:
    """(problem, output shape, output dtype) of ``a @ b`` with a packed new output, or None if
    tilepick does not serve it; remembered per tensor signature."""
    try:
        return _problems[sig]
    except KeyError:
        pass
    if _other_shape(a, b):
        _problems[sig] = _OTHER_SHAPE
        return _OTHER_SHAPE
    problem = _served(a, b)
    entry = None
    if problem is not None:
        shape = (problem.batch, problem.m, problem.n) if a.dim() == 3 else (problem.m, problem.n)
        entry = (problem, shape, problem.dtype.out_dtype.torch_dtype)
    _problems[sig] = entry
    return entry


_out_problems: dict[tuple, GemmProblem | None] = {}


def _check_aliasing(a, b, out) -> None:
    for name, t in (("a", a), ("b", b)):
        if overlaps(out, t):
            raise ProblemError(f"out aliases input {name}: the result would overwrite "
                               "an operand while it is read")


def _out_problem(a, b, out, sig: tuple) -> GemmProblem | None:
    """The problem of ``a @ b`` into a caller's ``out``, or None if tilepick does not serve it.
    Shape, dtype, device and stride checks are remembered per signature of the three tensors;
    aliasing depends on the storage, so the caller checks it on every call."""
    try:
        return _out_problems[sig]
    except KeyError:
        pass
    problem = _OTHER_SHAPE if _other_shape(a, b) else _served(a, b, out)
    _out_problems[sig] = problem
    return problem


_device_guard = device_guard_getter()


def _run(a, b, out, dispatcher):
    """The hot path: a repeated tensor signature finds its prepared launch (``Dispatcher.bound``)
    in one dictionary lookup; anything else (a new signature, a launch that failed) goes through
    ``Dispatcher.run``, which decides, falls back and records, and then prepares the launch."""
    d = dispatcher or _default   # made on first need: torch-served calls never need one
    fresh = out is None
    if fresh:
        sig = _signature(a, b)
    else:
        if not isinstance(out, torch.Tensor):
            GemmProblem.from_tensors(a, b, out)   # raises, naming what out is
        sig = _signature(a, b) + (out.shape, out.stride(), out.dtype, out.device,
                                  out.data_ptr() & 15)
    guard = _device_guard(a)   # tensors on another GPU than the current one: theirs, then
    if guard is not None:      # the same call (as Inductor's generated code does)
        with guard:
            return _run(a, b, out, dispatcher)
    fast = d.bound.get(sig) if d is not None else None
    if fast is not None:
        launch, problem, shape, out_dtype, new = fast
        if not fresh:
            _check_aliasing(a, b, out)
        elif new is None:
            out = torch.empty(shape, dtype=out_dtype, device=a.device)
        try:   # new: a launch that makes its output (cuBLAS: torch.matmul itself)
            return launch(a, b, out) if out is not None else new(a, b)
        except Exception:   # run() below records the failure and tries the next candidate
            d.bound.pop(sig, None)
        if out is None:     # the launch that makes its output failed
            out = torch.empty(shape, dtype=out_dtype, device=a.device)
        return d.run(problem, a, b, out)
    if fresh:
        entry = _problem(a, b, sig)
        if entry is None:
            return torch.matmul(a, b)
        if entry is _OTHER_SHAPE:
            return _matmul_nd(a, b, None, dispatcher)
        problem, shape, out_dtype = entry
        out = torch.empty(shape, dtype=out_dtype, device=a.device)
    else:
        problem = _out_problem(a, b, out, sig)
        if problem is None or problem is _OTHER_SHAPE:
            return torch.matmul(a, b, out=out)
        _check_aliasing(a, b, out)
        shape = out_dtype = None
    d = d or default_dispatcher()
    result = d.run(problem, a, b, out)
    launch = d.launcher(problem, a, b, out)
    if launch is not None:
        new = d.new_launcher(problem, a, b) if fresh else None
        d.bound[sig] = (launch, problem, shape, out_dtype, new)
    return result


def _transposed(t):
    return t.transpose(-1, -2)


class _Matmul(torch.autograd.Function):
    """``a @ b`` with its gradients, each also a GEMM the dispatcher serves (dA = dC B^T,
    dB = A^T dC: other layouts of the same sizes). Why: the kernels write a new tensor that
    autograd does not see, so a training step through ``tilepick.linear`` lost its weight
    gradient without a word."""

    @staticmethod
    def forward(ctx, a, b, dispatcher):
        ctx.save_for_backward(a, b)
        ctx.dispatcher = dispatcher
        return _run(a, b, None, dispatcher)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        d = ctx.dispatcher
        ga = _run(grad, _transposed(b), None, d) if ctx.needs_input_grad[0] else None
        gb = _run(_transposed(a), grad, None, d) if ctx.needs_input_grad[1] else None
        return ga, gb, None


def _folded(a, b):
    """(a', b', the result's shape) where torch.matmul's operands are one GEMM after a
    reshape: ``x @ W`` with x of 3 or more dims (its leading dims fold into M, as torch.matmul
    folds them), or equal batch dims beyond one (they fold into one batch); else None."""
    da, db = a.dim(), b.dim()
    shape = (*a.shape[:-1], b.shape[-1])
    if da >= 3 and db == 2:
        return a.reshape(-1, a.shape[-1]), b, shape
    if da == db and da > 3 and a.shape[:-2] == b.shape[:-2]:
        return a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:]), shape
    return None


def _matmul_nd(a, b, out, dispatcher):
    """torch.matmul's other shapes: folded into a GEMM tilepick serves where one reshape
    does it (``out=``: torch), torch.matmul's own answer for the rest (1-D operands,
    broadcast batches)."""
    folded = _folded(a, b) if out is None and a.dim() >= 2 and b.dim() >= 2 else None
    if folded is None:
        return torch.matmul(a, b) if out is None else torch.matmul(a, b, out=out)
    a2, b2, shape = folded
    return matmul(a2, b2, dispatcher=dispatcher).reshape(shape)


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None,
           dispatcher: Dispatcher | None = None) -> torch.Tensor:
    """``a @ b`` with the fastest known kernel, for what torch.matmul takes: 2-D or equally
    batched 3-D operands directly, ``x @ W`` with a batched x and equal batch dims beyond one
    folded into those (:func:`_folded`), torch.matmul itself for the rest; differentiable as
    torch.matmul is (``out=`` with autograd: torch's own refusal)."""
    if out is None and dispatcher is None and torch.compiler.is_compiling():
        if _other_shape(a, b):   # folded in the graph, as the eager call folds it
            return _matmul_nd(a, b, None, None)
        return torch.ops.tilepick.matmul(a, b)
    try:   # inline, on every call: tensor properties only (the shapes: on _run's slow path)
        grad = (a.requires_grad or b.requires_grad) and torch.is_grad_enabled()
    except AttributeError:   # not tensors: _run names them
        grad = False
    if grad:
        if out is not None:
            return torch.matmul(a, b, out=out)
        if _other_shape(a, b):
            return _matmul_nd(a, b, None, dispatcher)
        return _Matmul.apply(a, b, dispatcher)
    return _run(a, b, out, dispatcher)


def bmm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None,
        dispatcher: Dispatcher | None = None) -> torch.Tensor:
    if a.dim() != 3 or b.dim() != 3:
        from tilepick.problem import ProblemError

        raise ProblemError(f"bmm takes 3-D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b, out, dispatcher)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           dispatcher: Dispatcher | None = None) -> torch.Tensor:
    """``x @ weight.T + bias`` (torch.nn.functional.linear): weight is (out, in), so the GEMM
    runs in layout ``rc`` without copying the weight."""
    lead = x.shape[:-1]
    y = matmul(x.reshape(-1, x.shape[-1]), weight.t(), dispatcher=dispatcher)
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, weight.shape[0])


@torch.library.custom_op("tilepick::matmul", mutates_args=())
def _matmul_op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _run(a, b, None, None)


@_matmul_op.register_fake
def _(a, b):
    shape = (*a.shape[:-1], b.shape[-1])
    return a.new_empty(shape)


def _op_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _op_backward(ctx, grad):
    """The custom op's gradients (``_Matmul``'s), as custom ops again: in a compiled graph
    the backward GEMMs are dispatched too."""
    a, b = ctx.saved_tensors
    ga = torch.ops.tilepick.matmul(grad, _transposed(b)) if ctx.needs_input_grad[0] else None
    gb = torch.ops.tilepick.matmul(_transposed(a), grad) if ctx.needs_input_grad[1] else None
    return ga, gb


_matmul_op.register_autograd(_op_backward, setup_context=_op_setup_context)
