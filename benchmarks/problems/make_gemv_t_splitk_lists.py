"""The problems gemm.gemv_t_splitk (session 29: the transposed GEMV split over K) is swept on:
every bf16 problem it serves in the session-28 bf16 model's training files (its manifest) and
in train_gemv_t/ (which gained rr problems in session 29), and every problem it serves in the
validation sets of bf16 (rr, rc), fp16 (rr) and fp8 (rc), so that those stay exhaustive. One
list per set, dtype and layout (a sweep takes one layout).

    python benchmarks/problems/make_gemv_t_splitk_lists.py
"""

import functools
from pathlib import Path

from make_gemv_lists import manifest_files, write_layout_lists   # on sys.path as a script's
from make_gemv_lists import served as served_by

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
DATA = ROOT / "data/gemm"
served = functools.partial(served_by, family="gemm.gemv_t_splitk")


def main():
    files = set(manifest_files())
    files |= set((DATA / "bf16/h200/train_gemv_t").glob("*.parquet"))
    sets = [("train", "bf16", served(sorted(files)))]
    for name in ("validation", "validation_rc"):
        sets.append(("validation", "bf16",
                     served(sorted((DATA / "bf16/h200" / name).glob("*.parquet")))))
    for dtype in ("fp16", "fp8e4m3"):
        sets.append(("validation", dtype,
                     served(sorted((DATA / dtype / "h200/validation").glob("*.parquet")), dtype)))
    write_layout_lists(sets, ("rr", "rc"), "gemv_t_splitk")


if __name__ == "__main__":
    main()
