"""Where a new problem's ranking time goes, stage by stage (CPU, ~20 s).

Each stage of ``Predictor._rank_new`` timed on its own, median over ``--problems`` new shapes
(``predict_latency.shapes``): the families' applicability, the whole validity mask (which
includes it; ``CandidateTable.valid_index``, the predictor's, where the code has it), the
feature matrix, stage 1 (every candidate, the first trees), stage 2 (the best
``stage2_top``, every other tree), the fold ensemble on the leading rows, and the whole ranking.
``--lleaves-ensemble`` also times the ensemble compiled by lleaves (the same scores, checked),
which the predictor does not use.

    python benchmarks/predict_stages.py [--model DIR] [--problems 300] [--lleaves-ensemble]
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from predict_latency import numpy_op_ns, shapes  # noqa: E402

from tilepick.model import Predictor  # noqa: E402


def lleaves_ensemble(pred):
    """The fold ensemble compiled by lleaves: a function of the rows, or None."""
    import lleaves

    folder = tempfile.mkdtemp()
    path = Path(folder) / "ensemble.txt"
    path.write_text(pred.ensemble.booster.model_to_string())
    model = lleaves.Model(model_file=str(path))
    t = time.perf_counter()
    model.compile(raw_score=True, finline=False)   # no cache: a first load's compile
    print(f"lleaves ensemble compile: {time.perf_counter() - t:.1f} s")
    entry, k = model._c_entry_func, model._n_classes
    ptr = ctypes.POINTER(ctypes.c_double)

    def predict(x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.zeros(len(x) * k)
        entry(x.ctypes.data_as(ptr), out.ctypes.data_as(ptr), 0, len(x))
        return out.reshape(len(x), k)
    predict.model = model
    return predict


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--problems", type=int, default=300)
    ap.add_argument("--lleaves-ensemble", action="store_true")
    args = ap.parse_args()
    pred = Predictor.load(model_dir=args.model)
    lt = lleaves_ensemble(pred) if args.lleaves_ensemble else None
    problems = shapes(args.problems + 1, 0, pred.dtype, pred.layouts[0])
    pred.rank(problems[0])
    top, lead = pred.cascade.stage2_top, pred.cascade.uncertainty_top + 1
    times: dict[str, list] = {}

    def timed(name, fn, *a):
        t = time.perf_counter()
        out = fn(*a)
        times.setdefault(name, []).append(time.perf_counter() - t)
        return out
    worst = 0.0
    for p in problems[1:]:
        table = pred._table(p)
        timed("family applicability", table._family_ok, p)
        if hasattr(table, "valid_index"):   # the predictor's path (older code: the mask)
            index = timed("validity mask", table.valid_index, p)
        else:
            index = np.flatnonzero(timed("validity mask", table.valid_mask, p))
        x = timed("features", table.features, p, index)
        s1 = timed("stage 1", pred._stage1, x)
        x_top = x[np.argsort(-s1, kind="stable")[:top]]
        timed("stage 2", pred._stage2, x_top)
        ens = timed("ensemble", pred.ensemble.predict, x_top[:lead])
        if lt is not None:
            worst = max(worst, float(np.abs(timed("ensemble (lleaves)", lt, x_top[:lead])
                                             - ens).max()))
        pred.clear_memo()
        timed("whole ranking", pred.rank, p)
    print(f"{args.problems} new problems, {numpy_op_ns()} ns per small numpy op")
    for name, ts in times.items():
        print(f"{name:22s} p50 {np.median(ts) * 1e6:8.1f} us")
    if lt is not None:
        print(f"lleaves ensemble: max score difference {worst:.2e}")


if __name__ == "__main__":
    main()
