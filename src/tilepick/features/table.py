"""The feature table: every model input, declared once as a named, vectorised formula.

Why a table: the model's feature spec (ordered names + schema version) is generated from it, so
training, prediction, the saved model and the tests can never disagree on a hand-copied list.
Each formula takes :class:`~tilepick.features.columns.Columns` and returns an array (or a
scalar, when every input it reads is a per-problem scalar); features are computed in table
order and stored back into the columns, so a formula may read any earlier feature by name (the
config features ``block_m`` ... replace the raw inputs of the same name, NaN for vendors, so
interaction formulas read them as tiles). Formulas are written for few numpy calls: on the
prediction path each call costs ~1 us whatever the candidate count.

Kinds, and what a formula of each kind may read (it is what makes caching valid):

* ``hardware``: hardware columns only (and the dtype, through the per-dtype peak).
* ``problem``: problem and hardware columns: one value per problem, computed once per problem
  on the prediction path.
* ``config``: config and hardware columns and the dtype's item sizes, never the problem's
  sizes: cached per (config table, dtype, GPU) so a new problem does not rebuild them.
* ``interaction``: anything; computed per candidate.

Vendor configs (cuBLAS) have no tiles: their tile-derived features are NaN, which LightGBM
treats as missing. Change a formula's meaning, and bump ``FEATURE_SCHEMA_VERSION``: a model
trained on the old formula is then refused instead of silently fed different numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tilepick.config import VENDOR_FAMILIES
from tilepick.features.columns import FAMILY_CODES, Columns
from tilepick.solvers import SOLVERS

FEATURE_SCHEMA_VERSION = 1

KINDS = ("hardware", "problem", "config", "interaction")

# Rough costs used only inside the analytic estimate (a feature, not a prediction).
LAUNCH_S = 2.5e-6
MAX_WARPS_PER_SM = 64
MAX_PROGRAMS_PER_SM = 32
SMEM_RESERVED_PER_PROGRAM = 1024
POW2_DIVISOR_CAP = 1024

# what each family is, from its solver (declared once there)
_TMA_FAMILIES = tuple(f for f, s in SOLVERS.items() if getattr(s, "uses_tma", False))
_PERSISTENT_FAMILIES = tuple(f for f, s in SOLVERS.items() if getattr(s, "persistent", False))
_SPLITK_FAMILIES = tuple(f for f, s in SOLVERS.items() if getattr(s, "split_mode", 0))
_GEMV_FAMILIES = tuple(f for f, s in SOLVERS.items() if getattr(s, "gemv", False))
_GEMV_T_FAMILIES = tuple(f for f, s in SOLVERS.items() if getattr(s, "swapped", False))
# split-K in one launch (solvers.triton_gemm.OneLaunchSplitK: split mode 3)
_ONE_LAUNCH_SPLITK_FAMILIES = tuple(f for f, s in SOLVERS.items()
                                    if getattr(s, "split_mode", 0) == 3)


@dataclass(frozen=True)
class Feature:
    name: str
    kind: str
    fn: Callable[[Columns], object]
    doc: str
    categorical: bool = False


def _code(family: str) -> float:
    return float(FAMILY_CODES.index(family))


def _is(c: Columns, families) -> np.ndarray:
    hit = c.family_code == _code(families[0])
    for f in families[1:]:
        hit = hit | (c.family_code == _code(f))
    return hit.astype(np.float64)


def _memo(c: Columns, key: str, fn):
    """Intermediate values several formulas share, computed once per Columns (not features)."""
    v = c.get(key)
    if v is None:
        v = c[key] = fn(c)
    return v


def _scalar(x) -> bool:
    """``np.ndim(x) == 0``, answered without a numpy call for a Python float (the prediction
    path's per-problem values, :func:`tilepick.features.columns.problem_columns`)."""
    return type(x) is float or np.ndim(x) == 0


def _tile(value):
    """Config sizes as floats, NaN for vendor rows (0 in the data): no tile, no tile maths."""
    return np.where(np.asarray(value) > 0, value, np.nan)


def _pow2_divisor(x, cap: int):
    """Largest power of two dividing x, capped at ``cap`` (a power of two); ``cap`` for 0.

    gcd(x, cap) is exactly that. Per-problem values are scalars on the prediction path, where
    Python's integer maths is ~20x cheaper than a numpy call; both paths give equal numbers.
    """
    if _scalar(x):
        return float(math.gcd(int(x), cap))
    return np.gcd(np.asarray(x).astype(np.int64), cap).astype(np.float64)


def _log2(x):
    """np.log2, but Python's ``math.log2`` for a positive per-problem scalar: on the prediction
    path a problem's ~15 logarithms cost ~1 us each through numpy and ~0.1 us through math
    (equal to within an ulp; the parity tests compare the two paths at rtol 1e-12)."""
    if isinstance(x, float) and x > 0:
        return math.log2(x)
    return np.log2(x)


def _pow2_divisor_log2(x):
    """log2 of the largest power of two dividing x (capped): what vector widths can rely on."""
    return _log2(_pow2_divisor(x, POW2_DIVISOR_CAP))


def _operand_align(c: Columns, operand: str):
    """Vectorised GemmProblem.operand_align: min(base, 16-byte-capped power-of-two alignment
    of the leading dimension and of the contiguous size, in bytes)."""
    if _scalar(c.m):  # one problem (the prediction path): plain integer maths
        a_row, b_row = int(c.layout_code) < 2, int(c.layout_code) % 2 == 0
        contig, ld, it = {"a": (c.k if a_row else c.m, c.lda, c.itemsize),
                          "b": (c.n if b_row else c.k, c.ldb, c.itemsize),
                          "c": (c.n, c.ldc, c.out_itemsize)}[operand]
        return float(min(int(c.base_align), math.gcd(int(ld * it), 16),
                         math.gcd(int(contig * it), 16)))
    if operand == "a":
        contig, ld, it = np.where(np.asarray(c.layout_code) < 2, c.k, c.m), c.lda, c.itemsize
    elif operand == "b":
        contig, ld, it = (np.where(np.asarray(c.layout_code) % 2 == 0, c.n, c.k), c.ldb,
                          c.itemsize)
    else:
        contig, ld, it = c.n, c.ldc, c.out_itemsize
    return np.minimum(c.base_align, np.minimum(_pow2_divisor(ld * it, 16),
                                               _pow2_divisor(contig * it, 16)))


def _load_instrs(c: Columns):
    """See the feature's doc: the pointer kernel hints full 16-byte vectors or none
    (solvers.triton_gemm.PointerSolver.plan), so an operand whose alignment is below 16
    bytes is loaded one element per instruction."""
    per_vec = 16.0 / c.itemsize
    vec_a = np.where(np.asarray(c.align_a) >= 16, per_vec, 1.0)
    vec_b = np.where(np.asarray(c.align_b) >= 16, per_vec, 1.0)
    bm, bn, bk = _tile(c.block_m), _tile(c.block_n), _tile(c.block_k)
    loads = (bm * bk / vec_a + bk * bn / vec_b) / (32.0 * _tile(c.num_warps))
    pointer = 1.0 - np.maximum(c.is_tma, c.is_vendor)
    return np.where(pointer > 0, np.log2(1.0 + loads), 0.0)


def _tma_aligned(c: Columns):
    """Strides and bases meet the TMA rules (16-byte leading dimensions and bases)."""
    if _scalar(c.m):
        return float(c.base_align >= 16 and all(int(v) % 16 == 0 for v in (
            c.lda * c.itemsize, c.ldb * c.itemsize, c.ldc * c.out_itemsize)))
    return ((c.base_align >= 16) & ((c.lda * c.itemsize) % 16 == 0)
            & ((c.ldb * c.itemsize) % 16 == 0)
            & ((c.ldc * c.out_itemsize) % 16 == 0)).astype(np.float64)


def _multiple(x, of: int):
    if _scalar(x):
        return float(int(x) % of == 0)
    return (np.asarray(x) % of == 0).astype(np.float64)


def _flops(c):
    return _memo(c, "_flops", lambda c: 2.0 * c.m * c.n * c.k * c.batch)


def _min_bytes(c):
    return _memo(c, "_min_bytes", lambda c: c.batch * ((c.m * c.k + c.k * c.n) * c.itemsize
                                                       + c.m * c.n * c.out_itemsize))


def _roofline_s(c):
    compute, memory = _flops(c) / (c.peak_tflops * 1e12), _min_bytes(c) / (c.mem_bw_gbps * 1e9)
    if _scalar(compute):   # one problem: Python's max, not a numpy call
        return max(compute, memory)
    return np.maximum(compute, memory)


def _smem_bytes(c):
    """Shared memory of the pipeline (+ the TMA store's epilogue tile), as the solvers count it."""
    bm, bn, bk = _tile(c.block_m), _tile(c.block_n), _tile(c.block_k)
    stages = _tile(c.num_stages)
    pipe = stages * (bm + bn) * bk * c.itemsize
    # the GEMV stages its tiles only when the loop is pipelined, and counts the vector tile
    # only with several rows (GemvSolver.smem_bytes says why); gemm.gemv_t's vector rows are
    # block_n, its weight rows block_m
    gemv = _is(c, _GEMV_FAMILIES)
    swapped = _is(c, _GEMV_T_FAMILIES) > 0
    rows, wrows = np.where(swapped, bn, bm), np.where(swapped, bm, bn)
    gemv_pipe = (stages > 1) * stages * (wrows + rows * (rows > 1)) * bk * c.itemsize
    return (1 - gemv) * (pipe + _is(c, _TMA_FAMILIES) * bm * bn * c.out_itemsize) \
        + gemv * gemv_pipe


def _occupancy(c):
    """Programs resident per SM, limited by shared memory and by warps."""
    by_smem = np.floor(c.smem_per_sm / (c.smem_kb * 1024 + SMEM_RESERVED_PER_PROGRAM))
    by_warps = np.floor(MAX_WARPS_PER_SM / _tile(c.num_warps))
    return np.minimum(np.minimum(by_smem, by_warps), MAX_PROGRAMS_PER_SM)


def _wave_eff(work, slots):
    """Busy fraction of the slots over the waves that ``work`` programs need."""
    return work / (np.ceil(work / slots) * slots)


def _splitk_ws_factor(c):
    """fp32 workspace traffic of split-K per output element and split: written per split then
    reduced (deterministic), or zeroed, accumulated atomically and read back (atomic), or
    accumulated and exchanged back for zeros (fused: no clearing)."""
    det = _is(c, ("gemm.splitk",)) * 2 * c.split_k
    atomic = _is(c, ("gemm.splitk_atomic",)) * (c.split_k + 2)
    fused = _is(c, _ONE_LAUNCH_SPLITK_FAMILIES) * (c.split_k + 1)
    return det + atomic + fused


def _splitk_per_factor(c):
    """Bytes of fp32 workspace per unit of ``splitk_ws_factor`` (a per-problem scalar)."""
    return c.batch * c.m * c.n * 4.0


def _estimate_us(c):
    """Analytic time of one config: padded flops at peak spread over the waves, against the
    bytes it must move (split-K workspace and repack copies included), plus launches.
    Per-problem scalars are combined first, so the candidate arrays see few operations."""
    peak_us = _flops(c) / (c.peak_tflops * 1e6)
    bw = c.mem_bw_gbps * 1e3                                # bytes per microsecond
    compute = peak_us / (c.tile_eff * c.sm_util)
    memory = _min_bytes(c) / bw * (1.0 + 2 * c.is_repack) + (_splitk_per_factor(c) / bw) \
        * c.splitk_ws_factor
    return np.maximum(compute, memory) + (LAUNCH_S * 1e6) * c.launches


def _traffic_ratio(c):
    """Operand bytes the tiles load if nothing is reused across programs (L2 decides how much
    of it reaches DRAM: A once per column of tiles, B once per row of tiles), over min bytes."""
    mb = _min_bytes(c)
    a = c.batch * c.m * c.k * c.itemsize / mb
    b = c.batch * c.k * c.n * c.itemsize / mb
    out = c.batch * c.m * c.n * c.out_itemsize / mb
    return a * c.tiles_n + b * c.tiles_m + out


F = Feature
FEATURES: tuple[Feature, ...] = (
    # -- hardware ------------------------------------------------------------------------------
    F("hw_sm_count", "hardware", lambda c: c.sm_count, "multiprocessors"),
    F("hw_peak_tflops", "hardware", lambda c: c.peak_tflops, "dense peak for the dtype"),
    F("hw_mem_bw_gbps", "hardware", lambda c: c.mem_bw_gbps, "DRAM bandwidth (datasheet)"),
    F("hw_smem_per_sm_kb", "hardware", lambda c: c.smem_per_sm / 1024, "shared memory per SM"),
    F("hw_l2_mb", "hardware", lambda c: c.l2_bytes / 2**20, "L2 cache size"),
    # -- problem ------------------------------------------------------------------------------
    F("m", "problem", lambda c: c.m, "rows of A and C"),
    F("n", "problem", lambda c: c.n, "columns of B and C"),
    F("k", "problem", lambda c: c.k, "inner dimension"),
    F("batch", "problem", lambda c: c.batch, "batch count"),
    F("log2_m", "problem", lambda c: _log2(c.m), "log2 M"),
    F("log2_n", "problem", lambda c: _log2(c.n), "log2 N"),
    F("log2_k", "problem", lambda c: _log2(c.k), "log2 K"),
    F("log2_batch", "problem", lambda c: _log2(c.batch), "log2 batch"),
    F("log2_flops", "problem", lambda c: _log2(_flops(c)), "log2 of 2*M*N*K*batch"),
    F("log2_min_bytes", "problem", lambda c: _log2(_min_bytes(c)),
      "log2 of the fewest bytes moved (inputs once, output once)"),
    F("arith_intensity", "problem", lambda c: _flops(c) / _min_bytes(c), "flops / min bytes"),
    F("log2_arith_intensity", "problem", lambda c: _log2(_flops(c) / _min_bytes(c)),
      "log2 of the arithmetic intensity"),
    F("log2_m_over_n", "problem", lambda c: _log2(c.m / c.n), "aspect ratio M:N"),
    F("log2_m_over_k", "problem", lambda c: _log2(c.m / c.k), "aspect ratio M:K"),
    F("log2_n_over_k", "problem", lambda c: _log2(c.n / c.k), "aspect ratio N:K"),
    F("pow2div_m", "problem", lambda c: _pow2_divisor_log2(c.m),
      f"log2 of the largest power of two dividing M (cap {POW2_DIVISOR_CAP})"),
    F("pow2div_n", "problem", lambda c: _pow2_divisor_log2(c.n), "same for N"),
    F("pow2div_k", "problem", lambda c: _pow2_divisor_log2(c.k), "same for K"),
    F("k_mod_64_zero", "problem", lambda c: _multiple(c.k, 64),
      "K is a multiple of 64 (no masked K tail for most block_k)"),
    F("align_a", "problem", lambda c: _operand_align(c, "a"), "vector alignment of A, bytes"),
    F("align_b", "problem", lambda c: _operand_align(c, "b"), "vector alignment of B, bytes"),
    F("align_c", "problem", lambda c: _operand_align(c, "c"), "vector alignment of C, bytes"),
    F("tma_aligned", "problem", _tma_aligned, "strides and bases meet the TMA rules"),
    F("dtype_code", "problem", lambda c: c.dtype_code, "input dtype", categorical=True),
    F("layout_code", "problem", lambda c: c.layout_code, "layout (rr, rc, cr, cc)",
      categorical=True),
    F("itemsize", "problem", lambda c: c.itemsize, "input bytes per element"),
    F("roofline_us", "problem", lambda c: _roofline_s(c) * 1e6,
      "max(flops / peak, min bytes / bandwidth) in microseconds: the fastest any kernel can be"),
    F("log2_roofline_us", "problem", lambda c: _log2(c.roofline_us), "log2 of it"),
    # -- config -------------------------------------------------------------------------------
    F("family_code", "config", lambda c: c.family_code, "kernel family", categorical=True),
    F("is_vendor", "config", lambda c: _is(c, VENDOR_FAMILIES), "vendor library (cuBLAS)"),
    F("is_tma", "config", lambda c: _is(c, _TMA_FAMILIES), "loads through TMA descriptors"),
    F("is_persistent", "config", lambda c: _is(c, _PERSISTENT_FAMILIES),
      "persistent grid (one program per SM)"),
    F("is_repack", "config", lambda c: _is(c, ("gemm.tma_repack",)),
      "copies misaligned operands first"),
    F("is_splitk", "config", lambda c: _is(c, _SPLITK_FAMILIES), "splits K across programs"),
    F("block_m", "config", lambda c: _tile(c.block_m), "tile rows"),
    F("block_n", "config", lambda c: _tile(c.block_n), "tile columns"),
    F("block_k", "config", lambda c: _tile(c.block_k), "tile depth"),
    F("group_m", "config", lambda c: _tile(c.group_m), "grouped tile order width"),
    F("num_warps", "config", lambda c: _tile(c.num_warps), "warps per program"),
    F("num_stages", "config", lambda c: _tile(c.num_stages), "pipeline stages"),
    F("split_k", "config", lambda c: c.split_k, "K splits"),
    F("log2_tile_area", "config", lambda c: np.log2(_tile(c.block_m) * _tile(c.block_n)),
      "log2 of block_m * block_n"),
    F("tile_intensity", "config",
      lambda c: _tile(c.block_m) * _tile(c.block_n) / (_tile(c.block_m) + _tile(c.block_n)),
      "MACs per loaded element of a K step: bm*bn/(bm+bn)"),
    F("smem_kb", "config", lambda c: _smem_bytes(c) / 1024, "shared memory per program, KiB"),
    F("acc_regs_per_thread", "config",
      lambda c: _tile(c.block_m) * _tile(c.block_n) / (32 * _tile(c.num_warps)),
      "fp32 accumulator registers per thread"),
    F("occupancy", "config", _occupancy,
      "programs resident per SM (shared memory and warp limits)"),
    F("launches", "config",
      lambda c: 1.0 + _is(c, ("gemm.splitk",)) + 2 * _is(c, ("gemm.splitk_atomic",))
      + 3 * c.is_repack,
      "kernel launches per call (split-K reduction, workspace zeroing, repack copies)"),
    F("splitk_ws_factor", "config", _splitk_ws_factor,
      "fp32 workspace bytes moved per output element / 4 (0 without split-K)"),
    # -- interaction ---------------------------------------------------------------------------
    F("tiles_m", "interaction", lambda c: np.ceil(c.m / c.block_m), "tiles along M"),
    F("tiles_n", "interaction", lambda c: np.ceil(c.n / c.block_n), "tiles along N"),
    F("k_blocks", "interaction", lambda c: np.ceil(c.k / c.block_k), "K steps in all"),
    F("k_iters", "interaction", lambda c: np.ceil(c.k_blocks / c.split_k),
      "K steps per program"),
    F("eff_m", "interaction", lambda c: c.m / (c.tiles_m * c.block_m),
      "useful fraction of the M tiles: M / (ceil(M / bm) * bm)"),
    F("eff_n", "interaction", lambda c: c.n / (c.tiles_n * c.block_n),
      "useful fraction of the N tiles"),
    F("eff_k", "interaction", lambda c: c.k / (c.k_blocks * c.block_k),
      "useful fraction of the K steps"),
    F("tile_eff", "interaction", lambda c: c.eff_m * c.eff_n * c.eff_k,
      "useful fraction of the padded work"),
    F("output_tiles", "interaction", lambda c: c.tiles_m * c.tiles_n * c.batch,
      "output tiles (all batches)"),
    F("programs", "interaction", lambda c: c.output_tiles * c.split_k,
      "output tiles x split_k: the units of parallel work"),
    F("waves", "interaction", lambda c: c.programs / c.sm_count, "programs / SMs"),
    F("sm_util", "interaction", lambda c: _wave_eff(c.programs, c.sm_count),
      "wave quantisation: programs / (ceil(programs / SMs) * SMs)"),
    F("waves_resident", "interaction", lambda c: c.programs / (c.sm_count * c.occupancy),
      "programs / (SMs x resident programs per SM)"),
    F("sm_util_resident", "interaction",
      lambda c: _wave_eff(c.programs, c.sm_count * c.occupancy),
      "wave quantisation over every resident slot"),
    F("pipeline_fill", "interaction", lambda c: np.minimum(1.0, c.k_iters / c.num_stages),
      "K steps per program / stages: stages beyond the K steps idle"),
    F("log2_traffic_ratio", "interaction", lambda c: np.log2(_traffic_ratio(c)),
      "log2 of operand loads without cross-program reuse / min bytes"),
    F("log2_load_instrs", "interaction", _load_instrs,
      "log2(1 + global load instructions per thread per K step) of the pointer kernels: tile "
      "elements / vector width (16 bytes when the operand is 16-byte aligned, else one "
      "element); 0 for TMA and vendor rows. Unvectorised large tiles ran up to 25x slower"),
    F("log2_splitk_ws_ratio", "interaction",
      lambda c: np.log2(1.0 + (_splitk_per_factor(c) / _min_bytes(c)) * c.splitk_ws_factor),
      "split-K workspace traffic relative to the min bytes"),
    F("log2_estimate_us", "interaction", lambda c: np.log2(_estimate_us(c)),
      "log2 of the analytic time estimate (roofline with padding, waves, split-K, launches)"),
    F("estimate_tflops", "interaction",
      lambda c: (_flops(c) / 1e6) / np.exp2(c.log2_estimate_us),
      "TFLOP/s the analytic estimate predicts"),
)
del F
