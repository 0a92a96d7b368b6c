"""The problems the transposed GEMV (gemm.gemv_t: N <= 4, A row-major) is swept on (session
28): every bf16 problem it can serve in the shipped bf16 model's training files (its
manifest, as it was before the family) and in the two bf16 validation sets, one list per
layout (the sweeps take one layout each); and the problems of the fp16 and fp8 validation sets
it serves, so that those stay exhaustive.

    python benchmarks/problems/make_gemv_t_lists.py
"""

from pathlib import Path

from make_gemv_lists import manifest_files, served as served_by   # on sys.path as a script's

from tilepick.bench.shapes import write_problem_file

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def served(files, dtype="bf16"):
    """The problems gemm.gemv_t served in session 28: B's columns K-contiguous (column-major B
    or a packed K x 1); session 29's row-major B with N = 2-4 is make_gemv_t_rr_lists.py's."""
    return [p for p in served_by(files, dtype, family="gemm.gemv_t")
            if not p.b_row_major or (p.n == 1 and p.ldb == 1)]


def main():
    train = served(manifest_files(keep=lambda path: "train_gemv_t" not in path))
    sets = {"train": train}
    for name in ("validation", "validation_rc"):
        sets[name] = served(sorted((ROOT / "data/gemm/bf16/h200" / name).glob("*.parquet")))
    for name, problems in sets.items():
        for layout in ("rr", "rc"):
            rows = [p for p in problems if p.layout == layout]
            if rows:
                prefix = name if name != "validation_rc" else "validation"
                path = HERE / f"{prefix}_{layout}_bf16_gemv_t.jsonl"
                write_problem_file(rows, path)
                print(f"{path.name}: {len(rows)} problems")
    for dtype, layout in (("fp16", "rr"), ("fp8e4m3", "rc")):
        rows = served(sorted((ROOT / f"data/gemm/{dtype}/h200/validation").glob("*.parquet")),
                      dtype)
        path = HERE / f"validation_{layout}_{dtype}_gemv_t.jsonl"
        write_problem_file(rows, path)
        print(f"{path.name}: {len(rows)} problems")


if __name__ == "__main__":
    main()
