"""The rr problems gemm.gemv_t newly serves in session 29 (a row-major B with N = 2-4, or a
padded K x 1: its K x N tile loaded transposed), to be swept with the family: every such bf16
problem of the session-28 bf16 model's training files (its manifest) and of the bf16 and fp16
rr validation sets (so that they stay exhaustive). The session-28 lists (packed K x 1 columns,
``make_gemv_t_lists.py``) are left out: those problems were swept then.

    python benchmarks/problems/make_gemv_t_rr_lists.py
"""

import functools
from pathlib import Path

from make_gemv_lists import manifest_files, served as served_by   # on sys.path as a script's

from tilepick.bench.shapes import resolve_problems, write_problem_file

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
served = functools.partial(served_by, family="gemm.gemv_t")
SWEPT = ("train_rr_bf16_gemv_t", "validation_rr_bf16_gemv_t", "validation_rr_fp16_gemv_t")


def main():
    swept = {p.key() for name in SWEPT for p in resolve_problems(str(HERE / f"{name}.jsonl"))}
    sets = {
        "train_rr_bf16": (served(manifest_files(keep=lambda path: "train_gemv_t" not in path)),
                          "bf16"),
        "validation_rr_bf16": (served(sorted((ROOT / "data/gemm/bf16/h200/validation")
                                             .glob("*.parquet"))), "bf16"),
        "validation_rr_fp16": (served(sorted((ROOT / "data/gemm/fp16/h200/validation")
                                             .glob("*.parquet")), "fp16"), "fp16"),
    }
    for name, (problems, _) in sets.items():
        rows = [p for p in problems if p.layout == "rr" and p.key() not in swept]
        path = HERE / f"{name}_gemv_t_s29.jsonl"
        write_problem_file(rows, path)
        print(f"{path.name}: {len(rows)} problems")


if __name__ == "__main__":
    main()
