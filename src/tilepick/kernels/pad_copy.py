"""One launch that copies a strided (batch, rows, cols) tensor into another of other extents,
zero-padding or cropping: the copies of ``gemm.cublas_repack`` (an operand into padded,
16-byte-aligned workspace; C's padded workspace back into C).

Why not torch: its copies are a strided ``copy_`` plus one ``zero_`` per padded edge, run by its
non-vectorised elementwise kernel at 1.1-2.9 TB/s; the copies were 10-40 us of a 161 us
repack (1169 x 7168 x 5120 cc, H200, session 31). One tile load masked by the source's extents
(zeros outside them) and one store masked by the destination's pads or crops in a single
launch (``benchmarks/pad_copy_probe.py``, BENCHMARKS "Session 31" and "Session 32").

Strides are run-time arguments: Triton specialises a stride of 1, so the copy is vectorised
along the destination's contiguous dimension, which :func:`pad_copy` puts last.
"""

import triton
import triton.language as tl

#: the largest batch one launch covers (CUDA's limit on the grid's second dimension)
MAX_GRID_Y = 65535


@triton.jit
def pad_copy_kernel(src, dst, rows, cols, s_b, s_r, s_c, d_rows, d_cols, d_b, d_r, d_c,
                    tiles_c, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(1).to(tl.int64)
    r = (pid // tiles_c) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = (pid % tiles_c) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    r64 = r.to(tl.int64)
    c64 = c.to(tl.int64)
    x = tl.load(src + bid * s_b + r64 * s_r + c64 * s_c, mask=(r < rows) & (c < cols), other=0.0)
    tl.store(dst + bid * d_b + r64 * d_r + c64 * d_c, x, mask=(r < d_rows) & (c < d_cols))


def tile(rows: int, cols: int) -> tuple[int, int, int]:
    """(BLOCK_R, BLOCK_C, num_warps) for a destination of ``rows`` x ``cols`` (cols its
    contiguous dimension): a row of tiles as wide as the destination up to 256 elements, about
    8K elements a program (chosen on the H200 by ``benchmarks/pad_copy_probe.py --tiles``)."""
    block_c = min(256, max(16, triton.next_power_of_2(cols)))
    block_r = min(max(1, 8192 // block_c), max(1, triton.next_power_of_2(rows)))
    return block_r, block_c, 4


def pad_copy(src, dst, block=None):
    """``dst`` (batch, rows', cols') = ``src`` (batch, rows, cols) in its top-left corner, zeros
    where ``dst`` extends past it, cropped where it is smaller; any strides. ``block``:
    (BLOCK_R, BLOCK_C, num_warps), default :func:`tile`. Returns ``dst``."""
    if src.dim() != 3 or dst.dim() != 3 or src.shape[0] != dst.shape[0]:
        raise ValueError(f"pad_copy takes two (batch, rows, cols) tensors of one batch, got "
                         f"{tuple(src.shape)} and {tuple(dst.shape)}")
    if src.dtype != dst.dtype or src.device != dst.device:
        raise ValueError(f"pad_copy copies within one dtype and device, got {src.dtype} on "
                         f"{src.device} into {dst.dtype} on {dst.device}")
    out = dst
    if dst.stride(2) != 1 and dst.stride(1) == 1:   # the destination's contiguous dim last
        src, dst = src.transpose(1, 2), dst.transpose(1, 2)
    batch, rows_d, cols_d = dst.shape
    if batch == 0 or rows_d == 0 or cols_d == 0:
        return out
    block_r, block_c, warps = block or tile(rows_d, cols_d)
    tiles_c = triton.cdiv(cols_d, block_c)
    tiles = triton.cdiv(rows_d, block_r) * tiles_c
    for b0 in range(0, batch, MAX_GRID_Y):
        s, d = src[b0:b0 + MAX_GRID_Y], dst[b0:b0 + MAX_GRID_Y]
        pad_copy_kernel[(tiles, s.shape[0])](
            s, d, s.shape[1], s.shape[2], s.stride(0), s.stride(1), s.stride(2),
            rows_d, cols_d, d.stride(0), d.stride(1), d.stride(2), tiles_c,
            BLOCK_R=block_r, BLOCK_C=block_c, num_warps=warps)
    return out
