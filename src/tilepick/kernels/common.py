"""Pieces shared by every GEMM kernel family."""

import triton
import triton.language as tl


@triton.jit
def grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Map a linear tile id to (pid_m, pid_n), GROUP_M row-tiles at a time so that
    programs running together share A rows and B columns in L2 (GROUP_M=1: row-major order)."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def aligned(x, V: tl.constexpr):
    """``x`` (a run-time scalar the caller guarantees is a multiple of V) with that fact made
    visible to the compiler. ``tl.multiple_of`` on a scalar argument is not honoured by Triton's
    alignment analysis (checked in PTX: strides hinted that way still gave 2-byte scalar loads
    and no cp.async pipelining, a 4-5x slowdown); ``x // V * V`` is, for one integer division
    per program. The launcher checks the guarantee (a violated one would round the stride)."""
    if V > 1:
        x = x // V * V
    return x


@triton.jit
def scale_epilogue(acc, scale_a_ptr, scale_b_ptr, HAS_SCALE: tl.constexpr):
    """fp8 per-tensor scales: C = (A @ B) * scale_a * scale_b, applied once in fp32."""
    if HAS_SCALE:
        acc = acc * (tl.load(scale_a_ptr) * tl.load(scale_b_ptr))
    return acc


@triton.jit
def meet_partials(acc, ws_ptr, cnt_ptr, om, on, M, N, bid, tile,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Where the S programs of one output tile (S = the grid's second dimension) of a one-launch
    split-K meet: each adds its fp32 partial into the workspace [batch, M, N], zero before
    the launch; the last (an acq_rel ticket counter per tile) exchanges the sum back for
    zeros and resets the counter, so nothing is cleared before the next launch. Returns
    (this program is the last, the sum: zeros in the others). The exchange is on int32 bits
    (0 is +0.0), which every backend exchanges, Triton's interpreter included; exchanges read
    at L2, where the adds landed."""
    mask = (om[:, None] < M) & (on[None, :] < N)
    w_ptrs = ws_ptr + bid.to(tl.int64) * M * N + om[:, None] * N + on[None, :]
    tl.atomic_add(w_ptrs, acc, mask=mask, sem="relaxed")
    tl.debug_barrier()   # every thread's adds are issued before the ticket is taken
    counter = cnt_ptr + bid * tl.num_programs(0) + tile
    last = tl.atomic_add(counter, 1, sem="acq_rel") == tl.num_programs(1) - 1
    total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if last:
        bits = tl.atomic_xchg(w_ptrs.to(tl.pointer_type(tl.int32)),
                              tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32), mask=mask,
                              sem="relaxed")
        total = bits.to(tl.float32, bitcast=True)
        tl.atomic_xchg(counter, 0, sem="relaxed")
    return last, total
