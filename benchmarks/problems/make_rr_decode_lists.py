"""The `x @ W` decode problems of session 22 (`train_rr_decode/`): rr, M = 1-16, weights
4096-16384 wide with K = 8192-32768.

Why: on the LLM suite the heuristic's worst rows are rr decode steps on 8192-wide weights with
long K (1 x 8192 x 28672 at 0.894 of torch.matmul, 1 x 8192 x 8192 at 0.946), where the model
bets on split-K or a pointer config and cuBLAS is the best. The training data has almost no rr
problem there: at M <= 4 with N in 6144-14336 and K >= 8192 only 17, and the one-launch
split-K families won on N up to ~7168 only. These problems fill that box, with every family
sampled and the model's own picks measured (its mistakes become training rows).

The suite's weights (Llama-3-8B / 70B projections) and the validation sets' shapes are left
out, so neither the suite nor validation is trained on.

    python benchmarks/problems/make_rr_decode_lists.py
"""

import functools
import itertools
import random
import sys
from pathlib import Path

from tilepick.bench.shapes import MODELS, llm_projections, write_problem_file
from tilepick.data.io import read_frame
from tilepick.problem import GemmProblem

HERE = Path(__file__).parent
DATA = HERE.parents[1] / "data" / "gemm" / "bf16" / "h200"
OUT = HERE / "train_rr_bf16_decode.jsonl.gz"
M_WEIGHTS = {1: 6, 2: 2, 3: 1, 4: 2, 6: 1, 8: 1, 16: 2}   # decode steps first
N_VALUES = (4096, 5120, 6144, 7168, 8192, 9216, 10240, 11008, 12288, 13824, 14336, 16384)
K_VALUES = (8192, 10240, 11008, 12288, 13824, 14336, 16384, 20480, 24576, 28672, 32768)
COUNT = 360
SUITE_MODELS = ("llama3-8b", "llama3-70b")


def suite_weights() -> set[tuple[int, int]]:
    return {(p.n, p.k) for name in SUITE_MODELS for p in llm_projections(MODELS[name])}


def shapes_in(folders, columns=("m", "n", "k")) -> frozenset[tuple]:
    """The distinct ``columns`` of the problems in these dataset folders (under DATA)."""
    out = set()
    for name in folders:
        df = read_frame(DATA / name)[list(columns)].drop_duplicates()
        out |= set(map(tuple, df.itertuples(index=False)))
    return frozenset(out)


@functools.cache
def validation_shapes() -> frozenset[tuple[int, int, int]]:
    return shapes_in(("validation", "validation_rc"))


def draw(count: int, seed: int, m_weights: dict, n_values, k_values, layout: str = "rr",
         skip=frozenset()) -> list[GemmProblem]:
    """``count`` distinct bf16 problems: a weight (N, K) of the grid that is not one of the
    suite's, an M by ``m_weights``; shapes (M, N, K) in ``skip`` or the validation sets are
    drawn again."""
    skip_w, skip_s = suite_weights(), validation_shapes() | set(skip)
    weights = [(n, k) for n, k in itertools.product(n_values, k_values) if (n, k) not in skip_w]
    rng = random.Random(seed)
    ms = [m for m, w in m_weights.items() for _ in range(w)]
    seen: set[tuple[int, int, int]] = set()
    out = []
    while len(out) < count:
        n, k = rng.choice(weights)
        shape = (rng.choice(ms), n, k)
        if shape in seen or shape in skip_s:
            continue
        seen.add(shape)
        out.append(GemmProblem(*shape, dtype="bf16", layout=layout))
    return out


def problems(count: int = COUNT, seed: int = 22) -> list[GemmProblem]:
    return draw(count, seed, M_WEIGHTS, N_VALUES, K_VALUES)


def main():
    got = problems(int(sys.argv[1]) if len(sys.argv) > 1 else COUNT)
    write_problem_file(got, OUT)
    print(f"{OUT.name}: {len(got)} problems")


if __name__ == "__main__":
    main()
