"""Session 47's smaller tables, each from committed files (CPU, seconds).

    python benchmarks/analysis_s47/pick_tables.py winners PASS.parquet
        the best family per problem inside a re-timing pass, and cuBLAS's share of the best
        (data PROVENANCE "Session 47": the `train_low_flop_*/retime-001.parquet` lines)
    python benchmarks/analysis_s47/pick_tables.py suite ROWS.jsonl[.gz] METHOD_A METHOD_B
        the suite problems where two heuristic models pick differently, with their speedups
        over torch.matmul (BENCHMARKS "Session 47": 18 picks differ; the run's rows file)
    python benchmarks/analysis_s47/pick_tables.py decode OLD_MODEL NEW_MODEL
        how many top-1 picks two models change on decode steps over 10 weights (nine LLM
        projections and the rc validation problem's 13650 x 12674) x 10 values of M in 1-16,
        rr and rc: 78 of 200 for session 46's model -> session 47's
"""

import json
import sys

import pandas as pd

from tilepick.data.io import open_text
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem

DECODE_WEIGHTS = [(4096, 4096), (14336, 4096), (4096, 14336), (6144, 4096), (13650, 12674),
                  (28672, 8192), (8192, 28672), (10240, 8192), (152064, 3584), (3584, 18944)]
DECODE_M = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16)


def winners(path):
    rows = pd.read_parquet(path, columns=["problem_key", "family", "time_ms", "valid"])
    rows = rows[rows["valid"]]
    best = rows.loc[rows.groupby("problem_key")["time_ms"].idxmin()].set_index("problem_key")
    print(f"{len(best)} problems; best family: {best['family'].value_counts().to_dict()}")
    cublas = rows[rows["family"] == "gemm.cublas"].groupby("problem_key")["time_ms"].min()
    share = (best["time_ms"] / cublas.reindex(best.index)).dropna()
    print(f"cuBLAS / best: median {share.median():.2f}, p10 {share.quantile(0.1):.2f} "
          f"({len(share)} problems with cuBLAS in the pass)")


def suite(path, a, b):
    with open_text(path) as f:
        rows = [json.loads(line) for line in f]
    diff = [r for r in rows if r["choice"][a] != r["choice"][b]]
    print(f"{len(diff)} of {len(rows)} picks differ ({a} -> {b}; speedup over torch.matmul)")
    for r in sorted(diff, key=lambda r: r["ms"][b] / r["ms"][a]):
        t = r["ms"]["torch"]
        print(f"{r['problem']:36s} {r['choice'][a]:44s} {t / r['ms'][a]:.3f} -> "
              f"{r['choice'][b]:44s} {t / r['ms'][b]:.3f}")


def decode(old, new):
    a, b = Predictor(old), Predictor(new)
    problems = [GemmProblem(m, n, k, dtype="bf16", layout=layout) for layout in ("rr", "rc")
                for m in DECODE_M for n, k in DECODE_WEIGHTS]
    changed = [p for p in problems if a.rank(p, top=1)[0][0] != b.rank(p, top=1)[0][0]]
    print(f"{len(changed)} of {len(problems)} decode steps change their top-1 pick")
    for p in changed:
        print(f"{p.key():36s} {a.rank(p, top=1)[0][0]} -> {b.rank(p, top=1)[0][0]}")


if __name__ == "__main__":
    {"winners": winners, "suite": suite, "decode": decode}[sys.argv[1]](*sys.argv[2:])
