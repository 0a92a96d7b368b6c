"""Solvers for the Triton GEMM families: validity rules, launch plans and launches.

A launch plan (grid + constexpr specialisation) depends only on (problem, config), so it is
computed once and cached: a repeated shape pays for a dictionary lookup, not for the rules.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from typing import NamedTuple

from tilepick.config import SPACES, KernelConfig
from tilepick.hardware import HardwareProfile, current
from tilepick.problem import DType, GemmProblem, _align_bytes, cdiv, next_pow2
from tilepick.runtime import (allocate_outside_graph_pools, capturing, patch_interpreter,
                              raw_stream_getter)
from tilepick.solvers.base import ConfigInvalidError, Solver
from tilepick.solvers import repack
from tilepick.solvers.direct_launch import DirectLaunch

# fp32 accumulator registers one thread may hold before the compiler spills (255 is the hard
# cap per thread; operands, addresses and the pipeline need the rest).
MAX_ACC_REGS_PER_THREAD = 128
# int32 offsets inside one matrix: larger matrices go to cuBLAS.
MAX_MATRIX_ELEMS = 2**31 - 1
# Hopper's fp8 wgmma (Triton uses it from block_m 64) accumulates with reduced precision: on
# m64 n1 k1048576 (fp8 rc, H200, sweep e47b815fbf) every block_m 64 config missed the fp8
# tolerance of 0.02 (0.0355 at 1M K per program, 0.0276 at 512K, 0.0168 at 256K) while
# block_m 16/32 (mma.sync) gave 0.0017. Until the kernels promote partial sums to fp32 every
# few K-blocks, such configs are invalid past this K per program.
FP8_WGMMA_MAX_K = 1 << 18
FP8_WGMMA_MIN_BLOCK_M = 64
# elements per program of the split-K reduction kernel
REDUCE_BLOCK = 1024


def fp8_wgmma_k_too_long(fp8, block_m, k_per_program):
    """The rule above; vectorised use (numpy arrays) in features.candidates."""
    return fp8 & (block_m >= FP8_WGMMA_MIN_BLOCK_M) & (k_per_program > FP8_WGMMA_MAX_K)


def _as3d(t):
    """A 2-D matrix as a batch of one. The batch stride spans the whole matrix (rows * ld for
    either major order), so it keeps the leading dimension's alignment (TMA checks it);
    ``unsqueeze`` would give rows * stride(0), which for a column-major matrix is just M."""
    if t.dim() == 3:
        return t
    rows, cols = t.shape
    span = max(rows * t.stride(0), cols * t.stride(1), 1)
    return t.as_strided((1, rows, cols), (span, t.stride(0), t.stride(1)))


def _precision(problem: GemmProblem) -> str:
    return "ieee" if problem.dtype is DType.FP32 and not problem.tf32 else "tf32"


def _compile_failure(exc: Exception) -> bool:
    """Errors that mean 'this config cannot be built or run for this problem'."""
    name = type(exc).__name__
    return name in ("OutOfResources", "CompilationError", "PTXASError", "CompileTimeAssertionFailure",
                    "MLIRCompilationError") or "out of resource" in str(exc).lower()


@dataclass(frozen=True)
class LaunchPlan:
    grid: tuple
    constexprs: tuple  # sorted (name, value) pairs: hashable, and the compile-cache identity

    @functools.cached_property
    def kwargs(self) -> dict:
        """The constexprs as launch keywords, built once per plan (a launch only reads them)."""
        return dict(self.constexprs)


def _clone_descriptor(template, base):
    """``template`` over another tensor of the same layout, without re-running the descriptor's
    validation (a few microseconds each, three per launch): ``bind``'s contract is that the
    tensors have the template's shapes, strides, dtype and 16-byte alignment."""
    d = object.__new__(type(template))
    d.__dict__.update(template.__dict__)
    d.base = base
    return d


