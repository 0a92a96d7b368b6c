"""Two bf16 models' new-problem ranking time in the same process, interleaved (CPU, ~1 min).

Why: this VM's speed swings 2-4x between minutes, and `benchmarks/predict_latency.py`'s
numpy-op probe does not always tell (session 54: 600-650 ns per op while a ranking took 1.2-2.4
ms, against session 48's 557 us). Ranking the same 300 random shapes with two models, pass after
pass, says whether a slower reading is the model's or the machine's.

    python benchmarks/analysis_s54/latency_models_ab.py OLD_MODEL_DIR NEW_MODEL_DIR [--passes 3]

(an older model: `git show <commit>:models/gemm_bf16_h200/<file>` for each of its files.)
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from predict_latency import numpy_op_ns, shapes  # noqa: E402

from tilepick.model import Predictor  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs=2)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    preds = {m: Predictor(m) for m in args.models}
    problems = shapes(300, 0)
    for p in preds.values():
        p.rank(shapes(1, 99)[0])   # builds the candidate table
    print(f"{numpy_op_ns()} ns per small numpy op")
    for i in range(args.passes):
        for name, p in preds.items():
            ts = []
            for q in problems:
                t = time.perf_counter()
                p._rank_new(q)
                ts.append(time.perf_counter() - t)
            print(f"pass {i}  {name}: new problem p50 {np.median(ts) * 1e6:.0f} us, "
                  f"p90 {np.percentile(ts, 90) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
