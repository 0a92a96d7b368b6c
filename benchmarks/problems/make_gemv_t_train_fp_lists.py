"""The fp16 and fp8 training problems the transposed GEMV families serve (session 29), so that
those models learn them from their own dtype too (until then only bf16 rows of
gemm.gemv_t / gemm.gemv_t_splitk were pooled in): every problem of the dtype's own files in
its shipped model's manifest that each family serves (fp16 training data is rr, fp8's rc;
problems outside the recipe would enter training with only these families' rows).

    python benchmarks/problems/make_gemv_t_train_fp_lists.py
"""

from pathlib import Path

from make_gemv_lists import manifest_files, served   # on sys.path as a script's

from tilepick.bench.shapes import write_problem_file

HERE = Path(__file__).parent


def main():
    for dtype, layout in (("fp16", "rr"), ("fp8e4m3", "rc")):
        files = sorted(manifest_files(f"models/gemm_{dtype}_h200",
                                      lambda path: path.startswith(f"data/gemm/{dtype}/")))
        for family in ("gemm.gemv_t", "gemm.gemv_t_splitk"):
            rows = [p for p in served(files, dtype, family=family) if p.layout == layout]
            path = HERE / f"train_{layout}_{dtype}_{family.split('.')[1]}.jsonl"
            write_problem_file(rows, path)
            print(f"{path.name}: {len(rows)} problems")


if __name__ == "__main__":
    main()
