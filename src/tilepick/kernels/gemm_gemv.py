"""GEMV for decode steps: a few rows of A times a K-contiguous B (``x @ W.T``), no tensor cores.

Why a family of its own: at M = 1 a GEMM reads the weight once and does 2 flops per element,
so its speed is the weight's bandwidth. The tensor-core families pad M to 16 rows and move the
weight through shared memory; cuBLAS reads the Llama-3 projection weights at 1.8-3.8 TB/s
(H200, L2 flushed). Streaming each weight row with 16-byte loads, multiplying by the broadcast
row of A in fp32 registers and reducing once at the end reached the plain read ceiling of the
same bytes and 1.04-1.30x torch.matmul on those weights (``benchmarks/decode_probe2.py``,
BENCHMARKS "A GEMV family for decode steps").

A program owns BLOCK_N rows of B^T (columns of C) for one row of A; the programs of the M
rows of one block are adjacent in the grid, so B is read from DRAM once and its other M - 1
reads hit L2. Sizes and strides are run-time arguments; the alignment facts that make 16-byte
loads legal are constexpr hints (``kernels.common.aligned``), as in the pointer kernel.
"""

import triton
import triton.language as tl

from tilepick.kernels.common import aligned, scale_epilogue

_RUNTIME_INTS = ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bn",
                 "stride_cb", "stride_cm"]


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def gemv_kernel(
    a_ptr, b_ptr, c_ptr, scale_a_ptr, scale_b_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bn,
    stride_cb, stride_cm,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_K: tl.constexpr,
    EVEN_K: tl.constexpr, EVEN_N: tl.constexpr, HAS_SCALE: tl.constexpr,
):
    pid = tl.program_id(0)
    m = pid % M
    pid_n = pid // M
    bid = tl.program_id(1).to(tl.int64)

    K = aligned(K, VEC_K)
    stride_bn = aligned(stride_bn, VEC_B)
    stride_bb = aligned(stride_bb, VEC_B)
    stride_ab = aligned(stride_ab, VEC_A)
    if A_ROW:
        stride_ak = 1
        stride_am = aligned(stride_am, VEC_A)

    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if EVEN_N:
        rn_load = rn
    else:
        rn_load = rn % N   # the edge block re-reads valid rows instead of masking every load
    rk = tl.arange(0, BLOCK_K)
    b_ptrs = b_ptr + bid * stride_bb + rn_load[:, None] * stride_bn + rk[None, :]
    a_ptrs = a_ptr + bid * stride_ab + m * stride_am + rk * stride_ak

    # products summed elementwise in the loop, reduced across K once at the end
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            w = tl.load(b_ptrs, eviction_policy="evict_first")
            x = tl.load(a_ptrs)
        else:
            k_rem = K - k
            w = tl.load(b_ptrs, mask=rk[None, :] < k_rem, other=0.0,
                        eviction_policy="evict_first")
            x = tl.load(a_ptrs, mask=rk < k_rem, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
        b_ptrs += BLOCK_K
        a_ptrs += BLOCK_K * stride_ak

    y = scale_epilogue(tl.sum(acc, axis=1), scale_a_ptr, scale_b_ptr, HAS_SCALE)
    c_ptrs = c_ptr + bid * stride_cb + m * stride_cm + rn
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=rn < N)
