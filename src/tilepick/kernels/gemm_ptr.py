"""Masked pointer GEMM: any shape, any strides, all four layouts, optional split-K.

Sizes and strides are run-time arguments that Triton must not specialise on (one compiled
binary serves every shape of a specialisation class); the alignment facts that make 16-byte
vector loads legal are passed as constexpr hints (VEC_*) computed by the solver from the
problem, so a bf16 K=1000 GEMM (8-element aligned, not 16) still gets vector loads.

SPLIT_MODE: 0 = no split (write C), 1 = deterministic split-K (each split writes its own fp32
workspace slice; ``splitk_reduce`` sums them), 2 = atomic split-K (fp32 atomics into a zeroed
workspace; ``splitk_reduce`` with one slice casts it). The number of splits is the grid's second
dimension, not a constexpr: split-K configs that differ only in it run one compiled binary
(a sweep compiles ~20% fewer binaries; the split count costs one scalar division a program).

``gemm_splitk_fused_kernel`` is split-K in a single launch (family ``gemm.splitk_fused``): the
same tile loop (``ptr_partial``), with the partial sums meeting in a workspace that every
launch leaves at zero.
"""

import triton
import triton.language as tl

from tilepick.kernels.common import aligned, grouped_tile, meet_partials, scale_epilogue

_RUNTIME_INTS = ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bk",
                 "stride_bn", "stride_cb", "stride_cm", "stride_cn"]


