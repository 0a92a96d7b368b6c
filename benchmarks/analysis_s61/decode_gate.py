"""The LLM suite's rr decode rows (x @ W, M = 1) under two models: each model's vendor-gate raw
score (> 0: cuBLAS first) and the ranker's first two candidates (CPU, ~10 s).

Why: session 61's retrain on `train_gemv_n` put `gemm.gemv_n_splitk` first in the ranker on four
of the eight rows, where the H200 probe has the family 1.04-1.10x faster than cuBLAS, and the gate
moved cuBLAS back above it on three. This shows which of the two calls a pick comes from.

    python benchmarks/analysis_s61/decode_gate.py OLD_MODEL_DIR NEW_MODEL_DIR
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dispatch_llm_suite import suite  # noqa: E402

from tilepick.model import Predictor  # noqa: E402


def short(config_id: str) -> str:
    return config_id.removeprefix("gemm.")


def main(old: str, new: str):
    a, b = Predictor(old), Predictor(new)
    print(f"{'problem':32} {'gate old':>8} {'gate new':>8}  new model's first two (predicted TFLOP/s)")
    for p in suite(["llama3-8b", "llama3-70b"]):
        if p.m != 1 or p.layout != "rr":
            continue
        two = ", ".join(f"{short(c)} {t:.3f}" for c, t, _ in b.rank(p, 2))
        print(f"{p.key():32} {a.gate_raw(p):8.3f} {b.gate_raw(p):8.3f}  {two}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
