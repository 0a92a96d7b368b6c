"""Session 33's rr problems at small M on LLM-sized weights (`train_small_m/`).

Why: scored inside its passes, the shipped bf16 model (W5) loses most on the validation's
small-M problems (cross-fitted mean: M = 2-16 97.8%, M = 17-128 98.2%, M > 128 99.2-99.3%),
and there mostly on held-out weights (Qwen2.5, Phi-3) where the vendor gate keeps cuBLAS and a
pointer or TMA config is 5-8% faster (m19 x 17920 x 5120, m41 x 18944 x 3584, m4 x 7168 x 5120,
m32 x 27648 x 5120), or the ranker bets on a pointer config on a vocabulary-sized N
(m5 x 152064 x 5120 at 0.86). The training data is thinnest at M = 17-64 with K > 8192 (28
problems) and has few problems on vocabulary-sized N with K <= 8192 at M > 1.

So: M log-uniform in [2, 128]; half the weights the kept LLM projections (every family but
the held-out ones), half a round grid (N a multiple of 256, log-uniform in [2048, 163840]; K
a multiple of 256, log-uniform in [1024, 32768]), within the shape caps. Left out: the held-out
weights (`shapes.held_out_weights`), the suite's weights (Llama-3-8B / 70B), every (M, N, K)
of the train and validation pools, of the validation folders and of the training folders.

    python benchmarks/problems/make_small_m_lists.py
"""

import functools
import math
import random
from pathlib import Path

from make_rr_decode_lists import shapes_in, suite_weights, validation_shapes

from tilepick.bench.shapes import (MODELS, held_out_weights, llm_projections,
                                   training_and_validation, within_caps, write_problem_file)
from tilepick.problem import GemmProblem

HERE = Path(__file__).parent
OUT = HERE / "train_rr_bf16_small_m.jsonl"
COUNT = 240
SEED = 33
TRAIN_FOLDERS = ("train_rr", "train_narrow", "train_rr_decode", "train_mid_m",
                 "train_fused_negative", "train_splitk_fused", "train_gemv_t", "train_big_retime")


@functools.cache
def excluded_shapes() -> frozenset[tuple[int, int, int]]:
    train, val = training_and_validation("bf16", "rr", 0, None, None)
    pools = {(p.m, p.n, p.k) for p in train + val}
    return frozenset(pools | validation_shapes() | shapes_in(TRAIN_FOLDERS))


def llm_weights() -> list[tuple[int, int]]:
    banned = held_out_weights() | suite_weights()
    got = {(p.n, p.k) for name in MODELS for p in llm_projections(MODELS[name])}
    return sorted((n, k) for n, k in got if n >= 1024 and k >= 1024 and (n, k) not in banned)


def log_uniform_multiple(rng: random.Random, lo: int, hi: int, step: int) -> int:
    return max(lo, round(math.exp(rng.uniform(math.log(lo), math.log(hi))) / step) * step)


def problems(count: int = COUNT, seed: int = SEED) -> list[GemmProblem]:
    rng = random.Random(seed)
    banned = held_out_weights() | suite_weights()
    skip = excluded_shapes()
    weights = llm_weights()
    seen: set[tuple[int, int, int]] = set()
    out = []
    while len(out) < count:
        m = round(math.exp(rng.uniform(math.log(2), math.log(128))))
        if len(out) % 2 == 0:
            n, k = rng.choice(weights)
        else:
            n = log_uniform_multiple(rng, 2048, 163840, 256)
            k = log_uniform_multiple(rng, 1024, 32768, 256)
        p = GemmProblem(m, n, k, dtype="bf16", layout="rr")
        if (n, k) in banned or (m, n, k) in skip or (m, n, k) in seen or not within_caps(p):
            continue
        seen.add((m, n, k))
        out.append(p)
    return out


def main():
    got = problems()
    write_problem_file(got, OUT)
    print(f"{OUT.name}: {len(got)} problems")


if __name__ == "__main__":
    main()
