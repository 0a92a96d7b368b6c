"""GEMV for decode steps: a few rows of A times a K-contiguous B (``x @ W.T``), no tensor cores.

Why a family of its own: at M = 1 a GEMM reads the weight once and does 2 flops per element,
so its speed is the weight's bandwidth. The tensor-core families pad M to 16 rows and move the
weight through shared memory; cuBLAS reads the Llama-3 projection weights at 1.8-3.8 TB/s
(H200, L2 flushed). Streaming each weight row with 16-byte loads, multiplying by the broadcast
row of A in fp32 registers and reducing once at the end reached the plain read ceiling of the
same bytes and 1.04-1.30x torch.matmul on those weights (``benchmarks/decode_probe2.py``,
BENCHMARKS "A GEMV family for decode steps").

A program owns BLOCK_N rows of B^T (columns of C) for BLOCK_M rows of A: each weight tile is
loaded once and multiplied into all BLOCK_M rows (batched decode: M = 2-4 sequences), where
one row a program re-read the weight M times (from L2, the programs of one block being
adjacent in the grid; measured at M = 4: 0.60x the tensor-core families' best). The
programs of the row blocks of one column block are adjacent in the grid too, so when M needs
several row blocks their re-reads hit L2. The products are summed elementwise in an fp32 tile
(with several rows, each thread's 16-byte group of K summed first) and reduced over K once
at the end (the solver bounds that tile's registers).

The same kernel serves ``gemm.gemv_t`` (C with N <= 4 columns, A row-major): there C^T = B^T A^T,
so A's K-contiguous rows are the streamed weight, B's few columns the rows "of A", and C is
written transposed (``stride_cn`` = C's leading dimension; 1 for the plain GEMV). A row-major
B's columns are not K-contiguous but adjacent: with ``A_T`` its [BLOCK_K, BLOCK_M] tile is
loaded one vector per K index and transposed in registers (compiled for sm_90, 4 rows x 1024
K: 0.6 s, 8-byte loads, where loading them as rows took 3.3 s and one 2-byte load per
element; ``A_T`` defaults to off, and every plan without it compiles to the earlier PTX).
``gemv_splitk_kernel`` (``gemm.gemv_t_splitk``) splits K over the grid in one launch; both
kernels run ``gemv_partial``, whose moving out of ``gemv_kernel`` left its PTX as it was
(``benchmarks/ptx_ab.py --kernel gemv`` and ``--kernel gemv_t``: identical but for labels).

Sizes and strides are run-time arguments; the alignment facts that make 16-byte loads legal are
constexpr hints (``kernels.common.aligned``), as in the pointer kernel.
"""

import triton
import triton.language as tl

from tilepick.kernels.common import aligned, meet_partials, scale_epilogue

_RUNTIME_INTS = ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bn",
                 "stride_cb", "stride_cm", "stride_cn"]


