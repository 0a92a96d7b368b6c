"""Would compiling the packed fold ensemble (``ensemble.txt.gz``) with lleaves speed up ranking?
(CPU, ~10 s.) Prints its compile time, the largest difference from LightGBM's raw scores on the
leading rows of 50 problems, and the time of one call on 5 rows (what ``Predictor._rank_new``
passes it) for both.

    python benchmarks/analysis_s57/ensemble_compiled.py [MODEL_DIR]

Why: after session 56 the ensemble call was one of the larger parts of a new problem's ranking.
Session 57's answer: ~40 -> ~21 us a call (of ~500-800 us a problem), and the scores differ from
LightGBM's in the last bits (~4e-15), which would end the bit-identical rankings that
``benchmarks/rank_parity.py`` and ``tests/test_predict_fast.py`` hold the fast path to. Not adopted.
"""

import sys
import tempfile
import time
from pathlib import Path

import lleaves
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from predict_latency import shapes  # noqa: E402

from tilepick.model import Predictor  # noqa: E402
from tilepick.model.artifacts import ENSEMBLE_FILE  # noqa: E402
from tilepick.model.booster import FastBooster  # noqa: E402


def per_call_us(f, calls: int = 1000) -> float:
    for _ in range(50):
        f()
    t = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t) / calls * 1e6


def main(model_dir: str = "models/gemm_bf16_h200") -> None:
    fb = FastBooster.load(Path(model_dir) / ENSEMBLE_FILE)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ensemble.txt"
        path.write_text(fb.booster.model_to_string())   # with the tree_sizes lleaves reads
        compiled = lleaves.Model(model_file=str(path))
        t = time.perf_counter()
        compiled.compile(cache=str(Path(tmp) / "ensemble.o"), raw_score=True, finline=False)
        print(f"compile {time.perf_counter() - t:.1f} s, {compiled.num_trees()} trees, "
              f"{compiled.num_model_per_iteration()} outputs")
        pred = Predictor(model_dir)
        rows = []
        for p in shapes(50, 1):
            table = pred._table(p)
            rows.append(table.features(p, table.valid_index(p))[:6])
        x = np.ascontiguousarray(np.vstack(rows))
        ref = fb.predict(x)
        got = compiled.predict(x, n_jobs=1).reshape(ref.shape)
        print(f"largest |lleaves - LightGBM| over {len(x)} rows: {np.abs(got - ref).max():.2e} "
              f"(bit-equal: {bool((got == ref).all())})")
        x5 = np.ascontiguousarray(x[:5])
        print(f"one call on 5 rows: LightGBM {per_call_us(lambda: fb.predict(x5)):.1f} us, "
              f"lleaves {per_call_us(lambda: compiled.predict(x5, n_jobs=1)):.1f} us")


if __name__ == "__main__":
    main(*sys.argv[1:])
