"""A dispatch run's speedups over torch.matmul by M (CPU; from its row file).

Why: the LLM suite's geomean mixes decode rows, where the GEMV and split-K families can beat
cuBLAS, with large-M rows that tie it; the split by M says which rows move the geomean.

    python benchmarks/analysis_s31/suite_by_m.py benchmarks/results/dispatch_llm_suite_s31_e079fd8.jsonl.gz
"""

import collections
import json
import math
import sys

from tilepick.data.io import open_text

MODES = ("heuristic", "hybrid")


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main(path: str) -> None:
    with open_text(path) as f:
        rows = [json.loads(line) for line in f]
    by: dict = collections.defaultdict(lambda: collections.defaultdict(list))
    not_cublas = collections.Counter()
    for r in rows:
        m = int(r["problem"].split(".m")[1].split(".")[0])
        for mode in MODES:
            speedup = r["ms"]["torch"] / r["ms"][mode]
            by[m][mode].append(speedup)
            by["all"][mode].append(speedup)
            not_cublas[mode] += r["choice"][mode] != "gemm.cublas"
    for m in sorted(by, key=lambda x: (isinstance(x, str), x)):
        print(f"M={m}", len(by[m][MODES[0]]), "  ".join(
            f"{mode} {geomean(by[m][mode]):.3f} (min {min(by[m][mode]):.3f})" for mode in MODES))
    print("picks other than cuBLAS:", dict(not_cublas))
    spreads = sorted(r["spread"]["torch"] for r in rows)
    print(f"torch.matmul's round spread: median {spreads[len(spreads) // 2]:.3f}, "
          f"p90 {spreads[int(0.9 * len(spreads))]:.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
