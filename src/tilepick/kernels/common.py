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
