"""Could one Triton kernel make `gemm.cublas_repack`'s copies faster than torch's? (GPU)

Why: the family's copies (an operand into padded, 16-byte-aligned workspace with zeros around
it; C's padded workspace back into C) cost 10-40 us on large problems, ~1.8 TB/s effective on
1169 x 7168 x 5120 cc (session 31): torch runs them as a strided `copy_` plus `zero_` calls in
its non-vectorised elementwise kernel. This times, per copy, the family's own
(`solvers.repack.padded_copy` and the crop) against one Triton kernel that loads a tile masked
by the source's extents (zeros outside) and stores it masked by the destination's, so one
launch pads or crops. Both are checked equal first; times in interleaved rounds (L2 flushed),
with the bytes moved per microsecond. A probe, not a family: nothing here is used by tilepick.

    PYTHONPATH=src python3 benchmarks/pad_copy_probe.py --out FILE.json
    TRITON_INTERPRET=1 PYTHONPATH=src python3 benchmarks/pad_copy_probe.py --out F --device cpu
"""

import argparse
import json

import triton
import triton.language as tl

# (name, rows, cols, ld of the source, padded rows, padded cols): the source is a (rows, cols)
# view with leading dimension ld, contiguous along cols (a column-major operand is passed
# transposed); the destination is packed (padded rows, padded cols). Crops swap the roles.
CASES = [("A of cc 1169x7168x5120 (K x M)", 5120, 1169, 1169, 5120, 1176),
         ("A of cc 631x5120x13824", 13824, 631, 631, 13824, 632),
         ("B of rr 1000x4096x4097 (K x N)", 4097, 4096, 4096, 4104, 4096),
         ("B of cr 3x11329x6029 (K x N)", 6029, 11329, 11329, 6029, 11336),
         ("C crop of cc 1169x7168x5120", 1176, 7168, 7168, 1169, 7168)]
# the same kinds of copy, small enough for Triton's interpreter (--device cpu)
SMALL = [("A, odd M", 40, 17, 17, 40, 24), ("B, odd K", 33, 48, 48, 40, 48),
         ("B, odd N", 24, 45, 45, 24, 48), ("C crop", 24, 48, 48, 17, 45)]


@triton.jit
def pad_copy_kernel(src, dst, rows, cols, s_r, d_rows, d_cols, d_r,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    x = tl.load(src + r.to(tl.int64) * s_r + c, mask=(r < rows) & (c < cols), other=0.0)
    tl.store(dst + r.to(tl.int64) * d_r + c, x, mask=(r < d_rows) & (c < d_cols))


def triton_copy(src, dst, block_r=16, block_c=256, warps=4):
    """dst[:rows', :cols'] = src padded with zeros / cropped (2-D, unit column stride)."""
    rows_d, cols_d = dst.shape
    grid = (triton.cdiv(rows_d, block_r), triton.cdiv(cols_d, block_c))
    pad_copy_kernel[grid](src, dst, src.shape[0], src.shape[1], src.stride(0), rows_d, cols_d,
                          dst.stride(0), BLOCK_R=block_r, BLOCK_C=block_c, num_warps=warps)
    return dst


def torch_copy(src, dst):
    """The family's copies (solvers.repack.padded_copy; a crop as its C copy-back does)."""
    r, c = src.shape
    rd, cd = dst.shape
    if rd >= r and cd >= c:
        dst[:r, :c].copy_(src)
        dst[r:, :].zero_()
        dst[:r, c:].zero_()
    else:
        dst.copy_(src[:rd, :cd])
    return dst


def probe(case, device, rounds) -> dict:
    import torch

    from tilepick.bench.timing import interleaved

    name, rows, cols, ld, rows_d, cols_d = case
    store = torch.randn(rows, ld, device=device).to(torch.bfloat16)
    src = store[:, :cols] if ld != cols else store
    outs = {k: torch.empty(rows_d, cols_d, device=device, dtype=torch.bfloat16)
            for k in ("torch", "triton")}
    torch_copy(src, outs["torch"])
    triton_copy(src, outs["triton"])
    same = bool(torch.equal(outs["torch"], outs["triton"]))
    moved = (min(rows, rows_d) * min(cols, cols_d) * 2 * 2
             + (rows_d * cols_d - min(rows, rows_d) * min(cols, cols_d)) * 2)
    if device == "cpu":
        return {"case": name, "equal": same}
    timed = interleaved({"torch": lambda: torch_copy(src, outs["torch"]),
                         "triton": lambda: triton_copy(src, outs["triton"])},
                        rounds=rounds, max_ms=30.0)
    row = {"case": name, "equal": same, "bytes": moved,
           **{k: {"us": r.ms * 1e3, "spread": r.spread, "tb_s": moved / (r.ms * 1e9)}
              for k, r in timed.items()}}
    print(name, "equal" if same else "DIFFERENT",
          "  ".join(f"{k} {v['us']:.1f} us {v['tb_s']:.2f} TB/s" for k, v in row.items()
                    if isinstance(v, dict)), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--device", default="cuda",
                    help="cpu: small copies, equality only (set TRITON_INTERPRET=1)")
    args = ap.parse_args()
    from tilepick.provenance import collect

    cases = SMALL if args.device == "cpu" else CASES
    rows = [probe(c, args.device, args.rounds) for c in cases]
    with open(args.out, "w") as f:
        json.dump({"provenance": collect(), "args": vars(args), "cases": rows}, f, indent=1)
    if not all(r["equal"] for r in rows):
        raise SystemExit("a Triton copy differs from torch's")


if __name__ == "__main__":
    main()
