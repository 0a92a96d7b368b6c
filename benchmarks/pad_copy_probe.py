"""How fast are `gemm.cublas_repack`'s copies, by tile, against torch's? (GPU)

Why: the family's copies (an operand into padded, 16-byte-aligned workspace with zeros around
it; C's padded workspace back into C) cost 10-40 us on large problems with torch's strided
`copy_` plus `zero_` calls (its non-vectorised elementwise kernel, ~1.8 TB/s effective on 1169 x
7168 x 5120 cc, session 31). Session 31 probed one Triton kernel that loads a tile masked by the
source's extents (zeros outside) and stores it masked by the destination's (1.1-1.7x torch's);
session 32 made it the family's copy (`kernels.pad_copy`). This times, per copy, torch's copies,
`pad_copy` with its default tile (`pad_copy.tile`) and with each of ``--tiles``, all checked
equal first, in interleaved rounds (L2 flushed), with the bytes moved per microsecond.

    PYTHONPATH=src python3 benchmarks/pad_copy_probe.py --out FILE.json [--tiles 16x256x4 ...]
    TRITON_INTERPRET=1 PYTHONPATH=src python3 benchmarks/pad_copy_probe.py --out F --device cpu
"""

import argparse
import json

# (name, rows, cols, ld of the source, padded rows, padded cols): the source is a (rows, cols)
# view with leading dimension ld, contiguous along cols (a column-major operand is passed
# transposed); the destination is packed (padded rows, padded cols). Crops swap the roles.
CASES = [("A of cc 1169x7168x5120 (K x M)", 5120, 1169, 1169, 5120, 1176),
         ("A of cc 631x5120x13824", 13824, 631, 631, 13824, 632),
         ("B of rr 1000x4096x4097 (K x N)", 4097, 4096, 4096, 4104, 4096),
         ("A of rr 1000x4096x4097 (M x K)", 1000, 4097, 4097, 1000, 4104),
         ("B of cr 3x11329x6029 (K x N)", 6029, 11329, 11329, 6029, 11336),
         ("A of cc 7x8192x8192 (K x M)", 8192, 7, 7, 8192, 8),
         ("B of rr 511x512x513 (K x N)", 513, 512, 512, 520, 512),
         ("C crop of cc 1169x7168x5120", 1176, 7168, 7168, 1169, 7168),
         ("C crop of cr 3x11329x6029", 3, 11336, 11336, 3, 11329)]
# the same kinds of copy, small enough for Triton's interpreter (--device cpu)
SMALL = [("A, odd M", 40, 17, 17, 40, 24), ("B, odd K", 33, 48, 48, 40, 48),
         ("B, odd N", 24, 45, 45, 24, 48), ("C crop", 24, 48, 48, 17, 45)]
TILES = ["8x256x4", "16x256x4", "32x256x4", "32x256x8", "16x512x4", "16x512x8", "8x1024x4",
         "8x1024x8", "64x128x4", "4x1024x4"]


def probe(case, device, rounds, tiles) -> dict:
    import torch

    from tilepick.bench.timing import interleaved
    from tilepick.kernels.pad_copy import pad_copy, tile
    from tilepick.solvers.repack import torch_pad_into

    name, rows, cols, ld, rows_d, cols_d = case
    store = torch.randn(rows, ld, device=device).to(torch.bfloat16)
    src = store[:, :cols] if ld != cols else store
    blocks = {"default " + "x".join(map(str, tile(rows_d, cols_d))): None}
    blocks.update({t: tuple(int(v) for v in t.split("x")) for t in tiles})
    outs = {k: torch.empty(rows_d, cols_d, device=device, dtype=torch.bfloat16)
            for k in ["torch", *blocks]}
    fns = {"torch": lambda: torch_pad_into(src[None], outs["torch"][None])}
    for k, blk in blocks.items():
        fns[k] = (lambda k=k, blk=blk: pad_copy(src[None], outs[k][None], blk))
    for f in fns.values():
        f()
    equal = {k: bool(torch.equal(outs["torch"], outs[k])) for k in blocks}
    moved = (min(rows, rows_d) * min(cols, cols_d) * 2 * 2
             + (rows_d * cols_d - min(rows, rows_d) * min(cols, cols_d)) * 2)
    if device == "cpu":
        return {"case": name, "equal": all(equal.values())}
    timed = interleaved(fns, rounds=rounds, max_ms=30.0)
    row = {"case": name, "equal": all(equal.values()), "bytes": moved,
           "times": {k: {"us": r.ms * 1e3, "spread": r.spread, "tb_s": moved / (r.ms * 1e9)}
                     for k, r in timed.items()}}
    best = min(row["times"], key=lambda k: row["times"][k]["us"])
    print(f"{name}: torch {row['times']['torch']['us']:.1f} us; "
          + "; ".join(f"{k} {v['us']:.1f}" for k, v in row["times"].items() if k != "torch")
          + f"; best {best}" + ("" if row["equal"] else " DIFFERENT"), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tiles", nargs="*", default=TILES, help="BLOCK_RxBLOCK_CxWARPS")
    ap.add_argument("--device", default="cuda",
                    help="cpu: small copies, equality only (set TRITON_INTERPRET=1)")
    args = ap.parse_args()
    from tilepick.provenance import collect

    cases = SMALL if args.device == "cpu" else CASES
    rows = [probe(c, args.device, args.rounds, args.tiles) for c in cases]
    with open(args.out, "w") as f:
        json.dump({"provenance": collect(), "args": vars(args), "cases": rows}, f, indent=1)
    if not all(r["equal"] for r in rows):
        raise SystemExit("a Triton copy differs from torch's")


if __name__ == "__main__":
    main()