@triton.jit
def gemv_partial(
    a_ptr, b_ptr, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bn,
    pid_m, pid_n, bid, k_lo, k_hi,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_K: tl.constexpr, SUM_K: tl.constexpr,
    EVEN_M: tl.constexpr, EVEN_K: tl.constexpr, EVEN_N: tl.constexpr, A_T: tl.constexpr,
):
    """The [BLOCK_M, BLOCK_N] fp32 sums of one program's products over K in [k_lo, k_hi)
    (k_lo a multiple of BLOCK_K; the loop masks at K, which the caller has aligned to VEC_K),
    and its rows and columns."""
    stride_bn = aligned(stride_bn, VEC_B)
    stride_bb = aligned(stride_bb, VEC_B)
    stride_ab = aligned(stride_ab, VEC_A)
    if A_ROW:
        stride_ak = 1
        stride_am = aligned(stride_am, VEC_A)
    if A_T:
        stride_ak = aligned(stride_ak, VEC_A)

    # the edge blocks re-read valid rows instead of masking every load
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rm_load = rm if EVEN_M else rm % M
    rn_load = rn if EVEN_N else rn % N
    rk = tl.arange(0, BLOCK_K)
    # both tiles loaded as 3-D slices of the product tile, [1, BLOCK_N, BLOCK_K] and
    # [BLOCK_M, 1, BLOCK_K]: with the warps along K (the solver's rule for several rows) they
    # share one layout, and the product is formed in registers without a layout conversion
    rk3 = rk[None, None, :]
    b_ptrs = b_ptr + bid * stride_bb + rn_load[None, :, None] * stride_bn + (k_lo + rk3)
    if A_T:
        # A's rows adjacent (stride_am = 1), K strided (a row-major B's few columns): its
        # [BLOCK_K, BLOCK_M] tile is loaded with one vector per K index and transposed in
        # registers; loaded as rows it took one scalar load per element
        a_ptrs = a_ptr + bid * stride_ab + (k_lo + rk[:, None]) * stride_ak + rm_load[None, :]
    else:
        a_ptrs = a_ptr + bid * stride_ab + rm_load[:, None, None] * stride_am \
            + (k_lo + rk3) * stride_ak

    # SUM_K (the solver's k_group) contiguous K elements of a thread are summed every step:
    # several rows of A would otherwise need block_m times the single row's registers
    acc = tl.zeros((BLOCK_M, BLOCK_N, BLOCK_K // SUM_K), dtype=tl.float32)
    for k in range(k_lo, k_hi, BLOCK_K):
        if EVEN_K:
            w = tl.load(b_ptrs, eviction_policy="evict_first")
            x = tl.load(a_ptrs)
        else:
            k_rem = K - k
            w = tl.load(b_ptrs, mask=rk3 < k_rem, other=0.0, eviction_policy="evict_first")
            if A_T:
                x = tl.load(a_ptrs, mask=rk[:, None] < k_rem, other=0.0)
            else:
                x = tl.load(a_ptrs, mask=rk3 < k_rem, other=0.0)
        if A_T:
            x = tl.trans(x)[:, None, :]
        prod = w.to(tl.float32) * x.to(tl.float32)
        if SUM_K > 1:
            prod = tl.sum(tl.reshape(prod, (BLOCK_M, BLOCK_N, BLOCK_K // SUM_K, SUM_K)), axis=3)
        acc += prod
        b_ptrs += BLOCK_K
        a_ptrs += BLOCK_K * stride_ak
    return tl.sum(acc, axis=2), rm, rn


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def gemv_kernel(
    a_ptr, b_ptr, c_ptr, scale_a_ptr, scale_b_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_K: tl.constexpr, SUM_K: tl.constexpr,
    EVEN_M: tl.constexpr, EVEN_K: tl.constexpr, EVEN_N: tl.constexpr, HAS_SCALE: tl.constexpr,
    A_T: tl.constexpr = False,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    bid = tl.program_id(1).to(tl.int64)
    K = aligned(K, VEC_K)
    y, rm, rn = gemv_partial(
        a_ptr, b_ptr, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bn,
        pid_m, pid_n, bid, 0, K, BLOCK_M, BLOCK_N, BLOCK_K, A_ROW, VEC_A,
        VEC_B, VEC_K, SUM_K, EVEN_M, EVEN_K, EVEN_N, A_T)
    y = scale_epilogue(y, scale_a_ptr, scale_b_ptr, HAS_SCALE)
    c_ptrs = c_ptr + bid * stride_cb + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def gemv_splitk_kernel(
    a_ptr, b_ptr, c_ptr, ws_ptr, cnt_ptr, scale_a_ptr, scale_b_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_K: tl.constexpr, SUM_K: tl.constexpr,
    EVEN_M: tl.constexpr, EVEN_K: tl.constexpr, EVEN_N: tl.constexpr, HAS_SCALE: tl.constexpr,
    A_T: tl.constexpr = False,
):
    """The GEMV with K split over the grid's second dimension, in one launch: the partials
    meet as in ``gemm_splitk_fused_kernel`` (``common.meet_partials``), the last program of a
    block scales, casts and stores. Why: with few rows and a long K (a narrow output of a
    short, wide A: 204 x 4 x 27963 read A at 0.7 TB/s) the unsplit grid has fewer programs
    than SMs, each streaming a whole row."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    bid = tl.program_id(2).to(tl.int64)
    K = aligned(K, VEC_K)
    per = tl.cdiv(tl.cdiv(K, BLOCK_K), tl.num_programs(1)) * BLOCK_K
    k_lo = tl.program_id(1) * per
    y, rm, rn = gemv_partial(
        a_ptr, b_ptr, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bn,
        pid % num_pid_m, pid // num_pid_m, bid, k_lo, tl.minimum(k_lo + per, K), BLOCK_M,
        BLOCK_N, BLOCK_K, A_ROW, VEC_A, VEC_B, VEC_K, SUM_K, EVEN_M, EVEN_K, EVEN_N, A_T)
    last, total = meet_partials(y, ws_ptr, cnt_ptr, rm, rn, M, N, bid, pid, BLOCK_M, BLOCK_N)
    if last:
        total = scale_epilogue(total, scale_a_ptr, scale_b_ptr, HAS_SCALE)
        c_ptrs = c_ptr + bid * stride_cb + rm[:, None] * stride_cm + rn[None, :] * stride_cn
        tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))
