"""Kernel config ids, config spaces and the per-problem validity rules of every solver."""

import dataclasses
import random

import pytest

from tilepick import solvers
from tilepick.config import (FAMILIES, NAMED_VENDOR_FAMILIES, PARAM_NAMES, SPACES,
                             VENDOR_FAMILIES, ConfigError, KernelConfig, space)
from tilepick.hardware import PROFILES
from tilepick.problem import LAYOUTS, GemmProblem, cdiv
from tilepick.solvers import NotApplicableError
from tilepick.solvers.triton_gemm import MAX_ACC_REGS_PER_THREAD

TRITON_FAMILIES = sorted(SPACES)
ALL_FAMILIES = sorted(FAMILIES)
# families with a declared space (named vendor entries come from the library per problem)
STATIC_FAMILIES = sorted(set(FAMILIES) - set(NAMED_VENDOR_FAMILIES))

# -- ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize("config, config_id", [
    (KernelConfig("gemm.tma_persistent", 128, 256, 64, 8, 8, 3),
     "gemm.tma_persistent.m128n256k64.g8.w8.s3"),
    (KernelConfig("gemm.ptr", 16, 32, 64, 1, 4, 5), "gemm.ptr.m16n32k64.g1.w4.s5"),
    (KernelConfig("gemm.splitk", 16, 64, 64, 8, 4, 3, 2), "gemm.splitk.m16n64k64.g8.w4.s3.sk2"),
    (KernelConfig("gemm.splitk_atomic", 64, 256, 256, 8, 8, 4, 16),
     "gemm.splitk_atomic.m64n256k256.g8.w8.s4.sk16"),
    (KernelConfig("gemm.cublas"), "gemm.cublas"),
])
def test_id_format(config, config_id):
    assert config.id == config_id
    assert str(config) == config_id
    assert KernelConfig.from_id(config_id) == config


@pytest.mark.parametrize("family", STATIC_FAMILIES)
def test_every_space_config_round_trips(family):
    configs = space(family)
    assert configs
    for c in configs:
        assert c.family == family
        assert KernelConfig.from_id(c.id) == c
        assert c.id.startswith(family)


def test_space_sizes_are_the_declared_products():
    for family, grid in SPACES.items():
        expected = 1
        for p in PARAM_NAMES:
            expected *= len(grid[p])
        assert len(space(family)) == expected
        assert len(set(space(family))) == expected


def test_ids_unique_across_families():
    ids = [c.id for family in ALL_FAMILIES for c in space(family)]
    assert len(ids) == len(set(ids))
    # a family name is never the prefix that makes another family's id ambiguous
    for c_id in ids:
        assert KernelConfig.from_id(c_id).id == c_id


def test_registry_covers_every_family():
    assert set(solvers.SOLVERS) == set(FAMILIES)
    assert set(SPACES) | set(VENDOR_FAMILIES) | set(NAMED_VENDOR_FAMILIES) == set(FAMILIES)
    for family, solver in solvers.SOLVERS.items():
        assert solver.family == family


def test_params():
    c = KernelConfig.from_id("gemm.splitk.m32n128k256.g8.w8.s4.sk4")
    assert c.params == dict(block_m=32, block_n=128, block_k=256, group_m=8, num_warps=8,
                            num_stages=4, split_k=4)
    assert list(c.params) == list(PARAM_NAMES)
    assert KernelConfig.from_id("gemm.cublas").params == {}


def test_vendor_config():
    c = KernelConfig.from_id("gemm.cublas")
    assert c.is_vendor and c.id == "gemm.cublas" and c == KernelConfig("gemm.cublas")
    assert space("gemm.cublas") == [c]
    assert not KernelConfig.from_id("gemm.ptr.m16n16k32.g1.w4.s3").is_vendor
    with pytest.raises(ConfigError, match="no parameters"):
        KernelConfig("gemm.cublas", block_m=128)


