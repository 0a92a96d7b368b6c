"""GEMM problems: what is multiplied, independent of how.

A problem is the unit every other part of tilepick is keyed by (datasets, models, the perf-db,
the in-memory cache), so it is frozen, validated on construction and has one stable key.

Naming of layouts (documented once, here): two letters, the first for A (M x K), the second for
B (K x N); ``r`` = row-major (the last dimension is contiguous), ``c`` = column-major (the first
dimension is contiguous).

==========  ======================  ==========================================
layout      A storage               B storage
==========  ======================  ==========================================
``rr``      M x K, K contiguous     K x N, N contiguous (``x @ W``)
``rc``      M x K, K contiguous     N x K stored, K contiguous (``x @ W.T``)
``cr``      K x M stored            K x N, N contiguous
``cc``      K x M stored            N x K stored
==========  ======================  ==========================================

C (M x N) is always row-major. Leading dimensions default to the packed values; a batch is a
leading dimension of size ``batch`` on A, B and C.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import re
from dataclasses import dataclass
from enum import Enum


class ProblemError(ValueError):
    """A problem that cannot be built or served; the message names what is wrong."""


class DeviceMismatch(ProblemError, RuntimeError):
    """Tensors where the kernels cannot run (CPU tensors without Triton's interpreter, CUDA
    tensors under it): an error of the call, not of a kernel, so the dispatcher raises it
    instead of recording the candidates as failing for the problem (that record would outlive
    the call in the user's perf-db)."""


class UnsupportedProblem(ProblemError):
    """Valid input that tilepick's kernels do not serve (e.g. float64, broadcast batches):
    the dispatcher hands such calls to torch (cuBLAS) instead of failing."""


_ITEMSIZES = {"fp16": 2, "bf16": 2, "fp32": 4, "fp8e4m3": 1}


class DType(str, Enum):
    """Input precisions. Accumulation is always fp32; the output dtype is ``out_dtype``."""

    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"
    FP8 = "fp8e4m3"

    @property
    def itemsize(self) -> int:
        # ``_value_``, not the ``value`` property: this runs ~15 times per problem on the
        # prediction path (the solvers' rules), where the enum descriptor's cost shows
        return _ITEMSIZES[self._value_]

    @property
    def out_dtype(self) -> "DType":
        """fp8 GEMMs write bf16 (per-tensor scales applied in the epilogue)."""
        return DType.BF16 if self is DType.FP8 else self

    @property
    def torch_dtype(self):
        return _torch_dtypes()[self.value]

    @classmethod
    def parse(cls, value: "str | DType") -> "DType":
        if isinstance(value, DType):
            return value
        aliases = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32",
                   "float": "fp32", "fp8": "fp8e4m3", "float8_e4m3fn": "fp8e4m3", "e4m3": "fp8e4m3"}
        v = aliases.get(str(value).lower(), str(value).lower())
        try:
            return cls(v)
        except ValueError:
            raise ProblemError(
                f"unsupported dtype {value!r}: choose one of {[d.value for d in cls]}") from None

    @classmethod
    def from_torch(cls, dtype) -> "DType":
        for d in cls:
            if d.torch_dtype == dtype:
                return d
        raise UnsupportedProblem(f"unsupported tensor dtype {dtype}: tilepick GEMMs take "
                           f"float16, bfloat16, float32 or float8_e4m3fn inputs")


@functools.lru_cache(maxsize=1)
def _torch_dtypes() -> dict:
    import torch  # lazily: problems are used where torch is not needed

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
            "fp8e4m3": torch.float8_e4m3fn}


LAYOUTS = ("rr", "rc", "cr", "cc")
_MAX_GRID_BATCH = 65535  # CUDA grid dimension y/z limit; the batch is a grid dimension


def _align_bytes(value_elems: int, itemsize: int, cap: int = 16) -> int:
    """Largest power of two (<= cap) dividing value_elems * itemsize bytes."""
    b = value_elems * itemsize
    if b == 0:
        return cap
    return min(cap, b & -b)


