"""The problems the GEMV family (gemm.gemv) is swept on: every bf16 problem it can serve in the
shipped model's training data (its manifest) and in the rc validation set.

    python benchmarks/problems/make_gemv_lists.py   # writes the two .jsonl files beside it
"""

import json
from pathlib import Path

import pandas as pd

from tilepick.bench.shapes import write_problem_file
from tilepick.hardware import profile
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def served(files) -> list[GemmProblem]:
    keys = pd.concat([pd.read_parquet(f, columns=["problem_key"]) for f in files])["problem_key"]
    gemv, hw = SOLVERS["gemm.gemv"], profile("h200")
    out = [GemmProblem.from_key(k) for k in sorted(set(keys))]
    return [p for p in out if p.dtype_token == "bf16" and gemv.configs(p, hw)]


def main():
    manifest = json.loads((ROOT / "models/gemm_bf16_h200/manifest.json").read_text())
    train = served([ROOT / d["path"] for d in manifest["data"]])
    val = served(sorted((ROOT / "data/gemm/bf16/h200/validation_rc").glob("*.parquet")))
    write_problem_file(train, HERE / "train_rc_bf16_gemv.jsonl")
    write_problem_file(val, HERE / "validation_rc_bf16_gemv.jsonl")
    print(f"train {len(train)}, validation {len(val)}")


if __name__ == "__main__":
    main()
