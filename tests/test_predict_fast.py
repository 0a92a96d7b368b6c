"""The prediction path's fast equivalents give exactly what their straightforward references
give (bit for bit): the candidate table's fused features (problem and interaction kinds)
against the feature table's formulas one by one, its cached valid index against the validity
mask, repack.cublas_aligned against the padded problem, and the predictor's ranking against
the same ranking through the table's reference paths (``valid_mask``, ``features_reference``).
``benchmarks/rank_parity.py`` checks whole rankings over ~1,500 problems."""

from pathlib import Path

import numpy as np
import pytest

from tilepick.features import candidate_table
from tilepick.features import candidates as cand
from tilepick.model import Predictor
from tilepick.problem import GemmProblem

MODEL = Path(__file__).resolve().parent.parent / "models" / "gemm_bf16_h200"

PROBLEMS = [
    GemmProblem(1, 4096, 4096), GemmProblem(7, 8192, 1000, layout="rc"),
    GemmProblem(16, 28672, 4096, layout="cc"), GemmProblem(333, 777, 4099, layout="cr"),
    GemmProblem(4096, 4096, 4096), GemmProblem(8191, 127, 65, layout="rc"),
    GemmProblem(96, 80, 64, batch=3), GemmProblem(1000, 1000, 1000, lda=1003),
    GemmProblem(17, 33, 65, layout="rc", base_align=4), GemmProblem(1, 1, 1),
    GemmProblem(2, 16384, 131072, layout="cc", ldc=16392, base_align=8),
    GemmProblem(64, 64, 64, dtype="fp8e4m3", layout="rc"),
    GemmProblem(5, 3000, 7000, dtype="fp16", layout="rr", ldb=3001),
]


@pytest.fixture(scope="module")
def pred():
    if not (MODEL / "predictor.json").is_file():
        pytest.skip("shipped bf16 model not present")
    return Predictor(MODEL)


def test_fast_paths_cover_the_table():
    assert cand._FAST_INTERACTIONS, "the interaction features changed: update _interactions"
    assert cand._FAST_PROBLEM, "the problem features changed: update _problem_features"


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.key())
def test_fast_features_equal_the_formulas(hw, problem):
    table = candidate_table(problem, hw)   # the whole space: every family
    index = np.flatnonzero(table.valid_mask(problem))
    np.testing.assert_array_equal(table.features(problem, index),
                                  table.features_reference(problem, index))


def test_fast_features_on_the_models_catalog(pred):
    for p in PROBLEMS:
        if p.dtype_token != pred.dtype:
            continue
        table = pred._table(p)
        index = np.flatnonzero(table.valid_mask(p))
        np.testing.assert_array_equal(table.features(p, index),
                                      table.features_reference(p, index), err_msg=p.key())


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.key())
def test_valid_index_equals_the_mask(hw, problem):
    table = candidate_table(problem, hw)
    for _ in range(2):   # a new key, then the cached one
        np.testing.assert_array_equal(table.valid_index(problem),
                                      np.flatnonzero(table.valid_mask(problem)))


def test_rank_new_equals_the_reference(pred):
    problems = [p for p in PROBLEMS if p.dtype_token == pred.dtype]
    problems += [GemmProblem(m, n, k, layout=lay) for m, n, k in
                 [(1, 8192, 8192), (3, 5, 7), (511, 512, 513), (2048, 64, 16384)]
                 for lay in pred.layouts]
    fast = [pred._rank_new(p) for p in problems]
    with pytest.MonkeyPatch.context() as mp:
        for p in problems:   # one table per layout: patch each the ranking uses
            table = pred._table(p)
            mp.setattr(table, "valid_index",
                       lambda q, t=table: np.flatnonzero(t.valid_mask(q)))
            mp.setattr(table, "features", table.features_reference)
        slow = [pred._rank_new(p) for p in problems]
    for p, a, b in zip(problems, fast, slow):
        assert a == b, p.key()


def test_cublas_aligned_equals_the_padded_problem():
    """repack.cublas_aligned answers without building the padded problem: the same as
    asking padded_copies of it, over layouts, dtypes, odd sizes, padded strides, bases."""
    from tilepick.solvers import repack

    seen = {True: 0, False: 0}
    for dtype in ("bf16", "fp16", "fp8e4m3", "fp32"):
        for layout in ("rr", "rc", "cr", "cc"):
            for m, n, k in [(1, 1, 1), (8, 16, 32), (7, 4096, 4096), (64, 63, 128),
                            (1024, 1000, 1001), (33, 8, 16), (16, 16, 24)]:
                for pad, align in [(0, 16), (1, 16), (8, 16), (0, 8), (16, 2)]:
                    q = GemmProblem(m, n, k, dtype=dtype, layout=layout, base_align=align)
                    if pad:
                        q = q.replace(lda=q.lda + pad, ldb=q.ldb + pad, ldc=q.ldc + pad)
                    want = not any(repack.padded_copies(q, repack.padded_problem(q)))
                    assert repack.cublas_aligned.__wrapped__(q) == want, q.key()
                    seen[want] += 1
    assert seen[True] and seen[False]


def test_gate_raw_is_the_call_the_ranking_makes(pred):
    """gate_raw > 0 exactly where the ranking puts cuBLAS first (the gate moves it to first
    place or out of it; the analyses that print gate_raw read it as that call)."""
    problems = [GemmProblem(m, n, k, layout=lay) for m, n, k in
                [(1, 4096, 4096), (1, 57344, 8192), (16, 8192, 8192), (128, 4096, 4096),
                 (4096, 4096, 4096), (1000, 1000, 1000)] for lay in pred.layouts]
    for p in problems:
        ranked = pred.rank(p, 2)
        if len(ranked) < 2 or "gemm.cublas" not in [c for c, _, _ in pred.rank(p)]:
            continue
        assert (pred.gate_raw(p) > 0) == (ranked[0][0] == "gemm.cublas"), p.key()
    with pytest.raises(ValueError, match=r"ranks bf16 problems, not fp16 \(gemm.fp16.rr.m1.n4096"):
        pred.gate_raw(GemmProblem(1, 4096, 4096, dtype="fp16"))
