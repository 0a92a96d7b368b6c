"""Would choosing the k configs to benchmark for diversity beat the model's plain top k?
(session 26; CPU, the bf16 validation sets, each problem inside its latest pass)

Rules: the model's first k measured configs; the same plus cuBLAS (what hybrid benchmarks);
the first k of distinct tile shapes (family, BLOCK_M, BLOCK_N, BLOCK_K); the first k of distinct
families. Efficiency: the best of the k over the best measured.

    python benchmarks/analysis_s26/diverse_top_k.py [MODEL_DIR=models/gemm_bf16_h200]
"""
import sys

import numpy as np

from tilepick.config import VENDOR_FAMILIES, KernelConfig
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem

CUBLAS = VENDOR_FAMILIES[0]


def tile(cid):
    if cid == CUBLAS:
        return (cid,)
    c = KernelConfig.from_id(cid)
    return (c.family, c.block_m, c.block_n, c.block_k)


def distinct(ranked, k, key):
    out, seen = [], set()
    for cid in ranked:
        if key(cid) not in seen:
            out.append(cid)
            seen.add(key(cid))
        if len(out) == k:
            break
    return out


pred = Predictor(sys.argv[1] if len(sys.argv) > 1 else "models/gemm_bf16_h200")
for data in ("data/gemm/bf16/h200/validation", "data/gemm/bf16/h200/validation_rc"):
    ds = load([data], pred.dtype, pred.arch, within_pass=True)
    effs: dict = {}
    for i, key in enumerate(ds.problem_keys):
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        t = dict(zip(ds.config_ids[lo:hi], ds.tflops[lo:hi]))
        ranked = [c for c, _, _ in pred.rank(GemmProblem.from_key(key)) if c in t]
        for k in (2, 4):
            rules = {f"top{k}": ranked[:k],
                     f"top{k} + cuBLAS": ranked[:k] + ([CUBLAS] if CUBLAS in t else []),
                     f"{k} distinct tiles": distinct(ranked, k, tile),
                     f"{k} distinct families": distinct(ranked, k, lambda c: c.split(".")[1])}
            for name, sel in rules.items():
                effs.setdefault(name, []).append(max(t[c] for c in sel) / max(t.values()))
    print(data)
    for name, v in effs.items():
        v = np.array(v)
        print(f"  {name:22s} mean {100 * v.mean():.2f}  P10 {100 * np.quantile(v, 0.1):.2f}")
