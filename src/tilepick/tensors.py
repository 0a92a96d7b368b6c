"""Random inputs laid out as a problem says, the float64 reference, and the error measure.

Used by the CLI's ``run --check``, the tests, the GPU check and the sweeps, so that every place
checks correctness the same way: fresh random data (never zeros), an output poisoned with NaN
before the run (so an unwritten element fails), and the relative Frobenius error against a
float64 product of the very same (already quantised) inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilepick.problem import DType, GemmProblem, ProblemError

# Relative Frobenius error allowed per input precision (fp32 accumulation everywhere).
TOLERANCE = {"fp32": 1e-5, "tf32": 5e-3, "fp16": 5e-3, "bf16": 2e-2, "fp8e4m3": 2e-2}


def tolerance(problem: GemmProblem) -> float:
    return TOLERANCE[problem.dtype_token]


@dataclass
class GemmInputs:
    a: object
    b: object
    out: object
    scale_a: object = None
    scale_b: object = None


def _strided(storage_shape, rows, cols, row_major, offset, fill):
    """A (batch, rows, cols) view with the requested major order inside padded storage."""
    batch, outer, ld = storage_shape
    flat = fill(batch * outer * ld + offset)
    base = flat[offset:offset + batch * outer * ld].view(batch, outer, ld)
    if row_major:
        return base[:, :rows, :cols]
    return base[:, :cols, :rows].transpose(1, 2)


def make_inputs(problem: GemmProblem, device="cpu", seed: int = 0) -> GemmInputs:
    """Fresh random operands for ``problem`` on ``device`` and a NaN-poisoned output."""
    import torch

    p = problem
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    itemsize = p.dtype.itemsize
    if p.base_align < itemsize:
        raise ProblemError(f"base_align={p.base_align} is below the {itemsize}-byte element size")
    offset = (p.base_align // itemsize) if p.base_align < 16 else 0

    def rand(numel):
        x = torch.randn(numel, generator=gen, device=device, dtype=torch.float32)
        if p.dtype is DType.FP8:
            x = x * 2.0  # spread over the e4m3 range a little; still far from its 448 limit
        return x.to(p.dtype.torch_dtype)

    a_outer = p.m if p.a_row_major else p.k
    b_outer = p.k if p.b_row_major else p.n
    a = _strided((p.batch, a_outer, p.lda), p.m, p.k, p.a_row_major, offset, rand)
    b = _strided((p.batch, b_outer, p.ldb), p.k, p.n, p.b_row_major, offset, rand)
    out = make_output(p, device)
    if p.batch == 1:
        a, b = a[0], b[0]
    scale_a = scale_b = None
    if p.dtype is DType.FP8:
        s = torch.rand(2, generator=gen, device=device, dtype=torch.float32) + 0.5
        scale_a, scale_b = s[0:1].clone(), s[1:2].clone()
    return GemmInputs(a, b, out, scale_a, scale_b)


def make_output(problem: GemmProblem, device="cpu"):
    """A NaN-poisoned output laid out as ``problem`` says (row stride ``ldc``, the base
    alignment's offset): the sweep checks several configs at once, each into its own."""
    import torch

    p = problem
    out_dtype = p.dtype.out_dtype.torch_dtype
    out_offset = (p.base_align // p.dtype.out_dtype.itemsize) if p.base_align < 16 else 0

    def poison(numel):
        return torch.full((numel,), float("nan"), device=device, dtype=out_dtype)

    out = _strided((p.batch, p.m, p.ldc), p.m, p.n, True, out_offset, poison)
    return out[0] if p.batch == 1 else out


def reference(problem: GemmProblem, inputs: GemmInputs):
    """float64 product of the same inputs (scales applied), on the inputs' device."""
    import torch

    r = torch.matmul(inputs.a.to(torch.float64), inputs.b.to(torch.float64))
    if inputs.scale_a is not None:
        r = r * (inputs.scale_a.double() * inputs.scale_b.double())
    return r


# Outputs above this many elements are checked on a lattice of rows and columns (every tile of
# 16 x 16 or more holds at least one checked element) instead of in full: a float64 reference
# of a 16384 x 128256 output would take 17 GB and dominate a sweep's time.
FULL_CHECK_MAX_ELEMS = 1 << 22


@dataclass
class Reference:
    """float64 reference values at ``rows`` x ``cols`` (None = all) of the output."""

    values: object
    rows: object = None
    cols: object = None

    def error(self, out) -> float:
        """Relative Frobenius error on the checked elements; inf if any output element of
        the whole tensor is NaN/inf (the poison check covers every element). One host
        synchronisation."""
        return self.errors([out])[0]

    def errors(self, outs) -> list[float]:
        """:meth:`error` of several outputs of the problem (configs checked together), read
        in one host synchronisation: the sweep checks a chunk of configs at once."""
        import torch

        outs = list(outs)
        # each output on its own: a stack of a chunk's large outputs would copy them all
        # (16 of 16 MB outputs: 256 MB) to read a lattice of them
        finite = torch.stack([torch.isfinite(x).all() for x in outs])
        if self.rows is not None:
            outs = [x.index_select(-2, self.rows).index_select(-1, self.cols) for x in outs]
        o = torch.stack(outs).to(torch.float64)   # (outputs, [batch,] rows, cols)
        dims = tuple(range(1, o.dim()))
        num = torch.linalg.vector_norm(torch.nan_to_num(o) - self.values, dim=dims)
        denom = torch.linalg.vector_norm(self.values).expand_as(num)
        terms = torch.stack((finite.to(torch.float64), num, denom), dim=1).tolist()
        return [_ratio(ok, n, d) for ok, n, d in terms]


def checked_reference(problem: GemmProblem, inputs: GemmInputs, seed: int = 0) -> Reference:
    """The reference for ``problem``: in full for small outputs, on a lattice for large ones."""
    import torch

    p = problem
    if p.batch * p.m * p.n <= FULL_CHECK_MAX_ELEMS:
        return Reference(reference(p, inputs))
    dev = inputs.a.device
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    def lattice(size):
        stride = min(16, max(1, size // 256))
        phase = int(torch.randint(0, stride, (1,), generator=g))
        return torch.arange(min(phase, size - 1), size, stride, device=dev)
    rows, cols = lattice(p.m), lattice(p.n)
    a = inputs.a.index_select(-2, rows).to(torch.float64)
    b = inputs.b.index_select(-1, cols).to(torch.float64)
    r = torch.matmul(a, b)
    if inputs.scale_a is not None:
        r = r * (inputs.scale_a.double() * inputs.scale_b.double())
    return Reference(r, rows, cols)


def rel_error(out, ref) -> float:
    """‖out − ref‖ / ‖ref‖ in float64 (ref: a full float64 reference); any NaN or unwritten
    element gives inf."""
    return Reference(ref).error(out)


def _ratio(ok: float, num: float, denom: float) -> float:
    if not ok:
        return float("inf")
    return num / denom if denom > 0 else num