@pytest.mark.parametrize("bad_id", [
    "",
    "gemm",
    "gemm.ptr",
    "gemm.ptr.m128n128k64.g8.w4",              # no stages
    "gemm.ptr.m128n128k64.g8.s3.w4",           # fields out of order
    "gemm.ptr.m128n128k64.g8.w4.s3 ",          # trailing space
    " gemm.ptr.m128n128k64.g8.w4.s3",
    "GEMM.PTR.m128n128k64.g8.w4.s3",
    "gemm.ptr.m-1n128k64.g8.w4.s3",
    "gemm.ptr.m0n128k64.g8.w4.s3",             # zero tile
    "gemm.ptr.m128n128k64.g8.w0.s3",
    "gemm.ptr.mxn128k64.g8.w4.s3",
    "gemm.ptr.m128n128k64.g8.w4.s3.sk2",        # split-K id for a non-split family
    "gemm.splitk.m16n64k64.g8.w4.s3",           # split family without a split
    "gemm.splitk.m16n64k64.g8.w4.s3.sk1",
    "gemm.foo.m16n64k64.g8.w4.s3",              # unknown family
    "gemm.cublas.m128n128k64.g8.w4.s3",         # vendor family with parameters
    "gemm.cublass",
    "cublas",
])
def test_malformed_ids(bad_id):
    with pytest.raises(ConfigError):
        KernelConfig.from_id(bad_id)


def test_config_error_is_value_error():
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(ValueError, match="unknown kernel family"):
        KernelConfig("gemm.nope", 16, 16, 16, 1, 4, 3)


def test_configs_are_ordered_and_hashable():
    cs = space("gemm.ptr")
    assert sorted(cs) == sorted(reversed(cs))
    assert len({c: 1 for c in cs}) == len(cs)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cs[0].block_m = 1


# -- per-problem config counts ---------------------------------------------------------------


def test_config_counts_large_bf16(hw):
    p = GemmProblem(8192, 8192, 8192)
    counts = {fam: len(s.configs(p, hw)) for fam, s in solvers.SOLVERS.items()}
    for fam in ("gemm.ptr", "gemm.tma", "gemm.tma_persistent"):
        assert counts[fam] > 0, fam
    assert counts["gemm.cublas"] == 1
    assert counts["gemm.tma_repack"] == 0      # operands are TMA-aligned already
    assert counts["gemm.splitk"] == counts["gemm.splitk_atomic"] == 0
    total = len(solvers.applicable_configs(p, hw))
    assert total == sum(counts.values())
    assert 300 <= total <= 5000


def test_applicable_configs_order_and_family_filter(hw):
    p = GemmProblem(16, 4096, 4096)
    everything = solvers.applicable_configs(p, hw)
    assert everything == [c for s in solvers.SOLVERS.values() for c in s.configs(p, hw)]
    assert everything == solvers.applicable_configs(p, hw)  # stable
    only = solvers.applicable_configs(p, hw, families=["gemm.tma", "gemm.cublas"])
    assert {c.family for c in only} == {"gemm.tma", "gemm.cublas"}
    assert only == [c for c in everything if c.family in ("gemm.tma", "gemm.cublas")]


# -- validity rules --------------------------------------------------------------------------

