"""The problems gemm.gemv_n_splitk (session 59: the ``x @ W`` decode GEMV) is swept on: the LLM
suite's decode steps of ``x @ W`` (M = 1, rr: its probe), every bf16 problem it serves in the
shipped bf16 model's training files (its manifest), and every one it serves in the bf16
validation sets (rr, cr), so that those stay exhaustive. One list per set and layout (a sweep
takes one layout).

    python benchmarks/problems/make_gemv_n_lists.py
"""

import functools
import sys
from pathlib import Path

from make_gemv_lists import manifest_files, write_layout_lists   # on sys.path as a script's
from make_gemv_lists import served as served_by

from tilepick.bench.shapes import write_problem_file

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
DATA = ROOT / "data/gemm/bf16/h200"
FAMILY = "gemm.gemv_n_splitk"
served = functools.partial(served_by, family=FAMILY)


def suite_probe():
    """The LLM suite's rows this family serves (M = 1, rr)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from dispatch_llm_suite import suite

    return [p for p in suite(("llama3-8b", "llama3-70b"), (1,)) if p.layout == "rr"]


def main():
    write_problem_file(suite_probe(), HERE / "gemv_n_suite_rr_bf16.jsonl")
    validation = [p for name in ("validation", "validation_cr")
                  for p in served(sorted((DATA / name).glob("*.parquet")))]
    write_layout_lists([("train", "bf16", served(sorted(manifest_files()))),
                        ("validation", "bf16", validation)], ("rr", "cr"), "gemv_n")


if __name__ == "__main__":
    main()
