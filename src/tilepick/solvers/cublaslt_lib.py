"""cuBLASLt through ctypes: its heuristic's algorithm list for a GEMM, a stable name for each
entry, an entry rebuilt from its name alone, and a launch of any entry.

Why: torch.matmul runs the one algorithm cuBLAS's heuristic puts first. cuBLASLt lists the
others (``cublasLtMatmulAlgoGetHeuristic``: the algorithm id with its tile, stage, split-K,
swizzle, custom-option and cluster-shape settings) and runs any of them; on the LLM suite (one
H200) the entry fastest in a screening pass beat torch.matmul by 2.35% geomean when timed
again in fresh rounds (9.8% over the 16 rows at M = 128; BENCHMARKS "Session 38").
PyTorch's TunableOp cannot ask for them on CUDA (its algorithm lists are ROCm's), and no
Python package on the GPU machines wraps cuBLASLt, so this binds the library torch has
already loaded.

An entry's name (:class:`LtAlgo`, ``a66.t197.s35.k1.r0.w0.c2.i0.cl5``) lists every settable
field of its algorithm config, so datasets, models and the perf-db can name it, and
:meth:`LtGemm.rebuild` makes the same algorithm from the name without the heuristic
(``cublasLtMatmulAlgoInit``, ``...ConfigSetAttribute``, checked by ``cublasLtMatmulAlgoCheck``).
"""

from __future__ import annotations

import ctypes
import functools
import re
from dataclasses import dataclass, fields
from pathlib import Path

# cuBLAS / CUDA enums (cublasLt.h, cublas_api.h, library_types.h)
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14
CUBLAS_COMPUTE_32F = 68
DESC_TRANSA, DESC_TRANSB = 3, 4
PREF_MAX_WORKSPACE_BYTES = 1
OP_N, OP_T = 0, 1
STATUS_NAMES = {0: "SUCCESS", 1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE",
                8: "ARCH_MISMATCH", 11: "MAPPING_ERROR", 13: "EXECUTION_FAILED",
                14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED", 16: "LICENSE_ERROR"}
#: workspace every entry may use (cuBLAS's own default on Hopper is 32 MiB as well)
WORKSPACE_BYTES = 32 << 20
#: how many entries the heuristic is asked for (it returned 8 on every suite shape on an H200)
HEURISTIC_COUNT = 16


class LtError(RuntimeError):
    """A cuBLASLt call failed; the message names the call and the status."""


class _Algo(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64 * 8)]