@functools.lru_cache(maxsize=None)
def _field_values(cls):
    """A function giving the tuple of a dataclass instance's field values (a new problem's
    hash: ~0.2 us, against ~1.7 us through ``dataclasses.fields`` on every call)."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    getter = operator.attrgetter(*names)
    return getter if len(names) > 1 else (lambda obj: (getter(obj),))


@dataclass(frozen=True)
class GemmProblem:
    """C[b] = A[b] @ B[b] with A: M x K, B: K x N, C: M x N (see the module doc for layouts)."""

    m: int
    n: int
    k: int
    batch: int = 1
    dtype: DType = DType.BF16
    layout: str = "rr"
    tf32: bool = False
    lda: int | None = None
    ldb: int | None = None
    ldc: int | None = None
    base_align: int = 16  # bytes: the largest power of two (<= 16) dividing every base pointer

    def __post_init__(self):
        set_ = lambda name, v: object.__setattr__(self, name, v)  # noqa: E731 (frozen dataclass)
        for name in ("m", "n", "k", "batch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ProblemError(f"GEMM {name} must be an int, got {v!r}")
            if v <= 0:
                raise ProblemError(f"GEMM sizes must be > 0, got {name}={v} "
                                   f"(m={self.m}, n={self.n}, k={self.k}, batch={self.batch})")
        if self.batch > _MAX_GRID_BATCH:
            raise ProblemError(f"batch={self.batch} exceeds the supported maximum {_MAX_GRID_BATCH}")
        set_("dtype", DType.parse(self.dtype))
        if self.layout not in LAYOUTS:
            raise ProblemError(f"unknown layout {self.layout!r}: choose one of {LAYOUTS} "
                               "(first letter A, second B; r = row-major, c = column-major)")
        if self.tf32 and self.dtype is not DType.FP32:
            raise ProblemError(f"tf32=True applies only to fp32 inputs, not {self.dtype.value}")
        defaults = {"lda": self.k if self.a_row_major else self.m,
                    "ldb": self.n if self.b_row_major else self.k,
                    "ldc": self.n}
        minimum = dict(defaults)
        for name, dflt in defaults.items():
            v = getattr(self, name)
            if v is None:
                set_(name, dflt)
            elif isinstance(v, bool) or not isinstance(v, int):
                raise ProblemError(f"{name} must be an int, got {v!r}")
            elif v < minimum[name]:
                raise ProblemError(f"{name}={v} is smaller than the packed leading dimension "
                                   f"{minimum[name]} for layout {self.layout} "
                                   f"(m={self.m}, n={self.n}, k={self.k})")
        if self.base_align not in (1, 2, 4, 8, 16):
            raise ProblemError(f"base_align must be a power of two <= 16 bytes, got {self.base_align}")

    def __hash__(self) -> int:
        """Cached: problems key every cache on the dispatch path, where hashing eleven fields
        on every call would cost more than the lookup."""
        h = self.__dict__.get("_hash")
        if h is None:   # the hash of the tuple of the field values, as before
            h = hash(_field_values(type(self))(self))
            object.__setattr__(self, "_hash", h)
        return h

    # -- layout helpers -------------------------------------------------------------------
    @property
    def a_row_major(self) -> bool:
        return self.layout[0] == "r"

    @property
    def b_row_major(self) -> bool:
        return self.layout[1] == "r"

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.batch

    @property
    def min_bytes(self) -> float:
        """Fewest bytes a kernel must move: each input read once, the output written once."""
        i = self.dtype.itemsize
        o = self.dtype.out_dtype.itemsize
        return float(self.batch * ((self.m * self.k + self.k * self.n) * i + self.m * self.n * o))

    def operand_align(self, operand: str) -> int:
        """Byte alignment that 16-byte vector access to an operand can rely on.

        Vector loads need the base pointer, the leading dimension and the size of the
        contiguous dimension (masks at the edge) all aligned; the minimum of the three counts.
        """
        i = self.dtype.itemsize
        if operand == "a":
            contig = self.k if self.a_row_major else self.m
            ld, it = self.lda, i
        elif operand == "b":
            contig = self.n if self.b_row_major else self.k
            ld, it = self.ldb, i
        elif operand == "c":
            contig, ld, it = self.n, self.ldc, self.dtype.out_dtype.itemsize
        else:
            raise ValueError(operand)
        return min(self.base_align, _align_bytes(ld, it), _align_bytes(contig, it))

    # -- keys ---------------------------------------------------------------------------------
    @property
    def dtype_token(self) -> str:
        return "tf32" if self.tf32 else self.dtype.value

    def key(self) -> str:
        """Stable, human-readable key: ``gemm.bf16.rr.m1024.n4096.k4096`` (+ batch, lds, align)."""
        parts = ["gemm", self.dtype_token, self.layout, f"m{self.m}", f"n{self.n}", f"k{self.k}"]
        if self.batch != 1:
            parts.append(f"b{self.batch}")
        packed = GemmProblem(self.m, self.n, self.k, self.batch, self.dtype, self.layout, self.tf32)
        for name in ("lda", "ldb", "ldc"):
            if getattr(self, name) != getattr(packed, name):
                parts.append(f"{name}{getattr(self, name)}")
        if self.base_align != 16:
            parts.append(f"al{self.base_align}")
        return ".".join(parts)

    _KEY_RE = re.compile(r"^(?:lda|ldb|ldc|al|b|m|n|k)\d+$")

    @classmethod
    def from_key(cls, key: str) -> "GemmProblem":
        parts = key.split(".")
        if len(parts) < 6 or parts[0] != "gemm":
            raise ProblemError(f"not a GEMM problem key: {key!r}")
        dtype_tok, layout = parts[1], parts[2]
        kw: dict = {"dtype": "fp32" if dtype_tok == "tf32" else dtype_tok,
                    "tf32": dtype_tok == "tf32", "layout": layout}
        names = {"m": "m", "n": "n", "k": "k", "b": "batch", "lda": "lda", "ldb": "ldb",
                 "ldc": "ldc", "al": "base_align"}
        for p in parts[3:]:
            if not cls._KEY_RE.match(p):
                raise ProblemError(f"bad field {p!r} in problem key {key!r}")
            name = re.match(r"^[a-z]+", p).group(0)
            kw[names[name]] = int(p[len(name):])
        missing = [f for f in ("m", "n", "k") if f not in kw]
        if missing:
            raise ProblemError(f"problem key {key!r} lacks {missing}")
        return cls(**kw)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["dtype"] = self.dtype.value
        return d

    def replace(self, **changes) -> "GemmProblem":
        return dataclasses.replace(self, **changes)

    # -- from tensors ------------------------------------------------------------------------
    @classmethod
    def from_tensors(cls, a, b, out=None, tf32: bool | None = None) -> "GemmProblem":
        """Describe ``a @ b`` (2-D, or 3-D batched) from torch tensors, checking every input."""
        import torch

        for name, t in (("a", a), ("b", b)):
            if not isinstance(t, torch.Tensor):
                raise ProblemError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
            if t.dim() not in (2, 3):
                raise ProblemError(f"{name} must be 2-D or 3-D (batched), got shape {tuple(t.shape)}")
        if a.dim() != b.dim():
            raise ProblemError(f"a and b must both be 2-D or both 3-D, got shapes "
                               f"{tuple(a.shape)} and {tuple(b.shape)}")
        if a.device != b.device:
            raise ProblemError(f"a is on {a.device} but b is on {b.device}")
        if a.dtype != b.dtype:
            raise ProblemError(f"a and b must have the same dtype, got {a.dtype} and {b.dtype}")
        dtype = DType.from_torch(a.dtype)
        if a.shape[-1] != b.shape[-2]:
            raise ProblemError(f"inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)} "
                               f"(a.shape[-1]={a.shape[-1]} != b.shape[-2]={b.shape[-2]})")
        batch = 1
        if a.dim() == 3:
            if a.shape[0] != b.shape[0]:
                raise ProblemError(f"batch sizes differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
            batch = a.shape[0]
        m, k = a.shape[-2], a.shape[-1]
        n = b.shape[-1]
        if 0 in (m, n, k, batch):   # torch's answer (empty, or zeros for k = 0) is the one
            raise UnsupportedProblem(f"an empty GEMM (m={m}, n={n}, k={k}, batch={batch}; a is "
                                     f"{tuple(a.shape)}, b is {tuple(b.shape)}) has nothing "
                                     "to tune")
        a_row, lda = _matrix_layout("a", a)
        b_row, ldb = _matrix_layout("b", b)
        ptrs = [a.data_ptr(), b.data_ptr()]
        ldc = n
        if out is not None:
            want = (batch, m, n) if a.dim() == 3 else (m, n)
            if not isinstance(out, torch.Tensor) or tuple(out.shape) != want:
                raise ProblemError(f"out must be a tensor of shape {want}, got "
                                   f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out)}")
            if out.dtype != dtype.out_dtype.torch_dtype:
                raise ProblemError(f"out must be {dtype.out_dtype.torch_dtype} for {dtype.value} "
                                   f"inputs, got {out.dtype}")
            if out.device != a.device:
                raise ProblemError(f"out is on {out.device} but the inputs are on {a.device}")
            if out.stride(-1) != 1 and n > 1:
                raise ProblemError(f"out must be row-major (stride(-1) == 1), got strides {out.stride()}")
            ldc = out.stride(-2) if m > 1 else n
            for name, t in (("a", a), ("b", b)):
                if overlaps(out, t):
                    raise ProblemError(f"out aliases input {name}: the result would overwrite "
                                       "an operand while it is read")
            ptrs.append(out.data_ptr())
        if batch > 1:
            operands = (("a", a, m, k), ("b", b, k, n)) + ((("out", out, m, n),) if out is not None else ())
            for name, t, rows, cols in operands:
                if t.stride(0) == 0 or t.stride(0) < rows * cols and rows * cols > 1:
                    raise UnsupportedProblem(f"{name} has batch stride {t.stride(0)}: batches must not "
                                       f"overlap (broadcast batches are not supported)")
        align = 16
        for p in ptrs:
            align = min(align, p & -p if p else 16)
        if batch > 1:  # every batch's matrix must start as aligned as the first
            for t in (a, b) + ((out,) if out is not None else ()):
                step = t.stride(0) * t.element_size()
                align = min(align, step & -step if step else 16)
        if tf32 is None:
            tf32 = dtype is DType.FP32 and bool(torch.backends.cuda.matmul.allow_tf32)
        return cls(m, n, k, batch, dtype, ("r" if a_row else "c") + ("r" if b_row else "c"),
                   bool(tf32) and dtype is DType.FP32, lda, ldb, ldc, align)


def _matrix_layout(name: str, t) -> tuple[bool, int]:
    """(row_major, leading dimension) of the last two dims of ``t``; errors if neither."""
    rows, cols = t.shape[-2], t.shape[-1]
    s_r, s_c = t.stride(-2), t.stride(-1)
    if s_c == 1 or cols == 1:
        if rows == 1 or s_r >= cols:
            return True, max(s_r if rows > 1 else cols, cols)
    if s_r == 1 or rows == 1:
        if cols == 1 or s_c >= rows:
            return False, max(s_c if cols > 1 else rows, rows)
    raise UnsupportedProblem(f"{name} with shape {tuple(t.shape)} and strides {t.stride()} is neither "
                       "row- nor column-major; call .contiguous() first")


def overlaps(x, y) -> bool:
    """Whether two tensors share bytes (same storage, intersecting spans): an output that
    overlaps an operand would be overwritten while it is read."""
    xs = x.untyped_storage().data_ptr()
    ys = y.untyped_storage().data_ptr()
    if xs != ys:
        return False
    x0 = x.data_ptr()
    x1 = x0 + (sum((s - 1) * st for s, st in zip(x.shape, x.stride())) + 1) * x.element_size()
    y0 = y.data_ptr()
    y1 = y0 + (sum((s - 1) * st for s, st in zip(y.shape, y.stride())) + 1) * y.element_size()
    return x0 < y1 and y0 < x1


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, x))))
