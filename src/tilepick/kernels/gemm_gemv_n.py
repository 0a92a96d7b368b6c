"""GEMV for ``x @ W`` decode steps: one row of A times an N-contiguous B (layouts rr, cr).

Why a kernel of its own: ``gemm.gemv`` streams K-contiguous rows of the weight (``x @ W.T``,
``nn.Linear``'s layout); a row-major W has its columns, not its rows, contiguous, so the
decode step of ``x @ W`` fell to the tensor-core families (which pad M to 16 rows) or cuBLAS.
On the LLM suite's Llama-3 weights cuBLAS reads such a weight at 1.8-4.0 TB/s (H200), and
a plain read of the same bytes is 1.03-1.33x faster (BENCHMARKS "A GEMV family for decode
steps" and "`x @ W` decode steps: a one-launch split-K GEMV", session 16).

A program owns BLOCK_N columns of C and 1/S of K (S = the grid's second dimension): it loads
[BLOCK_K, BLOCK_N] tiles of B along N with 16-byte vectors, multiplies them by the broadcast
BLOCK_K elements of A in fp32 registers, sums elementwise, and reduces over K once at the end.
Few, wide column blocks and thin K steps (session 16's probe: 512-1024 columns, 16-32 rows of
K, 4-64 splits) keep every SM streaming. The S partial rows meet in the zero-kept workspace
of the one-launch split-K families (``common.meet_partials``); the last program of a column
block scales, casts and stores.

Session 16's first version of this kernel (family ``gemm.gemv_splitk``, reverted with its
data) kept buffers of its own; this one shares the workspace, the counters and their rules
(CUDA graph capture included) with ``gemm.splitk_fused``, and serves batches.

Sizes and strides are run-time arguments; the alignment facts that make 16-byte loads legal
are constexpr hints (``kernels.common.aligned``), as in the pointer kernel.
"""

import triton
import triton.language as tl

from tilepick.kernels.common import aligned, meet_partials, scale_epilogue

_RUNTIME_INTS = ["N", "K", "stride_ab", "stride_ak", "stride_bb", "stride_bk", "stride_cb"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def gemv_n_splitk_kernel(
    a_ptr, b_ptr, c_ptr, ws_ptr, cnt_ptr, scale_a_ptr, scale_b_ptr,
    N, K, stride_ab, stride_ak, stride_bb, stride_bk, stride_cb,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_ROW: tl.constexpr, VEC_A: tl.constexpr,
    VEC_B: tl.constexpr, VEC_K: tl.constexpr, EVEN_K: tl.constexpr, EVEN_N: tl.constexpr,
    HAS_SCALE: tl.constexpr,
):
    pid_n = tl.program_id(0)
    bid = tl.program_id(2).to(tl.int64)
    K = aligned(K, VEC_K)
    stride_ab = aligned(stride_ab, VEC_A)
    stride_bb = aligned(stride_bb, VEC_B)
    stride_bk = aligned(stride_bk, VEC_B)
    if A_ROW:
        stride_ak = 1
    per = tl.cdiv(tl.cdiv(K, BLOCK_K), tl.num_programs(1)) * BLOCK_K
    k_lo = tl.program_id(1) * per
    k_hi = tl.minimum(k_lo + per, K)

    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if EVEN_N:
        rn_load = rn
    else:
        # the edge block re-reads valid columns instead of masking every load; N is a
        # multiple of VEC_B, so each vector of the wrapped range is still contiguous
        rn_load = rn % N
        if VEC_B > 1:
            rn_load = tl.max_contiguous(tl.multiple_of(rn_load, VEC_B), VEC_B)
    rk = tl.arange(0, BLOCK_K)
    b_ptrs = b_ptr + bid * stride_bb + (k_lo + rk)[:, None] * stride_bk + rn_load[None, :]
    a_ptrs = a_ptr + bid * stride_ab + (k_lo + rk) * stride_ak

    acc = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    for k in range(k_lo, k_hi, BLOCK_K):
        if EVEN_K:
            w = tl.load(b_ptrs, eviction_policy="evict_first")
            x = tl.load(a_ptrs)
        else:
            k_rem = K - k
            w = tl.load(b_ptrs, mask=rk[:, None] < k_rem, other=0.0,
                        eviction_policy="evict_first")
            x = tl.load(a_ptrs, mask=rk < k_rem, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[:, None]
        b_ptrs += BLOCK_K * stride_bk
        a_ptrs += BLOCK_K * stride_ak

    rm = tl.arange(0, 1)
    last, total = meet_partials(tl.sum(acc, axis=0)[None, :], ws_ptr, cnt_ptr, rm, rn, 1, N,
                                bid, pid_n, 1, BLOCK_N)
    if last:
        total = scale_epilogue(total, scale_a_ptr, scale_b_ptr, HAS_SCALE)
        c_ptrs = c_ptr + bid * stride_cb + rm[:, None] * 0 + rn[None, :]
        tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=rn[None, :] < N)