class _HeuristicResult(ctypes.Structure):
    _fields_ = [("algo", _Algo), ("workspaceSize", ctypes.c_size_t), ("state", ctypes.c_int),
                ("wavesCount", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


@dataclass(frozen=True)
class LtAlgo:
    """An algorithm config: the algorithm id and the value of every settable attribute
    (``cublasLtMatmulAlgoConfigAttributes_t``). Field order = the name's order."""

    algo: int
    tile: int
    stages: int
    splitk: int
    reduction: int
    swizzle: int
    custom: int
    inner: int
    cluster: int

    # (field, name prefix, attribute id, size in bytes); the algorithm id is set by AlgoInit
    ATTRS = (("algo", "a", 0, 4), ("tile", "t", 1, 4), ("stages", "s", 6, 4),
             ("splitk", "k", 2, 4), ("reduction", "r", 3, 4), ("swizzle", "w", 4, 4),
             ("custom", "c", 5, 4), ("inner", "i", 7, 2), ("cluster", "cl", 8, 2))

    @property
    def name(self) -> str:
        return ".".join(f"{prefix}{getattr(self, f)}" for f, prefix, _, _ in self.ATTRS)

    @classmethod
    def parse(cls, name: str) -> LtAlgo:
        parts = name.split(".")
        want = [prefix for _, prefix, _, _ in cls.ATTRS]
        got = [re.fullmatch(r"([a-z]+)(\d+)", p) for p in parts]
        if len(parts) != len(want) or not all(got) or [g[1] for g in got] != want:
            raise ValueError(f"{name!r} is not a cuBLASLt algorithm name "
                             f"({'.'.join(p + 'N' for p in want)})")
        return cls(*(int(g[2]) for g in got))


assert [f.name for f in fields(LtAlgo)] == [a[0] for a in LtAlgo.ATTRS]


@functools.lru_cache(maxsize=None)
def enums() -> dict:
    """cublasLt.h's tile, stage and cluster-shape enums as numbers ({value: dims}; stages
    [K per stage, count, 0 = AUTO]), read from the CUDA 13.0 header of the GPU machines
    (``benchmarks/cublaslt_confirm.py --enums``): names become sizes a reader (and a model)
    can use. Another cuBLAS version may add values; :func:`describe` prints those as numbers."""
    import json

    raw = json.loads((Path(__file__).parent / "cublaslt_enums.json").read_text())
    return {k: {int(i): tuple(v) for i, v in raw[k].items()} for k in ("tile", "stages", "cluster")}


def describe(name: LtAlgo) -> str:
    """``a66.t197.s35.k1.r0.w0.c2.i0.cl5`` as sizes: tile (rows x columns of cuBLASLt's
    column-major C, i.e. N x M of a row-major C = A @ B), K per stage and stage count, cluster
    shape, split-K, custom option; values missing from the table print as their number."""
    e = enums()
    tile = "x".join(map(str, e["tile"].get(name.tile, (f"tile{name.tile}",))))
    k, count = e["stages"].get(name.stages, (None, None))
    stages = f"k{k}x{count or 'auto'}" if k else f"stages{name.stages}"
    cluster = "x".join(map(str, e["cluster"].get(name.cluster, (f"cluster{name.cluster}",))))
    return (f"algo {name.algo} tile {tile} {stages} cluster {cluster} split-K {name.splitk}"
            f" custom {name.custom}")


def _declare(lib) -> None:
    """Every function's argument types (handles and sizes are 64-bit: undeclared, ctypes would
    pass Python ints as 32-bit C ints)."""
    vp, out = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    i32, size = ctypes.c_int, ctypes.c_size_t
    algo, result = ctypes.POINTER(_Algo), ctypes.POINTER(_HeuristicResult)
    for name, args in {
        "cublasLtCreate": [out],
        "cublasLtGetVersion": [],
        "cublasLtMatmulDescCreate": [out, i32, i32],
        "cublasLtMatmulDescDestroy": [vp],
        "cublasLtMatmulDescSetAttribute": [vp, i32, vp, size],
        "cublasLtMatrixLayoutCreate": [out, i32, ctypes.c_uint64, ctypes.c_uint64,
                                       ctypes.c_int64],
        "cublasLtMatrixLayoutDestroy": [vp],
        "cublasLtMatmulPreferenceCreate": [out],
        "cublasLtMatmulPreferenceDestroy": [vp],
        "cublasLtMatmulPreferenceSetAttribute": [vp, i32, vp, size],
        "cublasLtMatmulAlgoGetHeuristic": [vp, vp, vp, vp, vp, vp, vp, i32, result,
                                           ctypes.POINTER(i32)],
        "cublasLtMatmulAlgoInit": [vp, i32, i32, i32, i32, i32, i32, i32, algo],
        "cublasLtMatmulAlgoConfigSetAttribute": [algo, i32, vp, size],
        "cublasLtMatmulAlgoConfigGetAttribute": [algo, i32, vp, size, ctypes.POINTER(size)],
        "cublasLtMatmulAlgoCheck": [vp, vp, vp, vp, vp, vp, algo, result],
        "cublasLtMatmul": [vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, algo, vp, size, vp],
    }.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, i32
    lib.cublasLtGetVersion.restype = size


def _check(status: int, call: str) -> None:
    if status != 0:
        raise LtError(f"{call}: cuBLAS status {status} ({STATUS_NAMES.get(status, '?')})")


def loaded_library_path(maps: str) -> str | None:
    """The path of the libcublasLt mapped into this process (``/proc/self/maps``'s text)."""
    for line in maps.splitlines():
        cols = line.split()
        if len(cols) >= 6 and Path(cols[-1]).name.startswith("libcublasLt.so"):
            return cols[-1]
    return None


@functools.lru_cache(maxsize=None)
def library():
    """The libcublasLt torch uses (loaded by a first CUDA matmul), declared; LtError when
    there is none (no CUDA, or a torch without it)."""
    import torch

    if not torch.cuda.is_available():
        raise LtError("cuBLASLt needs a CUDA device; torch sees none")
    path = loaded_library_path(Path("/proc/self/maps").read_text())
    if path is None:
        x = torch.ones(8, 8, device="cuda")
        torch.matmul(x, x)
        torch.cuda.synchronize()
        path = loaded_library_path(Path("/proc/self/maps").read_text())
    if path is None:
        raise LtError("no libcublasLt is loaded in this process after a CUDA matmul")
    lib = ctypes.CDLL(path)
    _declare(lib)
    return lib


def version() -> int:
    """The loaded cuBLASLt's version (``cublasLtGetVersion``, e.g. 130100 for 13.1.0): entry
    names and their speeds belong to one version, so datasets and the perf-db record it."""
    return int(library().cublasLtGetVersion())


@functools.lru_cache(maxsize=None)
def _handle(device_index: int):
    """One cuBLASLt handle per device (a handle is not bound to a stream)."""
    lib = library()
    h = ctypes.c_void_p()
    _check(lib.cublasLtCreate(ctypes.byref(h)), "cublasLtCreate")
    return h


@functools.lru_cache(maxsize=None)
def shared_workspace(device_index: int):
    """The workspace of every launch on the device that passes none to :meth:`LtGemm.run`:
    enough for the probes, which run on one stream. Allocated on first such launch only: a
    solver serving several streams passes one per (device, stream) (``solvers.cublaslt``), as
    the split-K families keep their buffers, and would otherwise hold 32 MiB more a device."""
    import torch

    return torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device=f"cuda:{device_index}")


_DTYPES = {"bfloat16": CUDA_R_16BF, "float16": CUDA_R_16F}


def operand_layout(rows: int, cols: int, strides: tuple[int, int]) -> tuple[int, int, int, int]:
    """(op, stored rows, stored cols, ld) of a column-major product's operand that is the
    transpose of a [cols, rows] torch tensor with ``strides``. A row-major tensor is that
    transpose already (op N, ld = its row stride); a column-major one is stored untransposed
    (op T, ld = its column stride)."""
    s0, s1 = strides
    if s1 == 1 and (s0 >= rows or cols == 1):
        return OP_N, rows, cols, max(s0, rows)
    if s0 == 1 and (s1 >= cols or rows == 1):
        return OP_T, cols, rows, max(s1, cols)
    raise ValueError(f"an operand with strides {strides} is neither row- nor column-major")


class LtGemm:
    """One GEMM signature (sizes, strides, dtype, device) as cuBLASLt descriptors:
    ``out[m, n] = a[m, k] @ b[k, n]`` with out row-major, seen column-major as
    out^T = b^T a^T (cuBLASLt's A is b, its B is a)."""

    def __init__(self, m: int, n: int, k: int, dtype: str, a_strides, b_strides, ldc: int,
                 device_index: int = 0):
        if dtype not in _DTYPES:
            raise ValueError(f"cuBLASLt binding serves {sorted(_DTYPES)}, got {dtype}")
        self.lib = library()
        self.handle, self.device_index = _handle(device_index), device_index
        self.dtype = _DTYPES[dtype]
        # what run() checks its tensors against: the descriptors describe these and no others
        self.signature = ((m, k), (k, n), (m, n), tuple(a_strides), tuple(b_strides), ldc,
                          dtype)
        self._owned = []
        self.desc = self._new("cublasLtMatmulDescCreate", CUBLAS_COMPUTE_32F, CUDA_R_32F)
        op_a, *lay_a = operand_layout(n, k, tuple(b_strides))
        op_b, *lay_b = operand_layout(k, m, tuple(a_strides))
        for attr, op in ((DESC_TRANSA, op_a), (DESC_TRANSB, op_b)):
            v = ctypes.c_int32(op)
            _check(self.lib.cublasLtMatmulDescSetAttribute(self.desc, attr, ctypes.byref(v), 4),
                   "cublasLtMatmulDescSetAttribute")
        self.lay_a = self._new("cublasLtMatrixLayoutCreate", self.dtype, *lay_a)
        self.lay_b = self._new("cublasLtMatrixLayoutCreate", self.dtype, *lay_b)
        self.lay_c = self._new("cublasLtMatrixLayoutCreate", self.dtype, n, m, ldc)
        self.pref = self._new("cublasLtMatmulPreferenceCreate")
        ws = ctypes.c_uint64(WORKSPACE_BYTES)
        _check(self.lib.cublasLtMatmulPreferenceSetAttribute(
            self.pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(ws), 8), "preference workspace")
        self._alpha, self._beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        self._scalars = (ctypes.byref(self._alpha), ctypes.byref(self._beta))

    def _new(self, create: str, *args):
        obj = ctypes.c_void_p()
        _check(getattr(self.lib, create)(ctypes.byref(obj), *args), create)
        self._owned.append((create.replace("Create", "Destroy"), obj))
        return obj

    def __del__(self):
        for destroy, obj in getattr(self, "_owned", ()):
            getattr(self.lib, destroy)(obj)

    def _name(self, algo: _Algo) -> LtAlgo:
        vals = []
        for _, _, attr, size in LtAlgo.ATTRS:
            buf, written = ctypes.c_uint64(0), ctypes.c_size_t(0)
            _check(self.lib.cublasLtMatmulAlgoConfigGetAttribute(
                ctypes.byref(algo), attr, ctypes.byref(buf), size, ctypes.byref(written)),
                "cublasLtMatmulAlgoConfigGetAttribute")
            vals.append(int(buf.value))
        return LtAlgo(*vals)

    def heuristic(self, count: int = HEURISTIC_COUNT) -> list[tuple[LtAlgo, _Algo, dict]]:
        """The heuristic's entries, in its order: (name, algorithm, {rank, workspace,
        waves}); an entry listed twice (the same name) is kept once."""
        res = (_HeuristicResult * count)()
        got = ctypes.c_int(0)
        _check(self.lib.cublasLtMatmulAlgoGetHeuristic(
            self.handle, self.desc, self.lay_a, self.lay_b, self.lay_c, self.lay_c, self.pref,
            count, res, ctypes.byref(got)), "cublasLtMatmulAlgoGetHeuristic")
        out, seen = [], set()
        for i in range(got.value):
            if res[i].state != 0:
                continue
            name = self._name(res[i].algo)
            if name in seen:
                continue
            seen.add(name)
            algo = _Algo()
            ctypes.memmove(ctypes.byref(algo), ctypes.byref(res[i].algo), ctypes.sizeof(_Algo))
            out.append((name, algo, {"rank": i, "workspace": int(res[i].workspaceSize),
                                     "waves": float(res[i].wavesCount)}))
        return out

    def rebuild(self, name: LtAlgo) -> _Algo:
        """The algorithm ``name`` describes, made without the heuristic and checked for this
        GEMM (LtError, naming the status, when cuBLASLt refuses it)."""
        algo = _Algo()
        _check(self.lib.cublasLtMatmulAlgoInit(
            self.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, self.dtype, self.dtype, self.dtype,
            self.dtype, name.algo, ctypes.byref(algo)), f"cublasLtMatmulAlgoInit({name.algo})")
        for field, _, attr, size in LtAlgo.ATTRS[1:]:
            v = (ctypes.c_uint32 if size == 4 else ctypes.c_uint16)(getattr(name, field))
            _check(self.lib.cublasLtMatmulAlgoConfigSetAttribute(
                ctypes.byref(algo), attr, ctypes.byref(v), size),
                f"cublasLtMatmulAlgoConfigSetAttribute({field}={getattr(name, field)})")
        check = _HeuristicResult()
        _check(self.lib.cublasLtMatmulAlgoCheck(
            self.handle, self.desc, self.lay_a, self.lay_b, self.lay_c, self.lay_c,
            ctypes.byref(algo), ctypes.byref(check)), f"cublasLtMatmulAlgoCheck({name.name})")
        if check.workspaceSize > WORKSPACE_BYTES:
            raise LtError(f"{name.name} needs {check.workspaceSize} bytes of workspace, "
                          f"more than the {WORKSPACE_BYTES} given")
        return algo

    def run(self, algo: _Algo, a, b, out, stream: int, workspace=None) -> None:
        """out = a @ b with ``algo`` on ``stream`` (a CUDA stream handle); ValueError, before
        any launch, for tensors of another signature than the descriptors' (cuBLASLt would
        read and write out of their bounds). ``workspace``: a tensor of at least
        :data:`WORKSPACE_BYTES` bytes on the operands' device that only launches on ``stream``
        use (a solver keeps one per (device, stream)); None: the device's shared one, which
        serves one stream at a time (the probes')."""
        got = (tuple(a.shape), tuple(b.shape), tuple(out.shape), tuple(a.stride()),
               tuple(b.stride()), max(out.stride(0), out.shape[1]) if out.stride(1) == 1 else
               None, str(a.dtype).removeprefix("torch."))
        if got != self.signature or b.dtype != a.dtype or out.dtype != a.dtype:
            raise ValueError(f"tensors (shapes, strides, ldc, dtype) {got} with b {b.dtype}, "
                             f"out {out.dtype} do not fit this plan's {self.signature}")
        if workspace is None:
            workspace = shared_workspace(self.device_index)
        else:
            nbytes = workspace.numel() * workspace.element_size()
            if nbytes < WORKSPACE_BYTES:
                raise ValueError(f"a workspace of {nbytes} bytes is smaller than the "
                                 f"{WORKSPACE_BYTES} every entry may use")
            if workspace.device != a.device:
                raise ValueError(f"the workspace is on {workspace.device}, the operands on "
                                 f"{a.device}")
        self._matmul(ctypes.byref(algo), a.data_ptr(), b.data_ptr(), out.data_ptr(),
                     workspace.data_ptr(), stream)

    def _matmul(self, algo_ref, a_ptr: int, b_ptr: int, out_ptr: int, ws_ptr: int,
                stream: int) -> None:
        alpha, beta = self._scalars
        status = self.lib.cublasLtMatmul(
            self.handle, self.desc, alpha, b_ptr, self.lay_a, a_ptr, self.lay_b, beta, out_ptr,
            self.lay_c, out_ptr, self.lay_c, algo_ref, ws_ptr, WORKSPACE_BYTES, stream)
        if status:
            _check(status, "cublasLtMatmul")

    def launcher(self, algo: _Algo):
        """``launch(a_ptr, b_ptr, out_ptr, workspace, stream)``: :meth:`run` without its
        checks, for a caller that has made them once per tensor signature (a solver's
        prepared launch, which checks what changes between calls itself). Why: with run()'s
        checks repeated on each call, a bound entry cost 5.7-12.6 us more than run() itself on
        an H200 host; through this, as much as run() (BENCHMARKS "Session 43").
        ``workspace``: a tensor of :data:`WORKSPACE_BYTES` bytes or more on the device."""
        matmul, algo_ref = self._matmul, ctypes.byref(algo)   # keeps self and algo alive

        def launch(a_ptr: int, b_ptr: int, out_ptr: int, workspace, stream: int) -> None:
            matmul(algo_ref, a_ptr, b_ptr, out_ptr, workspace.data_ptr(), stream)
        return launch


def for_tensors(a, b, out) -> LtGemm:
    """The descriptors of ``out = a @ b`` for these 2-D CUDA tensors (out row-major); a
    ValueError naming the mismatch for anything else, before cuBLASLt sees it."""
    args = tensor_args(a, b, out)
    if not (a.device == b.device == out.device and a.device.type == "cuda"):
        raise ValueError(f"operands must be on one CUDA device, got a on {a.device}, b on "
                         f"{b.device}, out on {out.device}")
    return LtGemm(*args, a.device.index or 0)


def tensor_args(a, b, out) -> tuple:
    """:class:`LtGemm`'s arguments but the device, ``(m, n, k, dtype, a_strides, b_strides,
    ldc)``, for ``out = a @ b`` on these 2-D tensors (any device: no cuBLASLt call); a
    ValueError naming the mismatch for tensors it cannot describe."""
    if a.dim() != 2 or b.dim() != 2 or out.dim() != 2:
        raise ValueError(f"the cuBLASLt binding takes 2-D operands, got a {tuple(a.shape)}, "
                         f"b {tuple(b.shape)}, out {tuple(out.shape)}")
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or tuple(out.shape) != (m, n):
        raise ValueError(f"shapes do not multiply: a {tuple(a.shape)} @ b {tuple(b.shape)} "
                         f"into out {tuple(out.shape)}")
    if not a.dtype == b.dtype == out.dtype:
        raise ValueError(f"dtypes differ: a {a.dtype}, b {b.dtype}, out {out.dtype}")
    if out.stride(1) != 1:
        raise ValueError(f"out must be row-major, got strides {tuple(out.stride())}")
    return (m, n, k, str(a.dtype).removeprefix("torch."), tuple(a.stride()),
            tuple(b.stride()), max(out.stride(0), n))


def same_algorithm(x: _Algo, y: _Algo) -> bool:
    """Whether two algorithm structures hold the same bytes (a rebuilt one against the
    heuristic's: proof that the name carries everything)."""
    return tuple(x.data) == tuple(y.data)
