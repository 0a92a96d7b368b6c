"""Session 27's lists: the bf16 training problems over 1 TFLOP, for a re-timing pass.

Why: the shipped ranker fits the largest training problems worst (in-sample 98.0% mean, P10
94.0% over 1 TFLOP, `benchmarks/analysis_s26/big_problem_fit.py`), and those problems'
labels mix two timing regimes: the sweep's inline re-timing of its five best screened configs
(in rounds whose order was one fixed rotation, which session 26 found biases kernels of
milliseconds by several %) and single screening medians for every other config, taken while
the GPU heated over a sweep of big kernels. No pass ever re-timed them together. A pass in
Williams-ordered rounds (`tilepick data retime`, cuBLAS and the model's first picks among the
contenders) puts their best candidates in one regime.

    python benchmarks/problems/make_big_lists.py [FLOPS=1e12]

Writes `train_{rr,rc}_bf16_big.jsonl` (the problems of `train_rr/` and `train_rc/` whose
2 x M x N x K exceeds FLOPS), sorted by key.
"""

import sys
from pathlib import Path

from make_rr_decode_lists import shapes_in

from tilepick.bench.shapes import write_problem_file
from tilepick.problem import GemmProblem

HERE = Path(__file__).parent


def big(folder: str, layout: str, floor: float) -> list[GemmProblem]:
    shapes = sorted(s for s in shapes_in((folder,), ("m", "n", "k", "batch"))
                    if 2.0 * s[0] * s[1] * s[2] * s[3] > floor)
    if not shapes:
        raise SystemExit(f"no problem of {folder} over {floor:.0e} FLOP")
    return [GemmProblem(m=m, n=n, k=k, batch=b, dtype="bf16", layout=layout)
            for m, n, k, b in shapes]


def main():
    floor = float(sys.argv[1]) if len(sys.argv) > 1 else 1e12
    for folder, layout in (("train_rr", "rr"), ("train_rc", "rc")):
        problems = big(folder, layout, floor)
        path = write_problem_file(problems, HERE / f"{folder}_bf16_big.jsonl")
        print(f"{path}: {len(problems)} problems")


if __name__ == "__main__":
    main()
