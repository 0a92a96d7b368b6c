"""Session 23's problems around M = 128 on LLM-sized weights (`train_mid_m/`), and rr decode
steps on 8192-wide weights with K near 8192.

Why: on the LLM suite the heuristic's largest losses against hybrid are rr problems at M = 128
where cuBLAS runs far below the TMA kernels (128 x 57344 x 8192: hybrid 1.71-1.74x torch.matmul,
the heuristic keeps cuBLAS; 128 x 8192 x 28672: 1.16x). cuBLAS's rr slow pocket is jagged in N
(in the training data at M = 128: N 28672 at 0.59-0.61 of the best, 32000 at 0.95, 36864-50272
at 1.00, 53248 at 0.55, 65024 at 1.00) and the data has ~30 rr problems at M = 128 with N >=
4096, too few for the vendor gate to see the pocket's edges. At M = 100 and 161 there is no
pocket. So: M = 128 weighted heavily, its neighbours (64-256) lightly, both layouts (rc at M =
128 with long K also lost 3% to TMA picks), N 3072-128256, K 2048-32768.

The decode box: at M = 1 with N = 8192 cuBLAS won all 8 `train_rr_decode` problems (K >= 10240),
yet the model picks pointer configs for the suite's 1-16 x 8192 x 8192 (0.94-0.98x); K = 8192
itself is a suite weight, so K just around it.

The suite's weights (Llama-3-8B / 70B projections) and the validation sets' shapes are left out,
as are shapes already in the training folders.

    python benchmarks/problems/make_mid_m_lists.py

The fp16 lists (`train_{rr,rc}_fp16_mid_m.jsonl`, `data/gemm/fp16/h200/train_mid_m/`) are the
bf16 lists in fp16: the same cuBLAS pocket showed on the fp16 suite (128 x 57344 x 8192 at 1.74x
for hybrid, kept cuBLAS by the heuristic), and fp16's vendor gate learns from fp16 problems only
(with the rr list alone it learned "TMA at M = 128" for rc too, where cuBLAS is fine).
"""

import functools
import itertools
from pathlib import Path

from make_rr_decode_lists import draw, shapes_in, validation_shapes

from tilepick.bench.shapes import write_problem_file
from tilepick.problem import GemmProblem

HERE = Path(__file__).parent
M_WEIGHTS = {128: 10, 64: 1, 96: 1, 112: 1, 120: 1, 136: 1, 144: 1, 160: 1, 192: 1, 256: 1}
N_VALUES = (3072, 4096, 5120, 6144, 7168, 8192, 9216, 10240, 11008, 12288, 13824, 14336, 16384,
            18432, 20480, 22016, 24576, 27648, 28672, 30720, 32768, 36864, 40960, 45056, 49152,
            53248, 55296, 57344, 61440, 65536, 73728, 98304, 128256)
K_VALUES = (2048, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 9216, 10240, 11008, 12288, 13824,
            14336, 16384, 20480, 24576, 28672, 32768)
COUNTS = {"rr": 240, "rc": 120}
DECODE_M = (1, 2, 3, 4, 8, 16)
DECODE_K = (5120, 6144, 7168, 9216)
TRAIN_FOLDERS = ("train_rr", "train_rc", "train_narrow", "train_narrow_rc", "train_rr_decode")


@functools.cache
def trained_shapes() -> frozenset[tuple[int, int, int, str]]:
    return shapes_in(TRAIN_FOLDERS, ("m", "n", "k", "layout"))


def mid_m(layout: str, count: int, seed: int) -> list[GemmProblem]:
    trained = {(m, n, k) for m, n, k, lay in trained_shapes() if lay == layout}
    return draw(count, seed, M_WEIGHTS, N_VALUES, K_VALUES, layout, skip=trained)


def decode_8192() -> list[GemmProblem]:
    skip_s, skip_t = validation_shapes(), trained_shapes()
    return [GemmProblem(m, 8192, k, dtype="bf16", layout="rr")
            for m, k in itertools.product(DECODE_M, DECODE_K)
            if (m, 8192, k) not in skip_s and (m, 8192, k, "rr") not in skip_t]


def main():
    for layout, count in COUNTS.items():
        got = mid_m(layout, count, seed=23)
        if layout == "rr":
            got += decode_8192()
        for dtype in ("bf16", "fp16"):   # the same problems in both
            path = HERE / f"train_{layout}_{dtype}_mid_m.jsonl"
            write_problem_file([GemmProblem(p.m, p.n, p.k, dtype=dtype, layout=layout)
                                for p in got], path)
            print(f"{path.name}: {len(got)} problems")


if __name__ == "__main__":
    main()