PROBLEMS = [
    GemmProblem(8192, 8192, 8192),
    GemmProblem(16, 4096, 4096),
    GemmProblem(1, 4096, 4096, dtype="fp8e4m3", layout="rc"),
    GemmProblem(4096, 64, 11008, dtype="fp32", tf32=True),
    GemmProblem(37, 45, 71, dtype="fp16", layout="cc"),
    GemmProblem(512, 512, 512, batch=64, dtype="bf16", layout="cr"),
    GemmProblem(1000, 1000, 1000, lda=1001, dtype="fp32"),
    GemmProblem(3, 2000, 60000, dtype="fp8e4m3"),
]


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.key())
@pytest.mark.parametrize("family", TRITON_FAMILIES)
def test_returned_configs_satisfy_rules(problem, family, hw):
    solver = solvers.SOLVERS[family]
    configs = solver.configs(problem, hw)
    space_ids = {c.id for c in space(family)}
    for c in configs:
        assert c.id in space_ids
        assert solver.smem_bytes(problem, c) <= hw.smem_per_block
        assert c.block_m * c.block_n // (32 * c.num_warps) <= MAX_ACC_REGS_PER_THREAD
        solver.check(problem, c, hw)  # does not raise
        if c.split_k > 1:
            assert cdiv(problem.k, c.block_k) >= c.split_k
            tiles = cdiv(problem.m, c.block_m) * cdiv(problem.n, c.block_n) * problem.batch
            assert tiles <= hw.sm_count
    # the rejected ones are rejected with a reason, and check() says so
    rejected = [c for c in space(family) if c not in set(configs)]
    for c in rejected[:: max(1, len(rejected) // 25)]:
        with pytest.raises(NotApplicableError) as exc:
            solver.check(problem, c, hw)
        assert c.id in str(exc.value) and problem.key() in str(exc.value)


def test_smem_rule_rejects_huge_tiles(hw):
    p = GemmProblem(8192, 8192, 8192)
    solver = solvers.SOLVERS["gemm.tma"]
    c = KernelConfig.from_id("gemm.tma.m256n128k128.g8.w8.s6")
    smem = solver.smem_bytes(p, c)
    # pipeline stages of A and B tiles + the staged epilogue tile
    assert smem == 6 * (256 + 128) * 128 * 2 + 256 * 128 * 2
    assert smem > hw.smem_per_block
    reason = solver.config_invalid_reason(p, c, hw)
    assert "shared memory" in reason and str(smem) in reason
    assert c not in solver.configs(p, hw)
    # fp8 halves the operand bytes: same tile shape, fewer stages fits
    ptr = solvers.SOLVERS["gemm.ptr"]
    c2 = KernelConfig.from_id("gemm.ptr.m128n128k64.g8.w4.s3")
    assert ptr.smem_bytes(GemmProblem(64, 64, 64, dtype="fp8e4m3"), c2) * 2 == ptr.smem_bytes(
        GemmProblem(64, 64, 64, dtype="fp16"), c2)


def test_register_and_warp_rules(hw):
    p = GemmProblem(8192, 8192, 8192)
    ptr = solvers.SOLVERS["gemm.ptr"]
    reason = ptr.config_invalid_reason(p, KernelConfig.from_id("gemm.ptr.m256n256k32.g8.w4.s3"), hw)
    assert "registers" in reason
    reason = ptr.config_invalid_reason(p, KernelConfig.from_id("gemm.ptr.m32n32k32.g8.w8.s3"), hw)
    assert "8 warps" in reason


def test_tiles_not_larger_than_the_problem(hw):
    p = GemmProblem(20, 8192, 8192)
    ms = {c.block_m for c in solvers.SOLVERS["gemm.ptr"].configs(p, hw)}
    assert ms == {16, 32}
    ks = {c.block_k for c in solvers.SOLVERS["gemm.ptr"].configs(GemmProblem(256, 256, 8), hw)}
    assert ks == {32}


def test_split_k_only_for_under_occupied_problems(hw):
    for fam in ("gemm.splitk", "gemm.splitk_atomic"):
        solver = solvers.SOLVERS[fam]
        assert solver.configs(GemmProblem(8192, 8192, 8192), hw) == []
        small = solver.configs(GemmProblem(16, 4096, 4096), hw)
        assert small and all(c.split_k > 1 for c in small)
        assert {c.split_k for c in small} == {2, 4, 8, 16}
        # K with fewer blocks than splits: only small splits remain
        few = solver.configs(GemmProblem(16, 4096, 192), hw)
        assert few and max(c.split_k for c in few) <= 3


def test_tma_not_applicable_to_odd_leading_dimension(hw):
    p = GemmProblem(128, 128, 128, lda=129)
    for fam in ("gemm.tma", "gemm.tma_persistent"):
        solver = solvers.SOLVERS[fam]
        reason = solver.not_applicable_reason(p, hw)
        assert reason and "16" in reason and "lda=129" in reason
        assert not solver.is_applicable(p, hw)
        assert solver.configs(p, hw) == []
        assert solver.default_config(p, hw) is None
    assert solvers.SOLVERS["gemm.tma_repack"].configs(p, hw)
    unaligned = GemmProblem(128, 128, 128, base_align=8)
    assert "16" in solvers.SOLVERS["gemm.tma"].not_applicable_reason(unaligned, hw)


def _random_problems(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        dtype = rng.choice(["fp16", "bf16", "fp32", "fp8e4m3"])
        layout = rng.choice(LAYOUTS)
        m, n_, k = (rng.choice([1, 8, 16, 24, 33, 64, 100, 128, 1000, 4096]) for _ in range(3))
        probe = GemmProblem(m, n_, k, layout=layout)
        kw = {name: getattr(probe, name) + rng.choice([0, 0, 0, 1, 2, 8, 16])
              for name in ("lda", "ldb", "ldc")}
        out.append(GemmProblem(m, n_, k, batch=rng.choice([1, 1, 4]), dtype=dtype, layout=layout,
                               base_align=rng.choice([16, 16, 16, 8, 4]), **kw))
    return out


@pytest.mark.parametrize("arch", sorted(PROFILES))
def test_tma_repack_applicable_exactly_when_tma_is_not(arch):
    hw = PROFILES[arch]
    tma, repack = solvers.SOLVERS["gemm.tma"], solvers.SOLVERS["gemm.tma_repack"]
    both_kinds = set()
    for p in _random_problems(400, seed=7):
        t, r = tma.is_applicable(p, hw), repack.is_applicable(p, hw)
        assert t != r, p.key()
        assert solvers.SOLVERS["gemm.tma_persistent"].is_applicable(p, hw) == t
        both_kinds.add(t)
        if r:
            # repack serves the problem with padded, 16-byte aligned copies
            q = repack.aligned_problem(p)
            assert tma.not_applicable_reason(q, hw) is None
            assert q.lda >= p.lda and q.ldb >= p.ldb and q.ldc >= p.ldc
            assert repack.workspace(p, KernelConfig("gemm.tma_repack", 64, 64, 32, 1, 4, 2)) > 0
    assert both_kinds == {True, False}


def test_no_tma_family_without_tma_hardware(hw):
    ampere = dataclasses.replace(hw, name="A100", arch="a100", capability=(8, 0))
    assert not ampere.has_tma
    for p in (GemmProblem(128, 128, 128), GemmProblem(128, 128, 128, lda=129)):
        for fam in ("gemm.tma", "gemm.tma_persistent", "gemm.tma_repack"):
            reason = solvers.SOLVERS[fam].not_applicable_reason(p, ampere)
            assert reason and "TMA" in reason
        assert solvers.SOLVERS["gemm.ptr"].configs(p, ampere)


def test_int32_offset_limit(hw):
    p = GemmProblem(65536, 64, 65536)  # A has 2**32 elements
    for fam in TRITON_FAMILIES:
        reason = solvers.SOLVERS[fam].not_applicable_reason(p, hw)
        assert reason and "int32" in reason, fam
    assert solvers.SOLVERS["gemm.cublas"].is_applicable(p, hw)


@pytest.mark.parametrize("family", ["gemm.tma", "gemm.tma_persistent", "gemm.splitk",
                                    "gemm.splitk_atomic"])
def test_small_n_has_configs(family, hw):
    solver = solvers.SOLVERS[family]
    assert solver.configs(GemmProblem(64, 48, 8192), hw)          # N = 48: served
    p = GemmProblem(64, 32, 8192)                                  # N = 32: TMA-legal, few tiles
    assert solver.not_applicable_reason(p, hw) is None
    assert solver.configs(p, hw)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cublas_fp8_only_rc(layout, hw):
    cublas = solvers.SOLVERS["gemm.cublas"]
    p = GemmProblem(64, 64, 64, dtype="fp8e4m3", layout=layout)
    assert cublas.is_applicable(p, hw) == (layout == "rc")
    if layout != "rc":
        assert "rc" in cublas.not_applicable_reason(p, hw)
    for dtype in ("fp16", "bf16", "fp32"):
        assert cublas.configs(GemmProblem(64, 64, 64, dtype=dtype, layout=layout), hw) == [
            KernelConfig("gemm.cublas")]


def test_cublas_fp8_other_limits(hw):
    cublas = solvers.SOLVERS["gemm.cublas"]
    assert "batched" in cublas.not_applicable_reason(
        GemmProblem(64, 64, 64, batch=2, dtype="fp8e4m3", layout="rc"), hw)
    assert "16" in cublas.not_applicable_reason(
        GemmProblem(64, 64, 72 + 1, dtype="fp8e4m3", layout="rc"), hw)


def test_check_rejects_config_of_another_family(hw):
    p = GemmProblem(256, 256, 256)
    c = KernelConfig.from_id("gemm.ptr.m64n64k64.g8.w4.s3")
    with pytest.raises(NotApplicableError, match="not of family gemm.tma"):
        solvers.SOLVERS["gemm.tma"].check(p, c, hw)
    assert solvers.solver_for(c) is solvers.SOLVERS["gemm.ptr"]
    assert solvers.solver_for("gemm.cublas") is solvers.SOLVERS["gemm.cublas"]


@pytest.mark.parametrize("problem", PROBLEMS[:6], ids=lambda p: p.key())
def test_default_config_is_valid(problem, hw):
    for fam, solver in solvers.SOLVERS.items():
        d = solver.default_config(problem, hw)
        configs = solver.configs(problem, hw)
        assert (d is None) == (not configs)
        if d is not None:
            assert d in configs


def test_workspace_sizes():
    p = GemmProblem(16, 256, 4096, batch=2)
    sk = KernelConfig.from_id("gemm.splitk.m16n64k64.g8.w4.s3.sk4")
    ska = KernelConfig.from_id("gemm.splitk_atomic.m16n64k64.g8.w4.s3.sk4")
    assert solvers.SOLVERS["gemm.splitk"].workspace(p, sk) == 4 * 4 * 2 * 16 * 256
    assert solvers.SOLVERS["gemm.splitk_atomic"].workspace(p, ska) == 4 * 2 * 16 * 256
    assert solvers.SOLVERS["gemm.ptr"].workspace(p, KernelConfig.from_id("gemm.ptr.m16n64k64.g8.w4.s3")) == 0
    # repack copies only the misaligned operand: A (rr, lda 4097 -> padded to 4104)
    q = GemmProblem(16, 256, 4096, lda=4097)
    rc = KernelConfig.from_id("gemm.tma_repack.m64n64k64.g8.w4.s3")
    assert solvers.SOLVERS["gemm.tma_repack"].workspace(q, rc) == 16 * 4104 * 2


def test_launch_plans(hw):
    ptr = solvers.SOLVERS["gemm.splitk"]
    p = GemmProblem(40, 300, 4096, batch=3)
    c = KernelConfig.from_id("gemm.splitk.m16n64k64.g8.w4.s3.sk4")
    plan = ptr.plan(p, c)
    assert plan.grid == (cdiv(40, 16) * cdiv(300, 64), 4, 3)
    kw = plan.kwargs
    # the split count is the grid's second dimension only (a run-time fact, not a constexpr)
    assert (kw["BLOCK_M"], kw["SPLIT_MODE"], kw["num_warps"]) == (16, 1, 4) and "SPLIT_K" not in kw
    assert kw["A_ROW"] and kw["B_ROW"] and kw["EVEN_K"]
    assert ptr.plan(p, c) is plan  # cached
    pers = solvers.SOLVERS["gemm.tma_persistent"]
    big = GemmProblem(8192, 8192, 8192)
    pc = KernelConfig.from_id("gemm.tma_persistent.m128n128k64.g8.w4.s3")
    assert pers.plan(big, pc).grid == (hw.sm_count,)
    tiny = GemmProblem(64, 128, 64)
    assert pers.plan(tiny, pc).grid == (1,)


def test_fp8_wgmma_configs_invalid_past_the_accumulation_limit(hw):
    """Measured on an H200: fp8 block_m >= 64 (wgmma) configs missed the tolerance with 512K
    and 1M K per program; block_m 16/32 and enough split-K stay valid."""
    from tilepick.solvers.triton_gemm import FP8_WGMMA_MAX_K

    p = GemmProblem(64, 1, 1048576, dtype="fp8e4m3", layout="rc")
    ids = {c.id for c in solvers.applicable_configs(p, hw)}
    for cid in ("gemm.ptr.m64n16k32.g1.w4.s5", "gemm.splitk.m64n64k128.g8.w4.s4.sk2",
                "gemm.tma_repack.m64n64k64.g8.w4.s3"):
        assert cid not in ids
        with pytest.raises(solvers.NotApplicableError, match="reduced-precision accumulator"):
            solvers.SOLVERS[cid.split(".m")[0]].check(p, KernelConfig.from_id(cid), hw)
    for cid in ("gemm.ptr.m32n16k64.g1.w4.s5", "gemm.splitk.m64n64k128.g8.w4.s3.sk16",
                "gemm.splitk.m16n64k128.g8.w4.s4.sk2"):
        assert cid in ids          # 1M / 16 = 64K per program; block_m 16: mma.sync
    # the limit is K per program, and only fp8
    at = GemmProblem(64, 1, FP8_WGMMA_MAX_K, dtype="fp8e4m3", layout="rc")
    assert "gemm.ptr.m64n16k32.g1.w4.s5" in {c.id for c in solvers.applicable_configs(at, hw)}
    bf16 = GemmProblem(64, 1, 1048576, dtype="bf16", layout="rc")
    assert "gemm.ptr.m64n16k32.g1.w4.s5" in {c.id for c in solvers.applicable_configs(bf16, hw)}


def test_cublas_repack_serves_misaligned_problems_only(hw):
    rep = solvers.SOLVERS["gemm.cublas_repack"]
    assert KernelConfig.from_id("gemm.cublas_repack").is_vendor
    aligned = GemmProblem(64, 64, 64, layout="cc")
    assert "aligned" in rep.not_applicable_reason(aligned, hw)
    assert "fp8" in rep.not_applicable_reason(
        GemmProblem(63, 64, 64, dtype="fp8e4m3", layout="rc", lda=65), hw)
    odd_m_cc = GemmProblem(1169, 64, 128, layout="cc")            # lda = M = 1169: cuBLAS's align1
    assert rep.configs(odd_m_cc, hw) == [KernelConfig("gemm.cublas_repack")]
    assert rep.is_applicable(GemmProblem(64, 64, 64, base_align=8), hw)
    # workspace: A (column-major) and C padded to M = 1176 rows (16 bytes); B is aligned
    assert rep.workspace(odd_m_cc, KernelConfig("gemm.cublas_repack")) == 1176 * (128 + 64) * 2
    both = GemmProblem(3, 5, 7, batch=2, dtype="fp32")   # K and N padded to 8; M is not contiguous
    assert rep.workspace(both, KernelConfig("gemm.cublas_repack")) == 2 * 4 * (3 * 8 + 8 * 8 + 3 * 8)
    # aligned contiguous extents with only a padded leading dimension: cuBLAS takes it as is
    assert not rep.is_applicable(GemmProblem(48, 64, 64, lda=80, ldb=96, ldc=80), hw)
    # an odd M of a column-major A with an aligned lda still takes cuBLAS's align1 path
    assert rep.is_applicable(GemmProblem(1169, 64, 128, layout="cc", lda=1176), hw)


def test_cublas_repack_hands_cublas_aligned_strides(monkeypatch):
    """The point of the family: torch.matmul sees 16-byte leading dimensions and bases."""
    import torch

    from tilepick.tensors import make_inputs, reference, rel_error, tolerance

    seen = []
    real = torch.matmul

    def spy(a, b, out=None):
        if out is None:   # the float64 reference
            return real(a, b)
        seen.append(((tuple(a.shape), tuple(b.shape), tuple(out.shape)), a.stride(), b.stride(),
                     out.stride(), a.data_ptr() % 16,
                     b.data_ptr() % 16, out.data_ptr() % 16))
        return real(a, b, out=out)
    monkeypatch.setattr(torch, "matmul", spy)
    p = GemmProblem(37, 45, 71, layout="cc", ldc=47, base_align=2, dtype="fp16")
    inp = make_inputs(p)
    solvers.launch(p, "gemm.cublas_repack", inp.a, inp.b, inp.out)
    (shapes, sa, sb, sc, *bases), = seen
    # M 37 -> 40 (A column-major), K 71 -> 72 (B column-major), N 45 -> 48 (C); major orders kept
    assert shapes == ((40, 72), (72, 48), (40, 48))
    assert sa == (1, 40) and sb == (1, 72) and sc == (48, 1)
    assert bases == [0, 0, 0]
    assert rel_error(inp.out, reference(p, inp)) <= tolerance(p)
