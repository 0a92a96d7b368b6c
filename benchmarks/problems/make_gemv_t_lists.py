"""The problems the transposed GEMV (gemm.gemv_t: N <= 4, A row-major) is swept on (session
28): every bf16 problem it can serve in the shipped bf16 model's training files (its
manifest, as it was before the family) and in the two bf16 validation sets, one list per
layout (the sweeps take one layout each); and the problems of the fp16 and fp8 validation sets
it serves, so that those stay exhaustive.

    python benchmarks/problems/make_gemv_t_lists.py
"""

import functools
import json
from pathlib import Path

from make_gemv_lists import served as served_by   # this folder is on sys.path as a script's

from tilepick.bench.shapes import write_problem_file

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
served = functools.partial(served_by, family="gemm.gemv_t")


def main():
    manifest = json.loads((ROOT / "models/gemm_bf16_h200/manifest.json").read_text())
    train = served([ROOT / d["path"] for d in manifest["data"]
                    if "train_gemv_t" not in d["path"]])
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
