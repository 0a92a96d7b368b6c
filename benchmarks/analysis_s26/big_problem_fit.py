"""How well a model ranks the training problems it learned from, above a size (session 26).

Per bf16 training problem of ``train_rr`` / ``train_rc`` over FLOPS: the measured time of the
model's first-ranked measured config over the best measured (the loader's times,
``dataset.clean``). In-sample, so an upper bound on what it does on unseen problems of that
size.

    python benchmarks/analysis_s26/big_problem_fit.py MODEL_DIR [FLOPS=2e12] [EXTRA_DATA ...]

EXTRA_DATA: more dataset folders or files read with them (session 27: the re-timing passes of
``data/gemm/bf16/h200/train_big_retime``, whose rows replace the sweeps' labels of the configs
they re-timed).
"""
import collections
import sys

import numpy as np
import pandas as pd

from tilepick.data.io import read_frame
from tilepick.model.dataset import clean
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem

model, floor = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 2e12
paths = [f"data/gemm/bf16/h200/{d}" for d in ("train_rr", "train_rc")] + sys.argv[3:]
frame = clean(pd.concat([read_frame(p) for p in paths], ignore_index=True))
frame = frame[2.0 * frame.m * frame.n * frame.k > floor]
pred = Predictor(model)
effs, picks = [], collections.Counter()
for key, d in frame.groupby("problem_key"):
    t = dict(zip(d.config_id, d.time_ms))
    ranked = [c for c, _, _ in pred.rank(GemmProblem.from_key(key)) if c in t]
    if ranked:
        effs.append(min(t.values()) / t[ranked[0]])
        picks[ranked[0]] += 1
e = np.array(effs)
print(f"{model}: {len(e)} problems over {floor:.0e} FLOP, mean {e.mean():.4f}, "
      f"P10 {np.quantile(e, 0.1):.4f}, min {e.min():.3f}")
print("most picked:", picks.most_common(5))
