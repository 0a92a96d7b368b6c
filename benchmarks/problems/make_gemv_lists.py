"""The problems the GEMV family (gemm.gemv) is swept on: every problem it can serve in a shipped
model's training data (its manifest) and in the rc validation set, for bf16 (session 16: the
manifest as it was before the family) and fp8 e4m3; and the probe of its row blocks (session
17: M = 2, 3, 4, 8, 16 on the LLM suite's Llama-3 weights, ``x @ W.T``) and the session-16
lists' problems with M = 2-4, which the row blocks (block_m 2 and 4, session 17) serve.

    python benchmarks/problems/make_gemv_lists.py   # the session-17 lists
    python benchmarks/problems/make_gemv_lists.py --session16   # and session 16's again
"""

import json
import sys
from pathlib import Path

import pandas as pd

from tilepick.bench.shapes import resolve_problems, write_problem_file
from tilepick.hardware import profile
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def manifest_files(model: str = "models/gemm_bf16_h200", keep=lambda path: True) -> list[Path]:
    """The data files in a shipped model's manifest (its training recipe) whose repository
    path ``keep`` accepts."""
    manifest = json.loads((ROOT / model / "manifest.json").read_text())
    return [ROOT / d["path"] for d in manifest["data"] if keep(d["path"])]


def served(files, dtype="bf16", family="gemm.gemv") -> list[GemmProblem]:
    """The problems of ``files`` of ``dtype`` that ``family`` serves (has a valid config for)."""
    keys = pd.concat([pd.read_parquet(f, columns=["problem_key"]) for f in files])["problem_key"]
    solver, hw = SOLVERS[family], profile("h200")
    out = [GemmProblem.from_key(k) for k in sorted(set(keys))]
    return [p for p in out if p.dtype_token == dtype and solver.configs(p, hw)]


def write_layout_lists(sets, layouts, family_tag: str) -> None:
    """One problem list per (set name, dtype) and layout (a sweep takes one layout):
    ``{name}_{layout}_{dtype}_{family_tag}.jsonl`` beside this script, for the sets
    ``[(name, dtype, problems)]``; a layout without problems gets no file."""
    for name, dtype, problems in sets:
        for layout in layouts:
            rows = [p for p in problems if p.layout == layout]
            if rows:
                path = HERE / f"{name}_{layout}_{dtype}_{family_tag}.jsonl"
                write_problem_file(rows, path)
                print(f"{path.name}: {len(rows)} problems")


ROWS_PROBE_M = (2, 3, 4, 8, 16)


def rows_probe() -> list[GemmProblem]:
    """The LLM suite's rc weights at the batched-decode row counts the row blocks serve."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from dispatch_llm_suite import suite

    return [p for p in suite(("llama3-8b", "llama3-70b"), ROWS_PROBE_M) if p.layout == "rc"]


def main():
    write_problem_file(rows_probe(), HERE / "gemv_rows_probe_bf16.jsonl")
    for name in ("train_rc_bf16", "validation_rc_bf16", "train_rc_fp8e4m3",
                 "validation_rc_fp8e4m3"):
        rows = [p for p in resolve_problems(str(HERE / f"{name}_gemv.jsonl")) if p.m > 1]
        write_problem_file(rows, HERE / f"{name}_gemv_rows.jsonl")
        print(f"{name}: {len(rows)} problems with M = 2-4")
    if "--session16" not in sys.argv:
        return
    sets = {"bf16": ("models/gemm_bf16_h200", "data/gemm/bf16/h200/validation_rc"),
            "fp8e4m3": ("models/gemm_fp8e4m3_h200", "data/gemm/fp8e4m3/h200/validation")}
    for dtype, (model, validation) in sets.items():
        # the problems as they were before it
        files = manifest_files(model, lambda path: "train_gemv" not in path)
        train = served(files, dtype)
        val = served(sorted((ROOT / validation).glob("*.parquet")), dtype)
        write_problem_file(train, HERE / f"train_rc_{dtype}_gemv.jsonl")
        write_problem_file(val, HERE / f"validation_rc_{dtype}_gemv.jsonl")
        print(f"{dtype}: train {len(train)}, validation {len(val)}")


if __name__ == "__main__":
    main()
