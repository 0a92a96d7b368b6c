"""The problems of a training folder that no re-timing pass covers yet, as a problem file for
`tilepick data retime --problems` (CPU, seconds).

Why: a pass cut by its time budget leaves the rest of a folder's problems on their sweep's
3-round re-timing; a later call resumes with only those (session 48: the rest of
`train_low_flop_rc` and `train_decode_misaligned_k_{rc,rr}`), without the earlier pass's parts.

    python benchmarks/analysis_s48/unpassed_problems.py FOLDER OUT.jsonl
"""

import sys
from pathlib import Path

import pandas as pd

from tilepick.bench.shapes import write_problem_file
from tilepick.problem import GemmProblem


def main():
    folder, out = Path(sys.argv[1]), sys.argv[2]
    cols = ["problem_key"]
    swept = pd.concat([pd.read_parquet(f, columns=cols) for f in folder.glob("chunk-*.parquet")])
    passes = [pd.read_parquet(f, columns=cols) for f in folder.glob("retime-*.parquet")]
    passed = set(pd.concat(passes)["problem_key"]) if passes else set()
    keys = sorted(set(swept["problem_key"]) - passed)
    # the one problem-file writer: the same JSONL lines, and the leading dimensions where a
    # problem has its own
    write_problem_file([GemmProblem.from_key(key) for key in keys], out)
    print(f"{len(keys)} of {swept['problem_key'].nunique()} problems without a pass -> {out}")


if __name__ == "__main__":
    main()
