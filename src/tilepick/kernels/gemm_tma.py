"""Hopper TMA GEMM through host-side tensor descriptors: one program per tile, or persistent.

Operands are 3-D descriptors [batch, rows, cols] whose last dimension is the contiguous one,
so every layout is a descriptor plus an in-register transpose; out-of-bounds boxes read zeros
and stores are clipped by the copy engine, so no masks are needed. Applicable only when every
stride is a multiple of 16 bytes and the base pointers are 16-byte aligned.
"""

import triton
import triton.language as tl

from tilepick.kernels.common import grouped_tile, meet_partials, scale_epilogue


@triton.jit
def _k_step(a_desc, b_desc, acc, bid, off_m, off_n, off_k, BLOCK_M: tl.constexpr,
            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_ROW: tl.constexpr,
            B_ROW: tl.constexpr, PRECISION: tl.constexpr):
    """One K step of a tile: both boxes through the copy engine, any layout, one dot."""
    if A_ROW:
        a = a_desc.load([bid, off_m, off_k]).reshape(BLOCK_M, BLOCK_K)
    else:
        a = a_desc.load([bid, off_k, off_m]).reshape(BLOCK_K, BLOCK_M).T
    if B_ROW:
        b = b_desc.load([bid, off_k, off_n]).reshape(BLOCK_K, BLOCK_N)
    else:
        b = b_desc.load([bid, off_n, off_k]).reshape(BLOCK_N, BLOCK_K).T
    return tl.dot(a, b, acc, input_precision=PRECISION)


@triton.jit
def _tile_product(a_desc, b_desc, bid, off_m, off_n, K, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_ROW: tl.constexpr,
                  B_ROW: tl.constexpr, PRECISION: tl.constexpr):
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(0, tl.cdiv(K, BLOCK_K)):
        acc = _k_step(a_desc, b_desc, acc, bid, off_m, off_n, ki * BLOCK_K, BLOCK_M, BLOCK_N,
                      BLOCK_K, A_ROW, B_ROW, PRECISION)
    return acc


@triton.jit
def _tile(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, bid, pid_m, pid_n, K,
          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
          A_ROW: tl.constexpr, B_ROW: tl.constexpr, HAS_SCALE: tl.constexpr,
          PRECISION: tl.constexpr):
    """One output tile: product, fp8 scales, store through the copy engine."""
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = _tile_product(a_desc, b_desc, bid, off_m, off_n, K, BLOCK_M, BLOCK_N, BLOCK_K,
                        A_ROW, B_ROW, PRECISION)
    acc = scale_epilogue(acc, scale_a_ptr, scale_b_ptr, HAS_SCALE)
    c_desc.store([bid, off_m, off_n], acc.to(c_desc.dtype).reshape(1, BLOCK_M, BLOCK_N))


@triton.jit(do_not_specialize=["M", "N", "K"])
def gemm_tma_kernel(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, M, N, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr, A_ROW: tl.constexpr, B_ROW: tl.constexpr,
                    HAS_SCALE: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(2)
    pid_m, pid_n = grouped_tile(pid, tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    _tile(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, bid, pid_m, pid_n, K, BLOCK_M,
          BLOCK_N, BLOCK_K, A_ROW, B_ROW, HAS_SCALE, PRECISION)


@triton.jit(do_not_specialize=["M", "N", "K", "BATCH", "NUM_PROGRAMS"])
def gemm_tma_persistent_kernel(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, M, N, K, BATCH,
                               NUM_PROGRAMS, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, A_ROW: tl.constexpr,
                               B_ROW: tl.constexpr, HAS_SCALE: tl.constexpr,
                               PRECISION: tl.constexpr):
    start = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles_per_batch = num_pid_m * num_pid_n
    total = tiles_per_batch * BATCH
    for tile in range(start, total, NUM_PROGRAMS):
        bid = tile // tiles_per_batch
        pid_m, pid_n = grouped_tile(tile % tiles_per_batch, num_pid_m, num_pid_n, GROUP_M)
        _tile(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, bid, pid_m, pid_n, K, BLOCK_M,
              BLOCK_N, BLOCK_K, A_ROW, B_ROW, HAS_SCALE, PRECISION)


@triton.jit(do_not_specialize=["M", "N", "K"])
def gemm_tma_splitk_kernel(a_desc, b_desc, c_desc, ws_ptr, cnt_ptr, scale_a_ptr, scale_b_ptr,
                           M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, A_ROW: tl.constexpr,
                           B_ROW: tl.constexpr, HAS_SCALE: tl.constexpr,
                           PRECISION: tl.constexpr):
    """Split-K over TMA loads in one launch: the S programs of a tile (S = the grid's second
    dimension) each multiply 1/S of K and meet as ``gemm_splitk_fused_kernel``'s do (fp32
    adds into a zero-kept workspace; the last one exchanges the sum back for zeros, scales
    it and stores the tile through the copy engine). Why: at M = 64-256 against a large
    weight the output has too few tiles to occupy the SMs (128 x 8192: 64 tiles of 128 x 128
    on 132 SMs), so each program must stream more of the weight than one SM can."""
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    bid = tl.program_id(2)
    pid_m, pid_n = grouped_tile(pid, tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    k_per = tl.cdiv(tl.cdiv(K, BLOCK_K), tl.num_programs(1)) * BLOCK_K
    k_start = pid_k * k_per
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for off_k in range(k_start, tl.minimum(k_start + k_per, K), BLOCK_K):
        acc = _k_step(a_desc, b_desc, acc, bid, off_m, off_n, off_k, BLOCK_M, BLOCK_N, BLOCK_K,
                      A_ROW, B_ROW, PRECISION)
    om = off_m + tl.arange(0, BLOCK_M)
    on = off_n + tl.arange(0, BLOCK_N)
    last, total = meet_partials(acc, ws_ptr, cnt_ptr, om, on, M, N, bid, pid, BLOCK_M, BLOCK_N)
    if last:
        total = scale_epilogue(total, scale_a_ptr, scale_b_ptr, HAS_SCALE)
        c_desc.store([bid, off_m, off_n], total.to(c_desc.dtype).reshape(1, BLOCK_M, BLOCK_N))