@triton.jit
def ptr_partial(
    a_ptr, b_ptr, M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT: tl.constexpr,
    A_ROW: tl.constexpr, B_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_K: tl.constexpr,
    EVEN_K: tl.constexpr, PRECISION: tl.constexpr,
):
    """The fp32 product tile of this program (its 1/splits of K where SPLIT), with its tile
    coordinates: the part every pointer-style kernel shares (``gemm_ptr_kernel`` and
    ``gemm_splitk_fused_kernel`` differ only in where the tile goes)."""
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    bid = tl.program_id(2).to(tl.int64)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = grouped_tile(pid, num_pid_m, num_pid_n, GROUP_M)

    # Run-time sizes and strides carry no alignment facts: state the ones the solver checked
    # (see common.aligned for why not tl.multiple_of), or every load is a 2-byte scalar.
    K = aligned(K, VEC_K)
    stride_ab = aligned(stride_ab, VEC_A)
    stride_bb = aligned(stride_bb, VEC_B)
    if A_ROW:
        stride_ak = 1
        stride_am = aligned(stride_am, VEC_A)
    else:
        stride_am = 1
        stride_ak = aligned(stride_ak, VEC_A)
    if B_ROW:
        stride_bn = 1
        stride_bk = aligned(stride_bk, VEC_B)
    else:
        stride_bk = 1
        stride_bn = aligned(stride_bn, VEC_B)

    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    if not A_ROW and VEC_A > 1:
        rm = tl.max_contiguous(tl.multiple_of(rm, VEC_A), VEC_A)
    if B_ROW and VEC_B > 1:
        rn = tl.max_contiguous(tl.multiple_of(rn, VEC_B), VEC_B)

    if SPLIT:
        k_per_split = tl.cdiv(tl.cdiv(K, BLOCK_K), tl.num_programs(1)) * BLOCK_K
    else:
        k_per_split = tl.cdiv(K, BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    k_len = tl.minimum(K - k_start, k_per_split)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = (a_ptr + bid * stride_ab + rm[:, None] * stride_am
              + (k_start + rk)[None, :] * stride_ak)
    b_ptrs = (b_ptr + bid * stride_bb + (k_start + rk)[:, None] * stride_bk
              + rn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(0, tl.cdiv(k_len, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_rem = k_len - ki * BLOCK_K
            a = tl.load(a_ptrs, mask=rk[None, :] < k_rem, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < k_rem, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    return acc, pid_m, pid_n


@triton.jit
def store_tile(c_ptr, tile, bid, stride_cb, stride_cm, om, on, M, N):
    """Write an fp32 tile into C (masked, cast to C's type), with *no* alignment hint on C's
    strides.

    Why none: these kernels used to state C's row stride a multiple of a 16-byte vector where
    the problem allowed it (a ``VEC_C`` constexpr, ``common.aligned``), like A's and B's. The
    mask's column bound N carried no such fact, so the store could not be vectorised anyway,
    yet the hint made the epilogue 1.1-4x slower on the H200: on 34 (problem, config) pairs
    the unhinted store ran 0.24-0.43x the hinted time where the epilogue dominates (K <= 64,
    fp8 and bf16) and 0.76-0.98x on 1024^3 and 4096^3 (``benchmarks/ptr_store_probe.py``,
    BENCHMARKS "Session 35"). Stating N aligned as well (vectors with uniform masks) was
    faster on some configs and slower on others (0.79-1.26x of unhinted): not taken."""
    c_ptrs = c_ptr + bid * stride_cb + om[:, None] * stride_cm + on[None, :]
    tl.store(c_ptrs, tile.to(c_ptr.dtype.element_ty), mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def gemm_ptr_kernel(
    a_ptr, b_ptr, c_ptr, ws_ptr, scale_a_ptr, scale_b_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_MODE: tl.constexpr,
    A_ROW: tl.constexpr, B_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_K: tl.constexpr,
    EVEN_K: tl.constexpr, HAS_SCALE: tl.constexpr, PRECISION: tl.constexpr,
):
    """C is stored with no alignment hint on purpose (see ``store_tile``)."""
    acc, pid_m, pid_n = ptr_partial(
        a_ptr, b_ptr, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
        BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_MODE != 0, A_ROW, B_ROW, VEC_A, VEC_B, VEC_K,
        EVEN_K, PRECISION)
    bid = tl.program_id(2).to(tl.int64)
    pid_k = tl.program_id(1)

    om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (om[:, None] < M) & (on[None, :] < N)
    if SPLIT_MODE == 0:
        acc = scale_epilogue(acc, scale_a_ptr, scale_b_ptr, HAS_SCALE)
        store_tile(c_ptr, acc, bid, stride_cb, stride_cm, om, on, M, N)
    else:
        # fp32 workspace laid out [splits (mode 1) or 1 (mode 2), batch, M, N], contiguous.
        nb = tl.num_programs(2).to(tl.int64)
        slice_id = pid_k.to(tl.int64) if SPLIT_MODE == 1 else 0
        w_ptrs = ws_ptr + ((slice_id * nb + bid) * M * N) + om[:, None] * N + on[None, :]
        if SPLIT_MODE == 1:
            tl.store(w_ptrs, acc, mask=mask)
        else:
            tl.atomic_add(w_ptrs, acc, mask=mask, sem="relaxed")


@triton.jit(do_not_specialize=["M", "N", "stride_cb", "stride_cm", "total"])
def splitk_reduce_kernel(ws_ptr, c_ptr, scale_a_ptr, scale_b_ptr, M, N, stride_cb, stride_cm,
                         total, SLICES: tl.constexpr, BLOCK: tl.constexpr,
                         HAS_SCALE: tl.constexpr):
    """Sum SLICES fp32 slices of [batch, M, N] (in a fixed order: deterministic), scale, cast."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in tl.static_range(SLICES):
        acc += tl.load(ws_ptr + s * total + offs, mask=mask, other=0.0)
    acc = scale_epilogue(acc, scale_a_ptr, scale_b_ptr, HAS_SCALE)
    mn = M * N
    b = offs // mn
    r = offs % mn
    row = r // N
    col = r % N
    tl.store(c_ptr + b * stride_cb + row * stride_cm + col, acc.to(c_ptr.dtype.element_ty),
             mask=mask)


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def gemm_splitk_fused_kernel(
    a_ptr, b_ptr, c_ptr, ws_ptr, cnt_ptr, scale_a_ptr, scale_b_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    A_ROW: tl.constexpr, B_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_K: tl.constexpr,
    EVEN_K: tl.constexpr, HAS_SCALE: tl.constexpr, PRECISION: tl.constexpr,
):
    """Split-K in one launch: the S programs of an output tile (S = the grid's second
    dimension) add their fp32 partials into a workspace that is zero before the launch; the
    last of them (an acq_rel ticket counter per tile) takes the sum back with atomic exchanges
    that leave zeros behind, scales and casts it into C, and resets its counter. Nothing is
    cleared before the next launch and nothing is reduced after it.

    Why: on skinny problems (M <= 128 against a large weight) a GEMM reads the weight once at
    the memory's speed, and split-K is how the grid gets enough programs to keep the memory
    busy; the atomic family pays a clearing launch and a cast launch around the GEMM (a few
    microseconds each, on kernels of 15-60 us). The workspace and counters belong to the
    solver, one pair per device and stream (``solvers.triton_gemm.ZeroKept``); they meet in
    ``common.meet_partials``.
    """
    acc, pid_m, pid_n = ptr_partial(
        a_ptr, b_ptr, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
        BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, True, A_ROW, B_ROW, VEC_A, VEC_B, VEC_K,
        EVEN_K, PRECISION)
    bid = tl.program_id(2).to(tl.int64)
    om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    last, total = meet_partials(acc, ws_ptr, cnt_ptr, om, on, M, N, bid, tl.program_id(0),
                                BLOCK_M, BLOCK_N)
    if last:
        total = scale_epilogue(total, scale_a_ptr, scale_b_ptr, HAS_SCALE)
        store_tile(c_ptr, total, bid, stride_cb, stride_cm, om, on, M, N)
