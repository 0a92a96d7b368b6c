"""cuBLAS's split-K that leaves out the last K mod s terms: the rule on the measured cases, and
what each vendor family does about it (CPU: the split count cuBLAS would use is faked)."""

import pytest
import torch

from tilepick import solvers
from tilepick.dispatch.dispatcher import Dispatcher
from tilepick.dispatch.devices import SimulatedDevice
from tilepick.hardware import profile
from tilepick.problem import GemmProblem
from tilepick.solvers import repack, splitk_guard
from tilepick.solvers.base import ConfigInvalidError
from tilepick.solvers.cublaslt_lib import LtAlgo
from tilepick.tensors import make_inputs, reference, rel_error, tolerance


@pytest.mark.parametrize("k, splits, lost", [
    # inaccurate on the H200 (benchmarks/cublas_splitk_remainder_probe.py, session 52)
    (32024, 25, 24), (20488, 16, 8), (111240, 22, 8), (111240, 11, 8), (130600, 102, 40),
    (24200, 18, 8), (121352, 12, 8),
    # accurate there: K // s not a multiple of 64, K a multiple of s, or no split
    (100000, 16, 0), (130600, 63, 0), (121352, 15, 0), (32000, 25, 0), (32024, 1, 0),
    # no split: cuBLASLt's 2^32 - 1, or more splits than K terms (K // s = 0)
    (22784, 2**32 - 1, 0), (11, 16, 0)])
def test_dropped_terms_matches_the_measured_cases(k, splits, lost):
    assert splitk_guard.dropped_terms(k, splits) == lost


def test_the_switch_turns_the_rule_off(monkeypatch):
    p = GemmProblem(22, 16, 32024)
    assert "last 24 of the K = 32024" in splitk_guard.entry_refusal(p, 25)
    monkeypatch.setenv(splitk_guard.ENV_SWITCH, "0")
    assert splitk_guard.entry_refusal(p, 25) is None
    assert splitk_guard.cublas_splits(p) is None


def test_only_aligned_problems_are_refused(monkeypatch):
    """Misaligned problems run cuBLAS's other kernels, which keep every term: the dataset
    problems the arithmetic alone flags read rounding-level errors unless aligned."""
    monkeypatch.setattr(splitk_guard, "cublas_splits", lambda p: 132)
    cut = GemmProblem(135, 8, 101432, layout="rr")     # 101432 // 132 = 768 = 12 x 64
    assert splitk_guard.aligned(cut) and splitk_guard.cublas_refusal(cut) is not None
    for p in (GemmProblem(135, 8, 101432, layout="cc"),    # lda = M = 135: A misaligned
              GemmProblem(135, 3, 101432),                 # ldb = ldc = 3
              GemmProblem(135, 8, 101432, base_align=8),
              GemmProblem(135, 8, 101432, lda=101433)):
        assert not splitk_guard.aligned(p)
        assert splitk_guard.cublas_refusal(p) is None
        assert splitk_guard.entry_refusal(p, 132) is None


def test_cublas_splits_unknown_without_cublaslt():
    # this CPU cannot load cuBLASLt: nothing is refused, no repack padded further
    assert splitk_guard.cublas_splits(GemmProblem(22, 16, 32024)) is None
    assert splitk_guard.cublas_refusal(GemmProblem(22, 16, 32024)) is None


def test_cublas_refuses_a_problem_its_split_would_cut(monkeypatch):
    splits = {GemmProblem(22, 16, 32024).key(): 25}
    monkeypatch.setattr(splitk_guard, "cublas_splits", lambda p: splits.get(p.key(), 1))
    cublas = solvers.SOLVERS["gemm.cublas"]
    monkeypatch.setattr(cublas, "_refusals", {})

    class OnCuda:
        is_cuda = True
    p = GemmProblem(22, 16, 32024)
    with pytest.raises(ConfigInvalidError, match="25-way split-K .* last 24 of its K = 32024"):
        cublas.refuse_dropped_terms(p, OnCuda())
    config = solvers.KernelConfig.from_id("gemm.cublas")
    with pytest.raises(ConfigInvalidError):
        cublas.bind_new(p, config, OnCuda(), None)
    with pytest.raises(ConfigInvalidError):
        cublas.bind(p, config, OnCuda(), None, None)
    cublas.refuse_dropped_terms(GemmProblem(22, 16, 32000), OnCuda())   # K a multiple of s
    cublas.refuse_dropped_terms(p, torch.zeros(1))   # a CPU tensor: torch's CPU BLAS


