"""The problems the one-launch split-K families (gemm.splitk_fused, gemm.tma_splitk; session 20)
are swept on (session 21; fp16 and fp8 in session 22): the problems of a dataset where a split-K config
(gemm.splitk or gemm.splitk_atomic) came within REL of the problem's best and one of the two
families serves the problem. Where split-K was far from the best, a kernel ~6% faster than
atomic split-K (BENCHMARKS, session 20) cannot win, so those problems are left out.

    python benchmarks/problems/make_splitk_fused_lists.py [FILE ...]   (default: every list)

A list is made from the data as it is: the bf16 lists were made in session 21, before the
families' own rows entered those folders (made again now, their bests include the new
families and the validation lists shrink to 49 and 25 problems), so session 22 made only the
fp16 and fp8 ones (`... validation_fp16_splitk_fused.jsonl train_rr_fp16_splitk_fused.jsonl
validation_fp8e4m3_splitk_fused.jsonl train_rc_fp8e4m3_splitk_fused.jsonl`).

Validation lists (REL 0.8) are in key order; training lists (REL 0.85) are shuffled with a
fixed seed, so that a sweep cut by its time budget keeps a random part of them.
"""

import random
import sys
from pathlib import Path

from tilepick.bench.shapes import write_problem_file
from tilepick.data.io import read_frame
from tilepick.hardware import profile
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS

HERE = Path(__file__).parent
DATA = HERE.parents[1] / "data" / "gemm"
FAMILIES = ("gemm.splitk_fused", "gemm.tma_splitk")
SPLIT_K = ("gemm.splitk", "gemm.splitk_atomic")
LISTS = {  # file: (dtype, datasets, REL, shuffled)
    "validation_bf16_splitk_fused.jsonl": ("bf16", ["validation"], 0.8, False),
    "validation_rc_bf16_splitk_fused.jsonl": ("bf16", ["validation_rc"], 0.8, False),
    "train_rr_bf16_splitk_fused.jsonl.gz": ("bf16", ["train_rr", "train_narrow"], 0.85, True),
    "train_rc_bf16_splitk_fused.jsonl.gz": ("bf16", ["train_rc", "train_narrow_rc"], 0.85, True),
    # session 22: the fp16 model learns the families from these (and pooled bf16 rows)
    "validation_fp16_splitk_fused.jsonl": ("fp16", ["validation"], 0.8, False),
    "train_rr_fp16_splitk_fused.jsonl": ("fp16", ["train_rr"], 0.85, True),
    "validation_fp8e4m3_splitk_fused.jsonl": ("fp8e4m3", ["validation"], 0.8, False),
    "train_rc_fp8e4m3_splitk_fused.jsonl": ("fp8e4m3", ["train_rc"], 0.85, True),
}

def near_split_k(dtype: str, datasets, rel: float) -> list[GemmProblem]:
    hw = profile("h200")
    keys: set[str] = set()
    for name in datasets:
        df = read_frame(DATA / dtype / "h200" / name)
        df = df[df.valid & (df.dtype == dtype)]
        best = df.groupby("problem_key").tflops.max()
        split = df[df.family.isin(SPLIT_K)].groupby("problem_key").tflops.max()
        ratio = (split / best).dropna()
        keys |= set(ratio[ratio >= rel].index)
    out = [GemmProblem.from_key(k) for k in sorted(keys)]
    return [p for p in out if any(SOLVERS[f].configs(p, hw) for f in FAMILIES)]

def main():
    wanted = sys.argv[1:] or list(LISTS)
    for name in wanted:
        dtype, datasets, rel, shuffled = LISTS[name]
        problems = near_split_k(dtype, datasets, rel)
        if shuffled:
            random.Random(21).shuffle(problems)
        write_problem_file(problems, HERE / name)
        print(f"{name}: {len(problems)} problems")


if __name__ == "__main__":
    main()
