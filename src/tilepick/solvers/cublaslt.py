"""cuBLASLt's heuristic entries as candidates of their own: ``gemm.cublaslt``.

torch.matmul runs the one algorithm cuBLAS's heuristic puts first; cuBLASLt's heuristic lists
others for the same GEMM, and any of them can be run by name (:mod:`.cublaslt_lib`). Each entry
is a config of this family, ``gemm.cublaslt.<entry>`` (``KernelConfig.entry``, e.g.
``gemm.cublaslt.a66.t197.s35.k1.r0.w0.c2.i0.cl5``). The family declares no static space: the
heuristic names the entries per problem, on the GPU (:meth:`CublasLtSolver.entries`), and an
entry named elsewhere (a dataset, a model, the perf-db) is checked by rebuilding it for the
problem (:meth:`CublasLtSolver.config_invalid_reason`).

Served: bf16 and fp16, one batch (2-D operands, or 3-D ones of batch 1), any of the four
layouts with padded leading dimensions; C row-major. Every launch uses a workspace of
:data:`cublaslt_lib.WORKSPACE_BYTES`: an eager one kept per (device, stream), a captured one
its own from the CUDA graph's pool (:func:`capture_workspace`).
"""

from __future__ import annotations

import threading

from tilepick.config import NAMED_VENDOR_FAMILIES, KernelConfig
from tilepick.hardware import HardwareProfile
from tilepick.problem import DType, GemmProblem
from tilepick.runtime import allocate_outside_graph_pools, capturing, raw_stream_getter
from tilepick.solvers import cublaslt_lib, splitk_guard
from tilepick.solvers.base import ConfigInvalidError, NotInThisContextError, Solver

# the problem dtypes the binding serves, by cublaslt_lib's names
LT_DTYPES = {DType.BF16: "bfloat16", DType.FP16: "float16"}
# cuBLASLt's heuristic assumes operands aligned to this many bytes unless told otherwise
# (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES, default 256): a launch on tensors that are not
# is refused for that call only (the next candidate runs), not recorded as a failing entry
POINTER_ALIGN = 256
# memoised LtGemm descriptors (problem or tensor signature) kept at most: each holds a few
# cuBLASLt objects; past this many, the memo starts over (bound launches keep theirs)
_MAX_MEMO = 16384

_availability: list = []   # [reason or None], once known


def availability() -> str | None:
    """None when cuBLASLt can run in this process (torch sees a CUDA device and the
    libcublasLt torch uses loads), else why not. Never raises; the answer is kept, except one
    asked during CUDA graph capture before the library was loaded (loading it may run a
    matmul and synchronise): that one says so and is asked again next time."""
    if _availability:
        return _availability[0]
    try:
        import torch

        if not torch.cuda.is_available():
            reason = "cuBLASLt needs a CUDA device; torch sees none"
        elif capturing():
            return "cuBLASLt is not loaded yet and is not loaded during CUDA graph capture"
        else:
            cublaslt_lib.library()
            reason = None
    except cublaslt_lib.LtError as e:
        reason = str(e)
    except Exception as e:  # noqa: BLE001 (an answer, never an error: a candidate less)
        reason = f"cuBLASLt is not usable in this process: {type(e).__name__}: {e}"
    _availability.append(reason)
    return reason


def available() -> bool:
    """Whether cuBLASLt is usable in this process (:func:`availability`, kept)."""
    return availability() is None


def lt_args(problem: GemmProblem) -> tuple:
    """``LtGemm``'s arguments but the device, ``(m, n, k, dtype, a_strides, b_strides, ldc)``,
    for the problem's tensors: A[m, k] row-major has strides (lda, 1), column-major (1, lda);
    B[k, n] likewise with ldb; C is row-major with ldc. The same tuple as
    ``cublaslt_lib.tensor_args`` gives for tensors of the problem's layout (a pure function:
    no cuBLASLt, no CUDA)."""
    p = problem
    if p.dtype not in LT_DTYPES:
        raise ValueError(f"{p.key()}: the cuBLASLt binding serves "
                         f"{sorted(d.value for d in LT_DTYPES)}, got {p.dtype.value}")
    if p.batch != 1:
        raise ValueError(f"{p.key()}: the cuBLASLt binding serves one batch, got {p.batch}")
    a_strides = (p.lda, 1) if p.a_row_major else (1, p.lda)
    b_strides = (p.ldb, 1) if p.b_row_major else (1, p.ldb)
    return p.m, p.n, p.k, LT_DTYPES[p.dtype], a_strides, b_strides, p.ldc


