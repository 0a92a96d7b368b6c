"""The LLM suite's rr decode rows (x @ W, M = 1) under two or more models: each model's
vendor-gate raw score (> 0: cuBLAS first), and the last model's first two candidates (CPU,
~10 s); with three or more models, each model's top-1 family instead.

Why: session 61's retrain on `train_gemv_n` put `gemm.gemv_n_splitk` first in the ranker on four
of the eight rows, where the H200 probe has the family 1.04-1.10x faster than cuBLAS, and the gate
moved cuBLAS back above it on three. This shows which of the two calls a pick comes from.
Session 63 compared the same retrain at five LightGBM thread counts with it (BENCHMARKS.md).

    python benchmarks/analysis_s61/decode_gate.py OLD_MODEL_DIR NEW_MODEL_DIR [MORE_DIRS ...]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dispatch_llm_suite import suite  # noqa: E402

from tilepick.config import KernelConfig  # noqa: E402
from tilepick.model import Predictor  # noqa: E402


def short(config_id: str) -> str:
    return config_id.removeprefix("gemm.")


def family(config_id: str) -> str:
    """``gemm.gemv_n_splitk.m1n512k32...`` -> ``gemv_n_splitk``; ``gemm.cublas`` -> ``cublas``."""
    return short(KernelConfig.from_id(config_id).family)


def decode_rows():
    return [p for p in suite(["llama3-8b", "llama3-70b"]) if p.m == 1 and p.layout == "rr"]


def main(dirs: list[str]):
    models = [Predictor(d) for d in dirs]
    names = ["gate old", "gate new"] if len(dirs) == 2 else [f"gate {i}" for i in range(len(dirs))]
    tail = ("new model's first two (predicted TFLOP/s)" if len(dirs) == 2
            else "top-1 family of each model")
    print(f"{'problem':32} " + " ".join(f"{n:>8}" for n in names) + f"  {tail}")
    for p in decode_rows():
        if len(dirs) == 2:
            last = ", ".join(f"{short(c)} {t:.3f}" for c, t, _ in models[-1].rank(p, 2))
        else:
            last = " ".join(family(m.rank(p, 1)[0][0]) for m in models)
        print(f"{p.key():32} " + " ".join(f"{m.gate_raw(p):8.3f}" for m in models) + f"  {last}")
    if len(dirs) > 2:
        for i, d in enumerate(dirs):
            print(f"gate {i}: {d}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
