"""Warp-specialised variants over today's kernels, per (shape, config), from one
`benchmarks/warp_spec_probe.py` result: geomean, min and max of ws / today's TMA and
ws_pers / today's persistent TMA (TFLOP/s ratios).

    python benchmarks/analysis_s26/ws_over_today.py benchmarks/results/timing_order_s26/ws_probe_williams_fbb0297.json.gz
"""
import json
import sys

import numpy as np

from tilepick.data.io import open_text

with open_text(sys.argv[1]) as fh:
    result = json.load(fh)
ratios = {"ws": [], "ws_pers": []}
for shape in result["results"]:
    rows = {r["candidate"]: r["tflops"] for r in shape["rows"]}
    for cid in result["args"]["configs"].split(","):
        for base, variant in (("gemm.tma", "ws"), ("gemm.tma_persistent", "ws_pers")):
            if f"{base}.{cid}" in rows and f"{variant}.{cid}" in rows:
                ratios[variant].append(rows[f"{variant}.{cid}"] / rows[f"{base}.{cid}"])
for variant, v in ratios.items():
    v = np.array(v)
    print(f"{variant} / today: {len(v)} pairs, geomean {np.exp(np.log(v).mean()):.3f}, "
          f"min {v.min():.3f}, max {v.max():.3f}")
