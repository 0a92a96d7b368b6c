"""The untrained baselines' mappings: the Triton tutorial's configs onto tilepick ids, and
nvMatmulHeuristics' configs, layouts and precisions onto tilepick's space (hand-checked)."""

import pytest

from tilepick import config
from tilepick.config import KernelConfig
from tilepick.model import baselines, nvmh
from tilepick.model.nvmh import NvmhConfig
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS


def test_tutorial_configs_map_onto_the_pointer_space():
    ids = config.tutorial_ids("bf16")
    assert ids == (
        "gemm.ptr.m128n256k64.g8.w8.s3", "gemm.ptr.m64n256k32.g8.w4.s4",
        "gemm.ptr.m128n128k32.g8.w4.s4", "gemm.ptr.m128n64k32.g8.w4.s4",
        "gemm.ptr.m64n128k32.g8.w4.s4", "gemm.ptr.m128n32k32.g8.w4.s4",
        # the tutorial's num_warps=2 is not in the space: the nearest declared value is 4
        "gemm.ptr.m64n32k32.g8.w4.s5", "gemm.ptr.m32n64k32.g8.w4.s5")
    assert config.tutorial_ids("fp16") == ids
    fp8 = config.tutorial_ids("fp8e4m3")
    assert len(fp8) == 8 and fp8[0] == "gemm.ptr.m128n256k128.g8.w8.s3"
    for dtype, table in (("bf16", ids), ("fp8e4m3", fp8)):   # all valid for a large problem
        valid = set(SOLVERS["gemm.ptr"].configs(GemmProblem(4096, 4096, 4096, dtype=dtype)))
        assert {KernelConfig.from_id(cid) for cid in table} <= valid


def test_tutorial_candidates_follow_the_validity_rules(hw):
    # M=16: every tile of the list is taller than the problem needs except the 32-row one,
    # which the 'larger than needed' floor (the family's smallest tile, 16) also refuses
    assert baselines.tutorial_valid_ids(GemmProblem(16, 4096, 4096), hw) == []
    assert baselines.tutorial_valid_ids(GemmProblem(32, 4096, 4096), hw) == [
        "gemm.ptr.m32n64k32.g8.w4.s5"]
    assert len(baselines.tutorial_valid_ids(GemmProblem(4096, 4096, 4096), hw)) == 8


def test_nearest_in_space_snaps_each_parameter():
    c = config.nearest_in_space("gemm.tma", block_m=32, block_n=100, block_k=512,
                                   group_m=4, num_warps=2, num_stages=8, split_k=1)
    assert c.id == "gemm.tma.m64n128k128.g8.w4.s6"   # group 4: log2 distance 1 to 8, 2 to 1


def test_nvmh_projection_hand_checked(hw):
    # 4096^3: a 256x128x64 tile, 2x2 warps of 64x64 -> 8 warps... of (256/64)*(128/64) = 8;
    # 4 stages need 4*(256+128)*64*2 B + the 256x128 bf16 epilogue tile = 256 KiB > 227 KiB,
    # and so do 5 and 6: the nearest valid stage count is 3; swizzle 8 -> GROUP_M 8.
    p = GemmProblem(4096, 4096, 4096)
    got = nvmh.project(p, NvmhConfig(256, 128, 64, 64, 64, stages=4, swizzle=8), hw)
    assert got.id == "gemm.tma.m256n128k64.g8.w8.s3"
    # split-K 2 -> gemm.splitk; block_m 64 is larger than M=16 needs, 16 is the nearest valid
    p = GemmProblem(16, 4096, 4096)
    got = nvmh.project(p, NvmhConfig(64, 64, 64, 32, 32, stages=8, split_k=2), hw)
    assert got.id == "gemm.splitk.m16n64k64.g8.w4.s4.sk2"
    # a 16x32 tile: the TMA family's smallest tile is 64, the pointer kernel fits exactly
    got = nvmh.project(p, NvmhConfig(16, 32, 64, 16, 8, stages=8), hw)
    assert got.id == "gemm.ptr.m16n32k64.g1.w4.s5"
    # odd leading dimension: no TMA, the pointer kernel serves it
    p = GemmProblem(1000, 1000, 1000, lda=1001)
    got = nvmh.project(p, NvmhConfig(128, 128, 64, 64, 64, stages=4, swizzle=8), hw)
    assert got.id == "gemm.ptr.m128n128k64.g8.w4.s4"
    # split-K where every split-K config is invalid (the output tiles fill the GPU): dropped
    p = GemmProblem(4096, 4096, 4096)
    got = nvmh.project(p, NvmhConfig(128, 128, 64, 64, 64, stages=3, split_k=4), hw)
    assert got.family == "gemm.tma" and got.split_k == 1


def test_nvmh_precision_strings():
    assert nvmh.precision(GemmProblem(8, 8, 8, dtype="bf16")) == "TST"  # T = bfloat16
    assert nvmh.precision(GemmProblem(8, 8, 8, dtype="fp16")) == "HSH"
    assert nvmh.precision(GemmProblem(16, 16, 16, dtype="fp8e4m3")) == "QQTST"
    assert nvmh.precision(GemmProblem(8, 8, 8, dtype="fp32", tf32=True)) == "SFS"


needs_nvmh = pytest.mark.skipif(nvmh.module() is None, reason="nvMatmulHeuristics missing")


@needs_nvmh
def test_nvmh_layouts_mean_what_tilepick_means():
    """Known case: a linear layer, x @ W.T with W stored N x K, is tilepick's ``rc``; the
    library calls it NT (B transposed while loading, row-major C)."""
    nv = nvmh.module()
    h = nv.NvMatmulHeuristicsInterface()
    for code, (ta, tb) in {"rr": (False, False), "rc": (False, True), "cr": (True, False),
                           "cc": (True, True)}.items():
        lay = nvmh.layout(code)
        assert lay == nv.boolsToNvMatmulHeuristicsLayout(ta, tb)
        g = h.makeNvMatmulHeuristicsProblem(64, 128, 256, lay).asGemmProblem()
        assert (g.transA, g.transB) == (ta, tb)
    assert nvmh.layout("rc").name == "NT_ROW_MAJOR"


@needs_nvmh
def test_nvmh_ranked_ids_are_valid_and_cached(hw):
    p = GemmProblem(1024, 4096, 4096, layout="rc")
    ids = nvmh.ranked_ids(p, "h200")
    assert 1 <= len(ids) <= 8 and len(set(ids)) == len(ids)
    valid = {c.id for c in SOLVERS["gemm.tma"].configs(p, hw) + SOLVERS["gemm.ptr"].configs(p, hw)
             + SOLVERS["gemm.splitk"].configs(p, hw)}
    assert set(ids) <= valid
    assert nvmh.ranked_ids(p, "h200") is ids


def test_nvmh_unavailable_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(nvmh, "module", lambda: None)
    assert "not importable" in nvmh.unavailable_reason("h200")
    assert "arch" in nvmh.unavailable_reason("a100")