def _views(a, b, out):
    """The 2-D operands of a launch: 2-D tensors as they are, 3-D ones of batch 1 as their
    [0] views; ValueError for anything else."""
    dims = (a.dim(), b.dim(), out.dim())
    if dims == (2, 2, 2):
        return a, b, out
    if dims == (3, 3, 3) and a.shape[0] == b.shape[0] == out.shape[0] == 1:
        return a[0], b[0], out[0]
    raise ValueError(f"gemm.cublaslt takes 2-D operands or 3-D ones of batch 1, got a "
                     f"{tuple(a.shape)}, b {tuple(b.shape)}, out {tuple(out.shape)}")


def _tensor_key(a, b, out) -> tuple:
    """What a prepared launch depends on: shapes, strides, dtypes and devices."""
    return tuple((tuple(t.shape), tuple(t.stride()), t.dtype, t.device) for t in (a, b, out))


def _mismatch(prepared: tuple, got: tuple) -> str:
    """Which tensors of a call differ from those a launch was prepared for, and how."""
    def say(t):
        shape, strides, dtype, device = t
        return f"{tuple(shape)} strides {tuple(strides)} {dtype} on {device}"
    return "; ".join(f"{name} was prepared for {say(p)}, got {say(g)}"
                     for name, p, g in zip(("a", "b", "out"), prepared, got) if p != g)


def capture_workspace(device):
    """A workspace of this launch's own, for a launch being captured into a CUDA graph.

    Why not the stream's kept buffer: the graph would bake its address in, and a replay on
    another stream, or concurrent with eager launches on the capturing stream, would share
    it (PyTorch gives captured cuBLAS / cuBLASLt calls such invocation-scoped workspaces for
    the same reason, pytorch#193832). Allocated during capture it comes from the graph's
    private pool, which the graph keeps for its replays; freed when the launch returns, the
    pool hands it to later allocations of the same capture in stream order, as any temporary
    of a captured region."""
    import torch

    return torch.empty(cublaslt_lib.WORKSPACE_BYTES, dtype=torch.uint8, device=device)


