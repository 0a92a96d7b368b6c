"""Training problems where the one-launch split-K families were never measured (session 25).

Why: those families (gemm.splitk_fused, gemm.tma_splitk) were swept only on the training
problems where split-K came near the best (`make_splitk_fused_lists.py`), on the M = 128 and
rr decode sets, and on none of the other ~6,000 bf16 training problems. A model trained on
that learns their speed where they are good and guesses it elsewhere: the shipped bf16
model's first pick on the held-out 511 x 512 x 513 is a fused split-K config that ran at 35%
of the best (BENCHMARKS, "Session 25"). These lists hold a seeded sample of the bf16
`train_rr` / `train_rc` problems without rows of either family that one of them serves, up
to MAX_TFLOP (a sweep of a few configs a problem then fits a device call), shuffled, so a
sweep cut by its time budget keeps a random part of them.

    python benchmarks/problems/make_fused_negative_lists.py
"""

import random
from pathlib import Path

from tilepick.bench.shapes import write_problem_file
from tilepick.data.io import measured_configs
from tilepick.hardware import profile
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS

HERE = Path(__file__).parent
DATA = HERE.parents[1] / "data" / "gemm" / "bf16" / "h200"
FAMILIES = ("gemm.splitk_fused", "gemm.tma_splitk")
MAX_TFLOP = 0.5
COUNT = 1200
LISTS = {"train_rr_bf16_fused_negative.jsonl": "train_rr",
         "train_rc_bf16_fused_negative.jsonl": "train_rc"}


def without_families(folder: str) -> list[GemmProblem]:
    hw = profile("h200")
    out = []
    for key, ids in sorted(measured_configs(DATA / folder).items()):
        p = GemmProblem.from_key(key)
        if (p.dtype_token == "bf16" and p.flops <= MAX_TFLOP * 1e12
                and not any(i.startswith(FAMILIES) for i in ids)
                and any(SOLVERS[f].configs(p, hw) for f in FAMILIES)):
            out.append(p)
    return out


def main():
    for name, folder in LISTS.items():
        problems = without_families(folder)
        random.Random(25).shuffle(problems)
        write_problem_file(problems[:COUNT], HERE / name)
        print(f"{name}: {min(COUNT, len(problems))} of {len(problems)}")


if __name__ == "__main__":
    main()