def test_safe_padding_grows_k_until_the_dropped_terms_are_zeros():
    p = GemmProblem(22, 13, 32020)                   # rr: K padded to 32024 (16 bytes)
    q = repack.padded_problem(p)
    assert q.k == 32024
    # 25 splits drop the last 24 terms of 32024: only 4 of them are padding; 32032 // 25 =
    # 1281 is no multiple of 64
    assert splitk_guard.safe_padding(p, q, lambda x: 25).k == 32032
    # dropped terms that all fall in the padding are harmless: 32024 with 2 splits keeps all
    assert splitk_guard.safe_padding(p, q, lambda x: 8).k == 32024
    assert splitk_guard.safe_padding(p, q, lambda x: None) is q
    with pytest.raises(ValueError, match="no zero padding of K"):
        splitk_guard.safe_padding(p, q, lambda x: next(   # a split that always cuts data
            s for s in range(x.k // 65, x.k // 64 + 1)
            if splitk_guard.dropped_terms(x.k, s) > x.k - p.k))
    with pytest.raises(ValueError, match="K padded to"):
        repack.padded_problem(p, 32000)


def test_cublas_repack_pads_k_further_and_stays_exact(monkeypatch):
    """The repack hands cuBLAS K = 32032 (A and B copied with zeros past K = 32020) where the
    split cuBLAS would use for K = 32024 leaves out 24 terms, 20 of them data."""
    p = GemmProblem(22, 13, 32020, dtype="bf16")
    monkeypatch.setattr(splitk_guard, "cublas_splits", lambda q: 25)
    rep = solvers.SOLVERS["gemm.cublas_repack"]
    monkeypatch.setattr(rep, "_padded", {})
    seen = []
    real = torch.matmul

    def spy(a, b, out=None):
        if out is not None:
            seen.append((tuple(a.shape), tuple(b.shape)))
        return real(a, b) if out is None else real(a, b, out=out)
    monkeypatch.setattr(torch, "matmul", spy)
    inp = make_inputs(p)
    solvers.launch(p, "gemm.cublas_repack", inp.a, inp.b, inp.out)
    assert seen == [((22, 32032), (32032, 16))]
    assert rel_error(inp.out, reference(p, inp)) <= tolerance(p)


def test_cublaslt_entries_whose_split_cuts_k_are_refused():
    p = GemmProblem(22, 16, 32024)
    lt = solvers.SOLVERS["gemm.cublaslt"]
    cut = solvers.KernelConfig("gemm.cublaslt", entry="a66.t10.s35.k25.r2.w0.c3.i0.cl8")
    assert "25-way split-K entry leaves out the last 24" in (
        splitk_guard.entry_refusal(p, LtAlgo.parse(cut.entry).splitk))
    assert splitk_guard.entry_refusal(p, 8) is None
    # on this CPU the family is not applicable at all; that reason comes first
    assert lt.config_invalid_reason(p, cut, profile("h200")) == lt.not_applicable_reason(
        p, profile("h200"))


def test_the_dispatcher_never_offers_an_entry_whose_split_cuts_k(monkeypatch):
    p = GemmProblem(22, 16, 32024)
    names = ["a66.t10.s35.k25.r2.w0.c3.i0.cl8", "a66.t312.s35.k8.r2.w0.c3.i0.cl5"]
    lt = solvers.SOLVERS["gemm.cublaslt"]
    monkeypatch.setattr(type(lt), "is_applicable", lambda self, q, hw=None: True)
    monkeypatch.setattr(type(lt), "entries", lambda self, q: [
        (LtAlgo.parse(n), {"rank": i, "workspace": 0, "waves": 1.0})
        for i, n in enumerate(names)])
    offered = []

    class Ranker:
        def choose(self, problem, ents, sm_count):
            offered.extend(name.name for name, _ in ents)
            return [(name, 1.0) for name, _ in ents], True

    d = Dispatcher(mode="heuristic", device=SimulatedDevice(), predictor=None, user_db=None,
                   system_db=None, hw=profile("h200"), lt_ranker=Ranker())
    ids, ahead = d.lt_entries(p)
    assert offered == names[1:] and ids == [f"gemm.cublaslt.{names[1]}"] and ahead