class CublasLtSolver(Solver):
    """cuBLASLt's heuristic entries for a problem, each run by name (``cublasLtMatmul`` with
    the rebuilt algorithm) through :mod:`.cublaslt_lib`."""

    family = NAMED_VENDOR_FAMILIES[0]

    def __init__(self):
        self._lock = threading.Lock()
        self._problem_gemms: dict = {}    # (problem, device index) -> LtGemm
        self._entries: dict = {}          # (problem, device index) -> entries or LtError
        self._invalid: dict = {}          # (problem, entry, device index) -> reason | None
        self._tensor_gemms: dict = {}     # tensor key -> LtGemm
        self._algos: dict = {}            # (tensor key, entry) -> rebuilt algorithm
        self._workspaces: dict = {}       # (device index, stream handle) -> uint8 tensor
        self._ready: set = set()          # devices whose cuBLASLt handle exists

    def _remember(self, memo: dict, key, value) -> None:
        """``memo[key] = value`` under the lock, the memo started over past ``_MAX_MEMO``."""
        with self._lock:
            if len(memo) >= _MAX_MEMO:
                memo.clear()
            memo[key] = value

    # -- rules --------------------------------------------------------------------------------
    def not_applicable_reason(self, problem: GemmProblem, hw: HardwareProfile) -> str | None:
        if not available():
            return availability() or "cuBLASLt is not usable in this process"
        if problem.dtype is DType.FP8:
            return "fp8 is not bound (cuBLASLt's scaled fp8 GEMM needs scale descriptors)"
        if problem.dtype not in LT_DTYPES:
            return (f"the cuBLASLt binding serves bf16 and fp16, not "
                    f"{problem.dtype_token}")
        if problem.batch != 1:
            return "batched problems are not bound yet (strided-batch layouts)"
        return None

    def _problem_gemm(self, problem: GemmProblem):
        """The problem's descriptors on the current device (memoised): (LtGemm, device)."""
        import torch

        device = torch.cuda.current_device()
        key = (problem, device)
        gemm = self._problem_gemms.get(key)
        if gemm is None:
            self._refuse_first_handle_in_capture(device, problem.key())
            gemm = cublaslt_lib.LtGemm(*lt_args(problem), device_index=device)
            self._remember(self._problem_gemms, key, gemm)
            self._ready.add(device)
        return gemm, device

    def _refuse_first_handle_in_capture(self, device, what) -> None:
        """The first descriptors on a device create its cuBLASLt handle: never inside CUDA
        graph capture, which cuBLASLt does not document ``cublasLtCreate`` as safe in."""
        if device not in self._ready and capturing():
            raise NotInThisContextError(
                f"gemm.cublaslt for {what}: cuBLASLt has no handle on device {device} yet, and "
                "creating one is not done inside CUDA graph capture")

    def entries(self, problem: GemmProblem) -> list[tuple]:
        """The heuristic's entries for the problem on the current device, in its order:
        ``[(LtAlgo, {rank, workspace, waves}), ...]`` (memoised per problem and device;
        LtError when the heuristic fails, memoised too)."""
        gemm, device = self._problem_gemm(problem)
        key = (problem, device)
        got = self._entries.get(key)
        if got is None:
            try:
                got = [(name, info) for name, _, info in gemm.heuristic()]
            except cublaslt_lib.LtError as e:
                got = e
            self._remember(self._entries, key, got)
        if isinstance(got, Exception):
            raise got
        return list(got)

    def configs(self, problem: GemmProblem, hw: HardwareProfile | None = None) -> list[KernelConfig]:
        """One config per heuristic entry, in the heuristic's order (none when not applicable
        or when the heuristic fails for the problem)."""
        from tilepick.hardware import current

        if self.not_applicable_reason(problem, hw or current()) is not None:
            return []
        try:
            found = self.entries(problem)
        except (cublaslt_lib.LtError, ValueError):
            return []
        return [KernelConfig(self.family, entry=name.name) for name, _ in found]

    def config_invalid_reason(self, problem: GemmProblem, config: KernelConfig,
                              hw: HardwareProfile) -> str | None:
        """None when cuBLASLt rebuilds the entry for the problem on the current device
        (``LtGemm.rebuild``: ``cublasLtMatmulAlgoCheck`` accepts it), else cuBLASLt's refusal.
        The hardware profile plays no part: cuBLASLt answers for the device itself."""
        why = self.not_applicable_reason(problem, hw)
        if why is not None:
            return why
        if config.family != self.family:
            return f"config {config.id} is not of family {self.family}"
        try:
            name = cublaslt_lib.LtAlgo.parse(config.entry)
        except ValueError as e:
            return str(e)
        dropping = splitk_guard.entry_refusal(problem, name.splitk)
        if dropping is not None:
            return dropping
        try:
            gemm, device = self._problem_gemm(problem)
        except cublaslt_lib.LtError as e:
            return str(e)
        key = (problem, config.entry, device)
        if key in self._invalid:
            return self._invalid[key]
        try:
            gemm.rebuild(name)
            reason = None
        except (cublaslt_lib.LtError, ValueError) as e:
            reason = str(e)
        self._remember(self._invalid, key, reason)
        return reason

    def default_distance(self, problem: GemmProblem):
        """The heuristic's own order (``default_config`` = its first entry)."""
        try:
            rank = {name.name: i for i, (name, _) in enumerate(self.entries(problem))}
        except (cublaslt_lib.LtError, ValueError):
            rank = {}
        return lambda c: (rank.get(c.entry, len(rank)), c.id)

    def stand_in(self, config: KernelConfig, problem_like: GemmProblem,
                 hw: HardwareProfile) -> GemmProblem:
        """An entry has no tile parameters to fit: the problem itself."""
        return problem_like

    def workspace(self, problem, config) -> int:
        # one buffer per (device, stream), allocated once and shared by every entry
        return cublaslt_lib.WORKSPACE_BYTES

    # -- launches -----------------------------------------------------------------------------
    def launch(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        return self.bind(problem, config, a, b, out, scale_a, scale_b)(a, b, out)

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        """The descriptors for tensors laid out like these and the rebuilt entry, worked out
        once per tensor signature (memoised: a repeated bind costs lookups); each call finds
        its stream's workspace and runs ``cublasLtMatmul``."""
        try:
            a2, b2, o2 = _views(a, b, out)
        except ValueError as e:
            raise ValueError(f"{config.id} on {problem.key()}: {e}") from None
        key = _tensor_key(a2, b2, o2)
        device = a2.device
        gemm = self._tensor_gemms.get(key)
        if gemm is None:
            self._refuse_first_handle_in_capture(device.index, problem.key())
            try:
                gemm = cublaslt_lib.for_tensors(a2, b2, o2)
            except ValueError as e:
                raise ValueError(f"{config.id} on {problem.key()} ({problem.dtype.value}, "
                                 f"tensors on {device}): {e}") from None
            except cublaslt_lib.LtError as e:
                raise ConfigInvalidError(f"{config.id} on {problem.key()}: {e}") from None
            self._remember(self._tensor_gemms, key, gemm)
            self._ready.add(device.index)
        algo = self._algos.get((key, config.entry))
        if algo is None:
            name = cublaslt_lib.LtAlgo.parse(config.entry)
            dropping = splitk_guard.entry_refusal(problem, name.splitk)
            if dropping is not None:
                raise ConfigInvalidError(f"{config.id}: {dropping}")
            try:
                algo = gemm.rebuild(name)
            except cublaslt_lib.LtError as e:
                raise ConfigInvalidError(f"{config.id} on {problem.key()}: {e}") from None
            self._remember(self._algos, (key, config.entry), algo)
        return self._prepared_run(problem, config, device, gemm, algo, key, a.dim() == 2)

    def _prepared_run(self, problem, config, device, gemm, algo, key, flat: bool):
        """The call of a bound launch. Each call checks what can change between calls with
        the same prepared launch: the tensors' signature (one tuple compare against the one
        the descriptors were made for), the pointers' alignment, the stream and capture; the
        rest was checked once, at bind."""
        launch = gemm.launcher(algo)
        workspace_for, workspaces = self._workspace_for, self._workspaces
        stream_of, index = raw_stream_getter(), device.index
        (sa, sta, dta, dva), (sb, stb, dtb, dvb), (so, sto, dto, dvo) = key
        expect = (sa, sb, so, sta, stb, sto, dta, dtb, dto, dva, dvb, dvo)

        def run(a, b, out, scale_a=None, scale_b=None):
            if flat:
                x, y, z = a, b, out
            else:
                x, y, z = _views(a, b, out)
            if (x.shape, y.shape, z.shape, x.stride(), y.stride(), z.stride(), x.dtype,
                    y.dtype, z.dtype, x.device, y.device, z.device) != expect:
                raise ValueError(f"{config.id} on {problem.key()}: "
                                 f"{_mismatch(key, _tensor_key(x, y, z))}")
            pa, pb, pc = x.data_ptr(), y.data_ptr(), z.data_ptr()
            if (pa | pb | pc) % POINTER_ALIGN:
                raise NotInThisContextError(
                    f"{config.id} on {problem.key()}: an operand's address is not a multiple "
                    f"of {POINTER_ALIGN} bytes, which cuBLASLt's heuristic assumed when it "
                    "listed the entry (tensors sliced off an allocation's start)")
            stream = stream_of(index)
            if capturing():
                ws = capture_workspace(device)
            else:
                ws = workspaces.get((index, stream))
                if ws is None:
                    ws = workspace_for(device, stream)
            launch(pa, pb, pc, ws, stream)
            return out
        return run

    def _workspace_for(self, device, stream: int):
        """The workspace of (device, stream) for eager launches, allocated on first use
        (outside CUDA graph pools) and kept."""
        import torch

        key = (device.index, stream)
        ws = self._workspaces.get(key)
        if ws is not None:
            return ws
        with self._lock:
            ws = self._workspaces.get(key)
            if ws is None:
                ws = allocate_outside_graph_pools(
                    lambda: torch.empty(cublaslt_lib.WORKSPACE_BYTES, dtype=torch.uint8,
                                        device=device), device)
                self._workspaces[key] = ws
        return ws
