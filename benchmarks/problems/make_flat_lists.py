"""Problem lists for the gemm.tma_flat training sweeps: a seeded sample of the bf16 training
problems (train_rr, train_rc chunks) on which the family has valid configs (more output tiles
than the H200's 132 SMs for some config). Run from the repository root:

    python benchmarks/problems/make_flat_lists.py --per-layout 250
"""

import argparse
import json
import random
from pathlib import Path

import pyarrow.parquet as pq

from tilepick import solvers
from tilepick.hardware import profile
from tilepick.problem import GemmProblem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-layout", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    hw, flat = profile("h200"), solvers.SOLVERS["gemm.tma_flat"]
    here = Path(__file__).parent
    for layout in ("rr", "rc"):
        keys = set()
        for f in sorted(Path(f"data/gemm/bf16/h200/train_{layout}").glob("chunk-*.parquet")):
            keys.update(pq.read_table(f, columns=["problem_key"]).column(0).to_pylist())
        eligible = sorted(k for k in keys if flat.configs(GemmProblem.from_key(k), hw))
        chosen = sorted(random.Random(f"{args.seed}:{layout}").sample(eligible, args.per_layout))
        out = here / f"train_{layout}_bf16_flat.jsonl"
        with open(out, "w") as fh:
            for k in chosen:
                fh.write(json.dumps({"problem_key": k, **GemmProblem.from_key(k).to_dict()}) + "\n")
        print(f"{out}: {len(chosen)} of {len(eligible)} eligible ({len(keys)} problems)")


if __name__ == "__main__":
    main()
