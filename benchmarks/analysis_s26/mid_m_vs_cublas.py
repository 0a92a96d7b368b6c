"""The best Triton config over cuBLAS at M = 33-112 on LLM-sized weights (session 26).

Per bf16 training problem with 33 <= M <= 112 and N, K >= 4096 (``train_mid_m``, ``train_rr``,
``train_rc``, ``train_rr_decode``; the loader's times): cuBLAS's time over the best Triton
config's, its median per layout.

    python benchmarks/analysis_s26/mid_m_vs_cublas.py
"""
import pandas as pd

from tilepick.data.io import read_frame
from tilepick.model.dataset import clean

frame = clean(pd.concat([read_frame(f"data/gemm/bf16/h200/{d}")
                         for d in ("train_mid_m", "train_rr", "train_rc", "train_rr_decode")],
                        ignore_index=True))
frame = frame[frame.m.between(33, 112) & (frame.n >= 4096) & (frame.k >= 4096)]
out = []
for key, d in frame.groupby("problem_key"):
    cub, tri = d[d.family == "gemm.cublas"], d[d.family != "gemm.cublas"]
    if len(cub) and len(tri):
        out.append(dict(layout=d.layout.iloc[0], ratio=cub.time_ms.min() / tri.time_ms.min()))
t = pd.DataFrame(out)
print(t.groupby("layout").ratio.describe(percentiles=[0.1, 0.5, 0.9]).round(3))