class TritonGemmSolver(Solver):
    """Rules shared by every Triton family."""

    uses_tma = False

    @property
    def min_block_m(self) -> int:
        """The smallest tile the family declares: the floor of the 'larger than needed' rule."""
        return min(SPACES[self.family]["block_m"])

    @property
    def min_block_n(self) -> int:
        return min(SPACES[self.family]["block_n"])

    @property
    def min_block_k(self) -> int:
        return min(SPACES[self.family]["block_k"])

    def not_applicable_reason(self, problem: GemmProblem, hw: HardwareProfile) -> str | None:
        p = problem
        for name, rows, cols in (("A", p.m, p.k), ("B", p.k, p.n), ("C", p.m, p.n)):
            if rows * cols > MAX_MATRIX_ELEMS:
                return f"{name} has {rows * cols} elements per matrix, above the int32 offset limit"
        return None

    def smem_bytes(self, problem: GemmProblem, c: KernelConfig) -> int:
        return c.num_stages * (c.block_m + c.block_n) * c.block_k * problem.dtype.itemsize

    # a tile smaller than this gives 8 warps too little work
    min_tile_for_8_warps = 64 * 64

    def acc_regs(self, c: KernelConfig, problem: GemmProblem) -> int:
        """fp32 accumulator registers per thread (the output tile spread over the warps)."""
        return c.block_m * c.block_n // (32 * c.num_warps)

    def config_invalid_reason(self, problem: GemmProblem, c: KernelConfig,
                              hw: HardwareProfile) -> str | None:
        p = problem
        smem = self.smem_bytes(p, c)
        if smem > hw.smem_per_block:
            return f"needs {smem} B of shared memory, the GPU allows {hw.smem_per_block} B per block"
        regs = self.acc_regs(c, p)
        if regs > MAX_ACC_REGS_PER_THREAD:
            return (f"accumulator needs {regs} registers per thread "
                    f"(> {MAX_ACC_REGS_PER_THREAD}; it would spill)")
        if c.num_warps >= 8 and c.block_m * c.block_n < self.min_tile_for_8_warps:
            return f"a {c.block_m}x{c.block_n} tile gives 8 warps too little work"
        if c.block_m > max(self.min_block_m, next_pow2(p.m)):
            return f"block_m={c.block_m} is larger than M={p.m} needs"
        if c.block_n > max(self.min_block_n, next_pow2(p.n)):
            return f"block_n={c.block_n} is larger than N={p.n} needs"
        if c.block_k > max(self.min_block_k, next_pow2(p.k)):
            return f"block_k={c.block_k} is larger than K={p.k} needs"
        if fp8_wgmma_k_too_long(p.dtype is DType.FP8, c.block_m, cdiv(p.k, c.split_k)):
            return (f"fp8 with block_m={c.block_m} (Hopper wgmma) accumulates {cdiv(p.k, c.split_k)} "
                    f"K per program with a reduced-precision accumulator: over "
                    f"{FP8_WGMMA_MAX_K} the error misses the fp8 tolerance (measured)")
        if c.split_k > 1:
            if cdiv(p.k, c.block_k) < c.split_k:
                return (f"split_k={c.split_k} leaves splits empty: K={p.k} has "
                        f"{cdiv(p.k, c.block_k)} blocks of {c.block_k}")
            # Split-K exists to fill a GPU that the output tiles alone leave under-occupied.
            tiles = cdiv(p.m, c.block_m) * cdiv(p.n, c.block_n) * p.batch
            if tiles > hw.sm_count:
                return (f"{tiles} output tiles already fill the {hw.sm_count} SMs; "
                        "split-K only adds traffic")
        return None

    def calls(self, p: GemmProblem, c: KernelConfig, a, b, out, scale_a, scale_b):
        """The kernel launches that compute the product: [(kernel, grid, args, kwargs)]."""
        raise NotImplementedError

    def launch(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        patch_interpreter()
        try:
            for kernel, grid, args, kwargs in self.calls(problem, config, _as3d(a), _as3d(b),
                                                         _as3d(out), scale_a, scale_b):
                kernel[grid](*args, **kwargs)
            return out
        except Exception as exc:  # compile/launch failures become an invalid candidate
            if _compile_failure(exc):
                first = str(exc).splitlines()[0] if str(exc) else ""
                raise ConfigInvalidError(f"{config.id} failed for {problem.key()}: "
                                         f"{type(exc).__name__}: {first}") from exc
            raise

    def compiled_problem(self, problem: GemmProblem) -> GemmProblem:
        """The problem whose signature the kernels are compiled for (the repack family
        compiles for its aligned copy of the operands)."""
        return problem

    def kernels(self, problem: GemmProblem, config: KernelConfig) -> list[tuple[str, tuple]]:
        """(kernel name, constexprs) of each launch of ``calls``, in order."""
        raise NotImplementedError

    def binaries(self, problem: GemmProblem, config: KernelConfig) -> tuple[tuple, ...]:
        """One hashable key per launch of ``calls``, equal exactly when two launches run the
        same compiled binary: the kernel, its constexprs and what Triton specialises the
        signature on (dtype, layout, pointer alignment; sizes and strides are run-time
        arguments). The compile pool compiles each key once, whichever configs share it."""
        q = self.compiled_problem(problem)
        return tuple((name, constexprs, q.dtype_token, q.layout, q.base_align)
                     for name, constexprs in self.kernels(problem, config))

    def compile_stand_in(self, problem: GemmProblem, n: int = 64) -> GemmProblem:
        """Small operands that select the same binaries as ``problem``'s (its dtype, layout
        and pointer alignment; the launch plan comes from the real problem), ``n`` columns."""
        return GemmProblem(64, n, 64, 1, problem.dtype, problem.layout, problem.tf32,
                           base_align=problem.base_align)

    def warmup(self, problem: GemmProblem, config: KernelConfig, device="cuda",
               only: int | None = None) -> None:
        """Compile (into Triton's on-disk cache) exactly the binaries ``launch`` would use for
        ``problem`` (``only``: just that launch's, as ``binaries`` numbers them), without
        launching: sizes are run-time arguments, so small stand-in tensors with the problem's
        dtype, layout and pointer alignment select the same specialisation, while the
        constexprs come from the real problem's plan."""
        from tilepick.runtime import interpreting
        from tilepick.tensors import make_inputs

        if interpreting():
            return  # nothing is compiled ahead under the interpreter
        problem = self.compiled_problem(problem)
        inp = make_inputs(self.compile_stand_in(problem), device)
        calls = self.calls(problem, config, _as3d(inp.a), _as3d(inp.b), _as3d(inp.out),
                           inp.scale_a, inp.scale_b)
        for i, (kernel, grid, args, kwargs) in enumerate(calls):
            if only is None or i == only:
                kernel.warmup(*args, grid=grid, **kwargs)


def _alignment_hints(p: GemmProblem, block_k: int) -> dict:
    """The alignment facts the pointer-style kernels state as constexprs (VEC_A/B: elements
    of a full 16-byte vector where the operand allows it, else 1; VEC_K: K's alignment where
    the K loop is masked, EVEN_K: no mask). Hints only for full 16-byte vectors: partial
    widths would multiply the compiled specialisations for little gain. None for C: hinting
    its stride slowed the epilogue 1.1-4x (``kernels.gemm_ptr.store_tile`` says why)."""
    it = p.dtype.itemsize
    vec = lambda op, size: 16 // size if p.operand_align(op) == 16 else 1  # noqa: E731
    even_k = p.k % block_k == 0
    k_align = 16 // it if (p.k * it) % 16 == 0 else 1
    return dict(VEC_A=vec("a", it), VEC_B=vec("b", it),
                VEC_K=1 if even_k else max(1, k_align), EVEN_K=even_k)


def _check_hints(kw: dict, p: GemmProblem, a_batch: int, a_ld: int, b_batch: int,
                 b_ld: int) -> None:
    """The pointer-style kernels round each hinted stride down to its VEC
    (kernels.common.aligned): refuse tensors whose strides break the alignment the plan was
    made for, rather than compute a wrong answer (tensors that do not match their problem's
    lds land here). C gets no hint, so nothing is checked there."""
    va, vb = kw["VEC_A"], kw["VEC_B"]
    if a_batch % va or a_ld % va or b_batch % vb or b_ld % vb or p.k % kw["VEC_K"]:
        raise ConfigInvalidError(
            f"{p.key()}: tensor strides (A batch {a_batch}, ld {a_ld}; B batch {b_batch}, ld "
            f"{b_ld}) are not multiples of the vector widths the launch plan assumes (A {va}, "
            f"B {vb}): the tensors do not match the problem")


class PointerSolver(TritonGemmSolver):
    """Masked pointer kernel; subclasses add split-K (deterministic or atomic)."""

    family = "gemm.ptr"
    split_mode = 0

    def workspace(self, problem, config) -> int:
        p = problem
        if self.split_mode == 1:
            return 4 * config.split_k * p.batch * p.m * p.n
        if self.split_mode == 2:
            return 4 * p.batch * p.m * p.n
        return 0

    @functools.lru_cache(maxsize=65536)
    def plan(self, problem: GemmProblem, config: KernelConfig) -> LaunchPlan:
        p, c = problem, config
        constexprs = dict(
            BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k, GROUP_M=c.group_m,
            SPLIT_MODE=self.split_mode,
            A_ROW=p.a_row_major, B_ROW=p.b_row_major, **_alignment_hints(p, c.block_k),
            HAS_SCALE=p.dtype is DType.FP8 and self.split_mode == 0,
            PRECISION=_precision(p), num_warps=c.num_warps, num_stages=c.num_stages)
        grid = (cdiv(p.m, c.block_m) * cdiv(p.n, c.block_n), c.split_k, p.batch)
        return LaunchPlan(grid, tuple(sorted(constexprs.items())))

    def _workspace(self, p: GemmProblem, c: KernelConfig, device):
        import torch

        if self.split_mode == 1:
            return torch.empty(c.split_k * p.batch * p.m * p.n, device=device, dtype=torch.float32)
        if self.split_mode == 2:
            return torch.zeros(p.batch * p.m * p.n, device=device, dtype=torch.float32)
        return None

    def _static(self, p: GemmProblem, c: KernelConfig, a, b, out, has_scale: bool):
        """What a launch passes besides the tensors, from 3-D views: (grid, size and stride
        arguments, constexprs) of the GEMM kernel and, for split-K, of the reduction."""
        plan = self.plan(p, c)
        kw = plan.kwargs
        # a single batch's stride is never used (program_id(2) == 0): pass 0, always aligned
        sa, sb, sc = a.stride(), b.stride(), out.stride()
        sa0, sb0, sc0 = (sa[0], sb[0], sc[0]) if p.batch > 1 else (0, 0, 0)
        _check_hints(kw, p, sa0, sa[1] if p.a_row_major else sa[2], sb0,
                     sb[1] if p.b_row_major else sb[2])
        main = (plan.grid, (p.m, p.n, p.k, sa0, sa[1], sa[2], sb0, sb[1], sb[2], sc0, sc[1], sc[2]),
                kw)
        if not self.split_mode:
            return main, None
        total = p.batch * p.m * p.n
        return main, ((cdiv(total, REDUCE_BLOCK),), (p.m, p.n, sc[0], sc[1], total),
                      self._reduce_kwargs(c, has_scale))

    def _reduce_kwargs(self, c: KernelConfig, has_scale: bool) -> dict:
        return dict(SLICES=c.split_k if self.split_mode == 1 else 1, BLOCK=REDUCE_BLOCK,
                    HAS_SCALE=has_scale, num_warps=4)

    def kernels(self, problem, config):
        out = [("gemm_ptr_kernel", self.plan(problem, config).constexprs)]
        if self.split_mode:   # fp8 inputs come with scales, which the reduction applies
            kw = self._reduce_kwargs(config, problem.dtype is DType.FP8)
            out.append(("splitk_reduce_kernel", tuple(sorted(kw.items()))))
        return out

    def calls(self, p, c, a, b, out, scale_a, scale_b):
        from tilepick.kernels.gemm_ptr import gemm_ptr_kernel, splitk_reduce_kernel

        (grid, args, kw), reduce = self._static(p, c, a, b, out, scale_a is not None)
        ws = self._workspace(p, c, a.device)
        calls = [(gemm_ptr_kernel, grid, (a, b, out, ws, scale_a, scale_b, *args), kw)]
        if reduce is not None:
            rgrid, rargs, rkw = reduce
            calls.append((splitk_reduce_kernel, rgrid, (ws, out, scale_a, scale_b, *rargs), rkw))
        return calls

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        from tilepick.kernels.gemm_ptr import gemm_ptr_kernel, splitk_reduce_kernel

        patch_interpreter()
        p, c = problem, config
        (grid, args, kw), reduce = self._static(p, c, _as3d(a), _as3d(b), _as3d(out),
                                                scale_a is not None)
        # the kernel only reads pointers: no 3-D views per call
        gemm = DirectLaunch(gemm_ptr_kernel, grid, kw, guarded=6)
        if reduce is None:
            def run(a, b, out, scale_a=None, scale_b=None):
                gemm(a, b, out, None, scale_a, scale_b, *args)
                return out
            return run
        rgrid, rargs, rkw = reduce
        finish = DirectLaunch(splitk_reduce_kernel, rgrid, rkw, guarded=4)
        workspace = self._workspace

        def run_split(a, b, out, scale_a=None, scale_b=None):
            ws = workspace(p, c, a.device)
            gemm(a, b, out, ws, scale_a, scale_b, *args)
            finish(ws, out, scale_a, scale_b, *rargs)
            return out
        return run_split


class SplitKSolver(PointerSolver):
    family = "gemm.splitk"
    split_mode = 1


class SplitKAtomicSolver(PointerSolver):
    family = "gemm.splitk_atomic"
    split_mode = 2


class ZeroKept:
    """fp32 workspaces and int32 counters that every launch of a one-launch split-K kernel
    leaves at zero, one pair per (device, stream): launches on one stream run in order, so
    each finds them zero; launches on two streams never share them. A larger problem gets a
    new zeroed pair (the old one goes back to PyTorch's allocator, which reuses memory in its
    stream's order). A launch captured into a CUDA graph gets a zeroed pair of its own."""

    def __init__(self):
        self._pairs: dict = {}
        self._lock = threading.Lock()

    @functools.cached_property
    def _stream_of(self):
        return raw_stream_getter()   # (made once: it looks torch's C function up)

    def get(self, device, ws_elems: int, counters: int):
        import torch

        if capturing():
            # the kept pair would be baked into the graph and shared by a replay on another
            # stream with the launches there: this launch gets a pair of its own from the
            # graph's pool, zeroed by a memset the graph replays each time (the pool may lend
            # the memory to later temporaries of the capture in between)
            return (torch.zeros(ws_elems, device=device, dtype=torch.float32),
                    torch.zeros(counters, device=device, dtype=torch.int32))
        if device.type == "cuda":
            index = torch.cuda.current_device() if device.index is None else device.index
            key = (index, self._stream_of(index))
        else:
            key = (str(device), 0)
        pair = self._pairs.get(key)
        if pair is None or pair[0].numel() < ws_elems or pair[1].numel() < counters:
            with self._lock:
                pair = self._pairs.get(key)
                if pair is None or pair[0].numel() < ws_elems or pair[1].numel() < counters:
                    old = (0, 0) if pair is None else (pair[0].numel(), pair[1].numel())
                    sizes = (max(ws_elems, old[0]), max(counters, old[1]))
                    # kept across calls: never in a CUDA graph pool (reduce-overhead warm-up)
                    pair = allocate_outside_graph_pools(lambda: (
                        torch.zeros(sizes[0], device=device, dtype=torch.float32),
                        torch.zeros(sizes[1], device=device, dtype=torch.int32)), device)
                    self._pairs[key] = pair
        return pair


# the one store of the one-launch split-K families' pairs (each launch leaves its pair at zero,
# so the families share it): a module global, so prepared launches look it up at call time
# and hold no tensors of their own
_ZERO_KEPT = ZeroKept()


def _zero_kept_sizes(p: GemmProblem, plan: LaunchPlan) -> tuple[int, int]:
    """(fp32 workspace elements, counters) a one-launch split-K needs: [batch, M, N] partial
    sums and one counter per output tile (the grid's first dimension) and batch."""
    return p.batch * p.m * p.n, plan.grid[0] * p.batch


class OneLaunchSplitK:
    """What the one-launch split-K families share (a mixin ahead of their solver's base):
    split mode 3, the zero-kept store, and its size as their workspace."""

    split_mode = 3
    state = _ZERO_KEPT

    def workspace(self, problem, config) -> int:
        # kept between launches (per device and stream), not allocated per call
        ws_elems, counters = _zero_kept_sizes(problem, self.plan(problem, config))
        return 4 * ws_elems + 4 * counters


class SplitKFusedSolver(OneLaunchSplitK, PointerSolver):
    """Split-K in one launch (``kernels.gemm_ptr.gemm_splitk_fused_kernel``): the partials
    meet in a zero-kept workspace (:class:`ZeroKept`) and the last program of each tile casts,
    so there is no clearing launch and no reduction launch. Inside CUDA graph capture a launch
    gets a pair of its own from the graph's pool (:meth:`ZeroKept.get`)."""

    family = "gemm.splitk_fused"

    @functools.lru_cache(maxsize=65536)
    def plan(self, problem: GemmProblem, config: KernelConfig) -> LaunchPlan:
        """The pointer kernel's plan, less SPLIT_MODE (this kernel has one mode), with the fp8
        scales applied in the kernel (there is no reduction launch to apply them)."""
        base = super().plan(problem, config)
        kw = dict(base.constexprs)
        del kw["SPLIT_MODE"]
        kw["HAS_SCALE"] = problem.dtype is DType.FP8
        return LaunchPlan(base.grid, tuple(sorted(kw.items())))

    def _fused_args(self, p: GemmProblem, c: KernelConfig, a, b, out):
        (grid, args, kw), _ = self._static(p, c, a, b, out, False)
        return (grid, args, kw, *_zero_kept_sizes(p, self.plan(p, c)))

    def kernels(self, problem, config):
        return [("gemm_splitk_fused_kernel", self.plan(problem, config).constexprs)]

    def calls(self, p, c, a, b, out, scale_a, scale_b):
        from tilepick.kernels.gemm_ptr import gemm_splitk_fused_kernel

        grid, args, kw, ws_elems, counters = self._fused_args(p, c, a, b, out)
        ws, cnt = self.state.get(a.device, ws_elems, counters)
        return [(gemm_splitk_fused_kernel, grid, (a, b, out, ws, cnt, scale_a, scale_b, *args),
                 kw)]

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        from tilepick.kernels.gemm_ptr import gemm_splitk_fused_kernel

        patch_interpreter()
        grid, args, kw, ws_elems, counters = self._fused_args(problem, config, _as3d(a),
                                                              _as3d(b), _as3d(out))
        gemm = DirectLaunch(gemm_splitk_fused_kernel, grid, kw, guarded=7)

        def run(a, b, out, scale_a=None, scale_b=None):
            ws, cnt = _ZERO_KEPT.get(a.device, ws_elems, counters)
            gemm(a, b, out, ws, cnt, scale_a, scale_b, *args)
            return out
        return run


class TmaSolver(TritonGemmSolver):
    """Hopper TMA kernel; ``persistent`` runs one program per SM looping over tiles."""

    family = "gemm.tma"
    persistent = False
    uses_tma = True

    def not_applicable_reason(self, problem, hw):
        why = super().not_applicable_reason(problem, hw)
        if why:
            return why
        p = problem
        if not hw.has_tma:
            return f"{hw.name} has no TMA (needs compute capability 9.0+)"
        if p.base_align < 16:
            return f"base pointers are only {p.base_align}-byte aligned; TMA needs 16"
        for name, ld, size in (("lda", p.lda, p.dtype.itemsize), ("ldb", p.ldb, p.dtype.itemsize),
                               ("ldc", p.ldc, p.dtype.out_dtype.itemsize)):
            if (ld * size) % 16:
                return f"{name}={ld} is {ld * size} bytes, not a multiple of 16 (TMA stride rule)"
        return None

    def smem_bytes(self, problem, c):
        # + the epilogue tile staged in shared memory for the TMA store
        return super().smem_bytes(problem, c) + c.block_m * c.block_n * problem.dtype.out_dtype.itemsize

    @functools.lru_cache(maxsize=65536)
    def plan(self, problem: GemmProblem, config: KernelConfig) -> LaunchPlan:
        p, c = problem, config
        if self.family == "gemm.tma_repack":
            p = self.aligned_problem(p)
        constexprs = dict(BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k,
                          GROUP_M=c.group_m, A_ROW=p.a_row_major, B_ROW=p.b_row_major,
                          HAS_SCALE=p.dtype is DType.FP8, PRECISION=_precision(p),
                          num_warps=c.num_warps, num_stages=c.num_stages)
        tiles = cdiv(p.m, c.block_m) * cdiv(p.n, c.block_n)
        if self.persistent:
            grid = (min(current().sm_count, tiles * p.batch),)
        else:
            grid = (tiles, 1, p.batch)
        return LaunchPlan(grid, tuple(sorted(constexprs.items())))

    def descriptors(self, p: GemmProblem, c: KernelConfig, a, b, out):
        from triton.tools.tensor_descriptor import TensorDescriptor

        def desc(t, block):
            return TensorDescriptor(t, list(t.shape), list(t.stride()), block)

        bm, bn, bk = c.block_m, c.block_n, c.block_k
        a_d = desc(a, [1, bm, bk]) if p.a_row_major else desc(a.transpose(1, 2), [1, bk, bm])
        b_d = desc(b, [1, bk, bn]) if p.b_row_major else desc(b.transpose(1, 2), [1, bn, bk])
        return a_d, b_d, desc(out, [1, bm, bn])

    def _kernel_and_args(self, p: GemmProblem, plan: LaunchPlan):
        from tilepick.kernels.gemm_tma import gemm_tma_kernel, gemm_tma_persistent_kernel

        if self.persistent:
            return gemm_tma_persistent_kernel, (p.m, p.n, p.k, p.batch, plan.grid[0])
        return gemm_tma_kernel, (p.m, p.n, p.k)

    def kernels(self, problem, config):
        name = "gemm_tma_persistent_kernel" if self.persistent else "gemm_tma_kernel"
        return [(name, self.plan(problem, config).constexprs)]

    def calls(self, p, c, a, b, out, scale_a, scale_b):
        plan = self.plan(p, c)
        kernel, args = self._kernel_and_args(p, plan)
        return [(kernel, plan.grid, (*self.descriptors(p, c, a, b, out), scale_a, scale_b, *args),
                 plan.kwargs)]

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        patch_interpreter()
        p, c = problem, config
        plan = self.plan(p, c)
        kernel, args = self._kernel_and_args(p, plan)
        kw = plan.kwargs
        templates = self.descriptors(p, c, _as3d(a), _as3d(b), _as3d(out))  # validated once
        for t in templates:
            t.base = None   # keep no tensor of the first call alive: each launch sets its own
        da, db, dc = templates
        gemm = DirectLaunch(kernel, plan.grid, kw, guarded=5)

        def run(a, b, out, scale_a=None, scale_b=None):
            gemm(_clone_descriptor(da, a), _clone_descriptor(db, b), _clone_descriptor(dc, out),
                 scale_a, scale_b, *args)
            return out
        return run


class TmaPersistentSolver(TmaSolver):
    family = "gemm.tma_persistent"
    persistent = True


class TmaSplitKSolver(OneLaunchSplitK, TmaSolver):
    """TMA loads split over K in one launch (``kernels.gemm_tma.gemm_tma_splitk_kernel``): the
    partials meet in the zero-kept workspace of :class:`SplitKFusedSolver`, and the last
    program of each tile stores it through the copy engine."""

    family = "gemm.tma_splitk"

    @functools.lru_cache(maxsize=65536)
    def plan(self, problem: GemmProblem, config: KernelConfig) -> LaunchPlan:
        base = super().plan(problem, config)   # the TMA plan, one program per tile
        tiles, _, batch = base.grid
        return LaunchPlan((tiles, config.split_k, batch), base.constexprs)

    def kernels(self, problem, config):
        return [("gemm_tma_splitk_kernel", self.plan(problem, config).constexprs)]

    def _split_args(self, p: GemmProblem, c: KernelConfig):
        plan = self.plan(p, c)
        return (plan, *_zero_kept_sizes(p, plan))

    def calls(self, p, c, a, b, out, scale_a, scale_b):
        from tilepick.kernels.gemm_tma import gemm_tma_splitk_kernel

        plan, ws_elems, counters = self._split_args(p, c)
        ws, cnt = _ZERO_KEPT.get(a.device, ws_elems, counters)
        return [(gemm_tma_splitk_kernel, plan.grid,
                 (*self.descriptors(p, c, a, b, out), ws, cnt, scale_a, scale_b, p.m, p.n, p.k),
                 plan.kwargs)]

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        from tilepick.kernels.gemm_tma import gemm_tma_splitk_kernel

        patch_interpreter()
        p, c = problem, config
        plan, ws_elems, counters = self._split_args(p, c)
        templates = self.descriptors(p, c, _as3d(a), _as3d(b), _as3d(out))  # validated once
        for t in templates:
            t.base = None
        da, db, dc = templates
        gemm = DirectLaunch(gemm_tma_splitk_kernel, plan.grid, plan.kwargs, guarded=7)
        sizes = (p.m, p.n, p.k)

        def run(a, b, out, scale_a=None, scale_b=None):
            ws, cnt = _ZERO_KEPT.get(a.device, ws_elems, counters)
            gemm(_clone_descriptor(da, a), _clone_descriptor(db, b), _clone_descriptor(dc, out),
                 ws, cnt, scale_a, scale_b, *sizes)
            return out
        return run


class TmaRepackSolver(TmaSolver):
    """TMA kernel for problems whose strides break the TMA rules (odd leading dimensions,
    unaligned bases): misaligned operands are first copied into 16-byte-aligned padded
    workspace (and C written through one), so the copy engine can still be used. The copies
    are part of the launch, hence of its measured time."""

    family = "gemm.tma_repack"

    def aligned_problem(self, p: GemmProblem) -> GemmProblem:
        return repack.aligned_problem(p)

    def not_applicable_reason(self, problem, hw):
        if TmaSolver.not_applicable_reason(self, problem, hw) is None:
            return "operands already meet the TMA rules (use gemm.tma)"
        return TmaSolver.not_applicable_reason(self, self.aligned_problem(problem), hw)

    def config_invalid_reason(self, problem, c, hw):
        return super().config_invalid_reason(self.aligned_problem(problem), c, hw)

    def workspace(self, problem, config) -> int:
        return repack.workspace(problem)

    def launch(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        p, q = problem, self.aligned_problem(problem)
        a3, b3, c3 = _as3d(a), _as3d(b), _as3d(out)
        i, o = p.dtype.itemsize, p.dtype.out_dtype.itemsize
        if repack.needs_copy(a3, p.lda, i):
            a3 = repack.aligned_copy(a3, p.a_row_major, q.lda, True)
        if repack.needs_copy(b3, p.ldb, i):
            b3 = repack.aligned_copy(b3, p.b_row_major, q.ldb, True)
        c_work = (repack.aligned_copy(c3, True, q.ldc, False) if repack.needs_copy(c3, p.ldc, o)
                  else c3)
        super().launch(q, config, a3, b3, c_work, scale_a, scale_b)
        if c_work is not c3:
            c3.copy_(c_work)
        return out

    def compiled_problem(self, problem):
        return self.aligned_problem(problem)

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        """The copies into aligned workspace still happen on every call (they are part of the
        launch, hence of its measured time), but which operands need them, the aligned
        problem, its plan and the TMA descriptors are worked out once: a repack launch went
        through all of that per call (~0.6 ms of host time for the copies, plans, descriptor
        checks and Triton's launch path; py-spy of a small-problem sweep, H200, a6f41e1)."""
        p, q = problem, self.aligned_problem(problem)
        i, o = p.dtype.itemsize, p.dtype.out_dtype.itemsize
        a3, b3, c3 = _as3d(a), _as3d(b), _as3d(out)
        need_a, need_b = repack.needs_copy(a3, p.lda, i), repack.needs_copy(b3, p.ldb, i)
        need_c = repack.needs_copy(c3, p.ldc, o)
        copy = repack.aligned_copy
        # stand-ins laid out like the workspace, for the inner launch's descriptors only
        inner = TmaSolver.bind(self, q, config,
                               copy(a3, p.a_row_major, q.lda, False) if need_a else a3,
                               copy(b3, p.b_row_major, q.ldb, False) if need_b else b3,
                               copy(c3, True, q.ldc, False) if need_c else c3, scale_a, scale_b)
        del a3, b3, c3

        def run(a, b, out, scale_a=None, scale_b=None):
            if need_a:
                a = copy(_as3d(a), p.a_row_major, q.lda, True)
            if need_b:
                b = copy(_as3d(b), p.b_row_major, q.ldb, True)
            if not need_c:
                inner(a, b, out, scale_a, scale_b)
                return out
            c3 = _as3d(out)
            work = copy(c3, True, q.ldc, False)
            inner(a, b, work, scale_a, scale_b)
            c3.copy_(work)
            return out
        return run


# Rows of A the GEMV serves. A program multiplies each weight tile into block_m rows on CUDA
# cores, 2 * M flops per weight element: on the suite's Llama-3 weights (H200, bf16, session 17
# probe) its best beat every other candidate by 8% at M = 2 and 2-3% at M = 3-4, and ran at
# 0.76x / 0.45x cuBLAS at M = 8 / 16, where the tensor-core families win. ``gemm.gemv_t``
# serves the same count of C's columns.
GEMV_MAX_M = 4


class GemvArgs(NamedTuple):
    """The GEMV kernels' run-time sizes and strides, in their argument order (a test checks
    it against ``kernels.gemm_gemv._RUNTIME_INTS``): the kernel's A is the vector operand, its
    B the streamed weight (the problem's A and B, or B and A for gemm.gemv_t)."""

    M: int
    N: int
    K: int
    stride_ab: int
    stride_am: int
    stride_ak: int
    stride_bb: int
    stride_bn: int
    stride_cb: int
    stride_cm: int
    stride_cn: int


class GemvSolver(TritonGemmSolver):
    """GEMV for decode steps (``kernels.gemm_gemv``): M <= GEMV_MAX_M, B column-major (the
    ``x @ W.T`` of ``nn.Linear``), every dtype; fp32 products on CUDA cores.

    The kernel streams the K-contiguous rows of a "weight" into a few rows of a "vector"
    operand. Here the weight is B^T and the vector rows are A's (block_n rows of B^T and
    block_m rows of A per program); ``GemvTSolver`` swaps the roles. Several rows of a
    column-major A (layout cc) are adjacent, not K-contiguous: they are loaded as a transposed
    K x block_m tile, one vector per K index where aligned (session 30; one element at a time
    before, ``benchmarks/gemv_cc_probe.py``)."""

    family = "gemm.gemv"
    gemv = True
    swapped = False   # gemm.gemv_t: the kernel runs on C^T = B^T A^T

    def vector_rows(self, c: KernelConfig) -> int:
        """Rows of the vector operand a program multiplies each weight tile into."""
        return c.block_n if self.swapped else c.block_m

    def weight_rows(self, c: KernelConfig) -> int:
        """K-contiguous rows of the streamed weight a program owns."""
        return c.block_m if self.swapped else c.block_n

    def not_applicable_reason(self, problem, hw):
        why = super().not_applicable_reason(problem, hw)
        if why:
            return why
        p = problem
        if p.m > GEMV_MAX_M:
            return (f"M={p.m} rows: the GEMV's CUDA-core products cost 2M flops per weight "
                    f"element (measured slower than the tensor-core kernels from M = 8); it "
                    f"serves M <= {GEMV_MAX_M}")
        if p.b_row_major:
            return "B is row-major (N contiguous): the GEMV streams B's K-contiguous rows"
        return None

    def smem_bytes(self, problem, c):
        """The weight and vector tiles, staged only when the loop is software-pipelined. One
        vector row is not counted: the single-row GEMV's count (and the smem feature the
        shipped models learned from) left it out, and at most 24 KB it never decides a config's
        validity in the declared space (the largest single-row pipeline, 3 x 8 x 2048 fp32,
        is 192 KB)."""
        rows = self.vector_rows(c) if self.vector_rows(c) > 1 else 0
        return c.num_stages * (rows + self.weight_rows(c)) * c.block_k \
            * problem.dtype.itemsize if c.num_stages > 1 else 0

    # 8 warps share a product tile of vector rows x weight rows x block_k, not an output tile
    min_tile_for_8_warps = 0

    # The config of the analytic order (no model, or a layout the model does not rank), after
    # vector rows covering the problem's in one block: (weight rows, block_k, warps, stages)
    # with the best mean efficiency against each problem's best config of the family over its
    # bf16 training problems (`benchmarks/analysis_s30/gemv_defaults.py`; gemm.gemv on weights
    # of >= 4M elements: 94% over the 237 of 278 problems that measured them; gemm.gemv_t: 78%
    # over 228 of 336). The base rule (nearest a 128 x 128 x 64 tile) picked one
    # row per block and 8 x 256 tiles.
    default_rest = (4, 1024, 4, 1)

    def default_distance(self, problem):
        rows = next_pow2(problem.n if self.swapped else problem.m)
        w, k, warps, stages = self.default_rest

        def distance(c: KernelConfig):
            return (abs(math.log2(self.vector_rows(c) / rows)),
                    abs(math.log2(self.weight_rows(c) / w)), abs(math.log2(c.block_k / k)),
                    abs(c.num_warps - warps), abs(c.num_stages - stages), c.split_k, c.id)
        return distance

    def k_group(self, problem: GemmProblem, c: KernelConfig) -> int:
        """K elements each thread sums in registers every step before accumulating: one
        16-byte load's worth with several vector rows (the accumulator then holds a
        [rows, weight rows, block_k / group] tile), none with one row (its accumulator is the
        whole product tile, as the single-row kernel always had). The register rule assumes
        16-byte loads; an operand without them runs with group 1 and more registers."""
        return 16 // problem.dtype.itemsize if self.vector_rows(c) > 1 else 1

    def acc_regs(self, c, problem):
        """The fp32 products are summed over K in registers, reduced across threads once."""
        return c.block_m * c.block_n * c.block_k // (32 * c.num_warps * self.k_group(problem, c))

    def config_invalid_reason(self, problem, c, hw):
        why = super().config_invalid_reason(problem, c, hw)
        rows = self.vector_rows(c)
        if why or rows == 1:
            return why
        # Triton lays a tile out by 16-byte loads, 32 lanes and then the warps along its
        # fastest dimensions. With several vector rows, the weight tile [1, rows, block_k]
        # and the vector tile [rows, 1, block_k] share a layout only when the warps, too, lie
        # along K; otherwise one of them goes through shared memory every K step (TTGIR of
        # sm_90 compiles; the first form of the row blocks ran at 0.26-1.03x cuBLAS).
        if c.block_k * problem.dtype.itemsize < 16 * 32 * c.num_warps:
            return (f"block_k={c.block_k} holds fewer than one 16-byte load for each thread "
                    f"of {c.num_warps} warps: with {rows} vector rows a tile would be moved "
                    "through shared memory every K step")
        return None

    def _operands(self, p: GemmProblem, hints: dict) -> tuple[int, int, bool, int, int]:
        """(vector rows in all, weight rows in all, the vector's rows are K-contiguous, the
        vector's and the weight's vector widths) from the problem's alignment hints."""
        return p.m, p.n, p.a_row_major, hints["VEC_A"], hints["VEC_B"]

    def _transposed_width(self, p: GemmProblem, count: int, rows: int) -> int:
        """Elements of one vector load of a transposed vector tile (the rows of one K index:
        gemm.gemv_t's block_n columns of a row-major B, gemm.gemv's block_m rows of a
        column-major A): all of them where the vector's rows are a multiple of the block and
        its leading dimension and the base keep them aligned, else 1."""
        ld = p.ldb if self.swapped else p.lda
        whole = count % rows == 0 and ld % rows == 0 and p.base_align >= rows * p.dtype.itemsize
        return rows if rows > 1 and whole else 1

    @functools.lru_cache(maxsize=65536)
    def plan(self, problem: GemmProblem, config: KernelConfig) -> LaunchPlan:
        p, c = problem, config
        rows, wrows = self.vector_rows(c), self.weight_rows(c)
        hints = _alignment_hints(p, c.block_k)   # C: written without vector hints
        count, wcount, vec_row, vec_a, vec_b = self._operands(p, hints)
        # the kernel's A is the vector operand, its B the weight. A vector whose rows are not
        # K-contiguous has them adjacent (a row-major B's columns, a column-major A's rows):
        # its K x rows tile is loaded transposed (A_T), with vectors of its rows where aligned.
        # A single strided row of gemm.gemv (M = 1, column-major) is loaded an element at a time
        transposed = not vec_row and (self.swapped or count > 1)
        hints["VEC_A"] = vec_a if vec_row else \
            self._transposed_width(p, count, rows) if transposed else 1
        hints["VEC_B"] = vec_b
        group = self.k_group(p, c) if hints["VEC_B"] > 1 else 1
        # A_T only where set (the kernel's default): every other plan is the earlier one
        transposed = dict(A_T=True) if transposed else {}
        constexprs = dict(
            BLOCK_M=rows, BLOCK_N=wrows, BLOCK_K=c.block_k, A_ROW=vec_row,
            **hints, SUM_K=group, EVEN_M=count % rows == 0, EVEN_N=wcount % wrows == 0,
            HAS_SCALE=p.dtype is DType.FP8, **transposed, num_warps=c.num_warps,
            num_stages=c.num_stages)
        tiles = cdiv(count, rows) * cdiv(wcount, wrows)
        # split-K (gemm.gemv_t_splitk): the splits are the grid's second dimension
        grid = (tiles, p.batch) if c.split_k == 1 else (tiles, c.split_k, p.batch)
        return LaunchPlan(grid, tuple(sorted(constexprs.items())))

    def _kernel_args(self, p: GemmProblem, a, b, out):
        """(vector, weight, C) tensors and the kernel's sizes and strides, from 3-D views."""
        sa, sb, sc = a.stride(), b.stride(), out.stride()
        if sb[1] != 1 and p.k > 1:   # the kernel walks B's rows with unit stride
            raise ConfigInvalidError(f"{p.key()}: B's K stride is {sb[1]}, not 1: the tensor "
                                     "is not column-major as the problem says")
        return (a, b, out), GemvArgs(p.m, p.n, p.k, sa[0], sa[1], sa[2], sb[0], sb[2], sc[0],
                                     sc[1], sc[2])

    def _args(self, p: GemmProblem, c: KernelConfig, a, b, out):
        """(grid, tensors, sizes and strides, constexprs) from 3-D views, the strides checked
        against the plan's vector hints (the kernel rounds hinted strides down)."""
        plan = self.plan(p, c)
        kw = plan.kwargs
        tensors, args = self._kernel_args(p, a, b, out)
        if p.batch == 1:   # a single batch's stride is never used: pass 0, always aligned
            args = args._replace(stride_ab=0, stride_bb=0, stride_cb=0)
        transposed = kw.get("A_T", False)
        if transposed and args.M > 1 and args.stride_am != 1:
            raise ConfigInvalidError(f"{p.key()}: the vector operand's rows are "
                                     f"{args.stride_am} elements apart, not adjacent as its "
                                     "layout says")
        vec_ld = args.stride_am if kw["A_ROW"] else args.stride_ak if transposed else 0
        _check_hints(kw, p, args.stride_ab, vec_ld, args.stride_bb, args.stride_bn)
        return plan.grid, tensors, args, kw

    @staticmethod
    def _kernel_name(c: KernelConfig) -> str:
        return "gemv_kernel" if c.split_k == 1 else "gemv_splitk_kernel"

    def kernels(self, problem, config):
        return [(self._kernel_name(config), self.plan(problem, config).constexprs)]

    def calls(self, p, c, a, b, out, scale_a, scale_b):
        from tilepick.kernels import gemm_gemv

        grid, tensors, args, kw = self._args(p, c, a, b, out)
        kernel = getattr(gemm_gemv, self._kernel_name(c))
        if c.split_k == 1:
            return [(kernel, grid, (*tensors, scale_a, scale_b, *args), kw)]
        ws, cnt = _ZERO_KEPT.get(a.device, *_zero_kept_sizes(p, self.plan(p, c)))
        return [(kernel, grid, (*tensors, ws, cnt, scale_a, scale_b, *args), kw)]

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        from tilepick.kernels import gemm_gemv

        patch_interpreter()
        grid, _, args, kw = self._args(problem, config, _as3d(a), _as3d(b), _as3d(out))
        split = config.split_k > 1
        gemv = DirectLaunch(getattr(gemm_gemv, self._kernel_name(config)), grid, kw,
                            guarded=7 if split else 5)
        sizes = _zero_kept_sizes(problem, self.plan(problem, config))
        swapped = self.swapped

        def run(a, b, out, scale_a=None, scale_b=None):
            x, w = (b, a) if swapped else (a, b)
            if split:
                ws, cnt = _ZERO_KEPT.get(a.device, *sizes)
                gemv(x, w, out, ws, cnt, scale_a, scale_b, *args)
            else:
                gemv(x, w, out, scale_a, scale_b, *args)
            return out
        return run


class GemvTSolver(GemvSolver):
    """The GEMV on C^T = B^T A^T (``kernels.gemm_gemv``): C with N <= GEMV_MAX_M columns and A
    row-major, B of either layout: a score head (``hidden @ w`` or ``hidden @ W.T`` with one to
    four outputs over many tokens) or any other GEMM with a narrow output. B's columns are
    loaded as K-contiguous rows (column-major B, or a packed K x 1) or, from a row-major B, as
    a transposed K x N tile (session 29: as rows, one scalar load per element, its binaries
    compiled ~10x slower and the family left rr N = 2-4 unserved). Its speed is A's
    bandwidth, as the decode GEMV's is the weight's: the tensor-core families pad N to 16
    columns and the narrow problems of the bf16 data ran at 1.2-3.5 TB/s on their best config
    (H200, ~4.8 TB/s).

    A config's tiles keep the problem's orientation: block_m rows of A (the streamed weight)
    and block_n columns of C (the vector rows) per program, so the tile features read as for
    every other family."""

    family = "gemm.gemv_t"
    swapped = True
    default_rest = (1, 2048, 8, 3)

    def not_applicable_reason(self, problem, hw):
        why = TritonGemmSolver.not_applicable_reason(self, problem, hw)
        if why:
            return why
        p = problem
        if p.n > GEMV_MAX_M:
            return (f"N={p.n} columns: the transposed GEMV's CUDA-core products cost 2N flops "
                    f"per element of A; it serves N <= {GEMV_MAX_M}")
        if not p.a_row_major:
            return "A is column-major (M contiguous): the transposed GEMV streams A's K-contiguous rows"
        return None

    @staticmethod
    def _packed_column(p: GemmProblem) -> bool:
        """A row-major K x 1 B with ldb 1 (the ``hidden @ w`` of a score head): the same
        bytes as a column-major one, loaded with 16-byte vectors instead of one element at a
        time."""
        return p.b_row_major and p.n == 1 and p.ldb == 1

    def _contiguous_column(self, p: GemmProblem) -> bool:
        """B's columns are K-contiguous: column-major B, or a packed K x 1."""
        return not p.b_row_major or self._packed_column(p)

    def _operands(self, p: GemmProblem, hints: dict) -> tuple[int, int, bool, int, int]:
        vec_b = hints["VEC_B"]
        if self._packed_column(p):
            # aligned as its base and K allow (operand_align reads its contiguous size as N = 1)
            it = p.dtype.itemsize
            vec_b = 16 // it if min(p.base_align, _align_bytes(p.k, it)) == 16 else 1
        return p.n, p.m, self._contiguous_column(p), vec_b, hints["VEC_A"]

    def compile_stand_in(self, problem: GemmProblem, n: int = 64) -> GemmProblem:
        """N as the problem's: the family serves N <= 4 only, and a row-major B's loads (a
        packed K x 1 column, a transposed tile) depend on N (found on the GPU: with a
        64-column stand-in every rr config of the first session-28 sweep failed its warm-up)."""
        return super().compile_stand_in(problem, n=problem.n)

    def _kernel_args(self, p: GemmProblem, a, b, out):
        sa, sb, sc = a.stride(), b.stride(), out.stride()
        if sa[2] != 1 and p.k > 1:   # the kernel walks A's rows with unit stride
            raise ConfigInvalidError(f"{p.key()}: A's K stride is {sa[2]}, not 1: the tensor "
                                     "is not row-major as the problem says")
        if self._packed_column(p) and sb[1] != 1 and p.k > 1:
            raise ConfigInvalidError(f"{p.key()}: B's K stride is {sb[1]}, not 1: the tensor "
                                     "is not the packed K x 1 column the problem says")
        # the vector rows are B's columns (N stride, K stride), C is written transposed; one
        # column has no row stride (0: nothing to align)
        x_row = sb[2] if p.n > 1 else 0
        return (b, a, out), GemvArgs(p.n, p.m, p.k, sb[0], x_row, sb[1], sa[0], sa[1], sc[0],
                                     sc[2], sc[1])


class GemvTSplitKSolver(OneLaunchSplitK, GemvTSolver):
    """gemm.gemv_t with K split over the grid in one launch (``kernels.gemm_gemv.
    gemv_splitk_kernel``; the partials meet in the zero-kept workspace, as in
    ``gemm.splitk_fused``). Why: with few rows of A and a long K the unsplit grid has fewer
    programs than SMs, each streaming whole rows (204 x 4 x 27963 read A at 0.7 TB/s, 10 x 3 x
    66233 at 0.06; session 29). Valid only while the unsplit grid leaves SMs idle (the
    split-K rule of every family)."""

    family = "gemm.gemv_t_splitk"


class GemvNSplitKSolver(OneLaunchSplitK, TritonGemmSolver):
    """The decode step of ``x @ W`` (``kernels.gemm_gemv_n``): M = 1, B row-major (layouts rr
    and cr), every dtype; fp32 products on CUDA cores, K split over the grid in one launch
    with the partials meeting in the zero-kept workspace (as in ``gemm.splitk_fused``).

    Why: ``gemm.gemv`` streams K-contiguous weight rows and so serves ``x @ W.T`` only; at
    M = 1 a row-major weight went to the tensor-core families (16 rows padded, the weight
    through shared memory) or cuBLAS, which read the suite's Llama-3 weights at 1.8-4.0 TB/s
    where this kernel's session-16 probe ran 1.01-1.09x cuBLAS on six of eight (H200).
    Batched decode (M = 2-4) is not served: each row would re-read the weight, or hold
    block_m times the registers of the [block_k, block_n] product tile."""

    family = "gemm.gemv_n_splitk"
    gemv = True   # CUDA-core products, its tiles staged only when pipelined (features.table)

    def not_applicable_reason(self, problem, hw):
        why = super().not_applicable_reason(problem, hw)
        if why:
            return why
        if problem.m != 1:
            return (f"M={problem.m} rows: the N-contiguous GEMV multiplies each weight tile "
                    "into one row of A; it serves M = 1")
        if not problem.b_row_major:
            return "B is column-major (K contiguous): gemm.gemv streams such a weight's rows"
        return None

    def smem_bytes(self, problem, c):
        """The weight tile, staged only when the loop is software-pipelined."""
        return c.num_stages * c.block_k * c.block_n * problem.dtype.itemsize \
            if c.num_stages > 1 else 0

    # the warps share a block_k x block_n product tile, not an output tile (rule below)
    min_tile_for_8_warps = 0

    def acc_regs(self, c, problem):
        """The fp32 products are summed over K elementwise, reduced across threads once."""
        return c.block_k * c.block_n // (32 * c.num_warps)

    def config_invalid_reason(self, problem, c, hw):
        why = super().config_invalid_reason(problem, c, hw)
        if why:
            return why
        if c.block_k * c.block_n * problem.dtype.itemsize < 16 * 32 * c.num_warps:
            return (f"a {c.block_k} x {c.block_n} weight tile holds fewer than one 16-byte load "
                    f"for each thread of {c.num_warps} warps")
        return None

    @functools.lru_cache(maxsize=65536)
    def plan(self, problem: GemmProblem, config: KernelConfig) -> LaunchPlan:
        p, c = problem, config
        hints = _alignment_hints(p, c.block_k)
        constexprs = dict(
            BLOCK_N=c.block_n, BLOCK_K=c.block_k, A_ROW=p.a_row_major, **hints,
            EVEN_N=p.n % c.block_n == 0, HAS_SCALE=p.dtype is DType.FP8,
            num_warps=c.num_warps, num_stages=c.num_stages)
        return LaunchPlan((cdiv(p.n, c.block_n), c.split_k, p.batch),
                          tuple(sorted(constexprs.items())))

    def _args(self, p: GemmProblem, c: KernelConfig, a, b, out):
        """(grid, sizes and strides, constexprs, zero-kept sizes) from 3-D views, the strides
        checked against the plan's vector hints (the kernel rounds hinted strides down)."""
        plan = self.plan(p, c)
        kw = plan.kwargs
        sa, sb, sc = a.stride(), b.stride(), out.stride()
        if sb[2] != 1 and p.n > 1:   # the kernel walks B's rows with unit stride
            raise ConfigInvalidError(f"{p.key()}: B's N stride is {sb[2]}, not 1: the tensor "
                                     "is not row-major as the problem says")
        if sc[2] != 1 and p.n > 1:   # C's one row is written with unit stride
            raise ConfigInvalidError(f"{p.key()}: C's N stride is {sc[2]}, not 1")
        if kw["A_ROW"] and sa[2] != 1 and p.k > 1:   # A's one row read with unit stride
            raise ConfigInvalidError(f"{p.key()}: A's K stride is {sa[2]}, not 1: the tensor "
                                     "is not row-major as the problem says")
        batched = p.batch > 1   # a single batch's stride is never used: pass 0, always aligned
        sa0, sb0, sc0 = (sa[0], sb[0], sc[0]) if batched else (0, 0, 0)
        # A's one row: K-contiguous (row-major, hinted by VEC_A) or strided by lda (cr)
        _check_hints(kw, p, sa0, sa[1] if p.a_row_major else 0, sb0, sb[1])
        args = (p.n, p.k, sa0, sa[2], sb0, sb[1], sc0)
        return plan.grid, args, kw, _zero_kept_sizes(p, plan)

    def kernels(self, problem, config):
        return [("gemv_n_splitk_kernel", self.plan(problem, config).constexprs)]

    def calls(self, p, c, a, b, out, scale_a, scale_b):
        from tilepick.kernels.gemm_gemv_n import gemv_n_splitk_kernel

        grid, args, kw, sizes = self._args(p, c, a, b, out)
        ws, cnt = self.state.get(a.device, *sizes)
        return [(gemv_n_splitk_kernel, grid, (a, b, out, ws, cnt, scale_a, scale_b, *args), kw)]

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        from tilepick.kernels.gemm_gemv_n import gemv_n_splitk_kernel

        patch_interpreter()
        grid, args, kw, sizes = self._args(problem, config, _as3d(a), _as3d(b), _as3d(out))
        gemv = DirectLaunch(gemv_n_splitk_kernel, grid, kw, guarded=7)

        def run(a, b, out, scale_a=None, scale_b=None):
            ws, cnt = _ZERO_KEPT.get(a.device, *sizes)
            gemv(a, b, out, ws, cnt, scale_a, scale_b, *args)
            return out
        return run
