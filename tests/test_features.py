"""The feature table: formulas on hand-computed cases, batch-vs-single parity, the generated
spec, and the fast candidate mask against the solvers' own applicable_configs."""

import math

import numpy as np
import pandas as pd
import pytest

from tilepick import solvers
from tilepick.config import KernelConfig
from tilepick.data.schema import config_fields, problem_fields
from tilepick.features import (FEATURE_INDEX, FEATURE_NAMES, FEATURES, KINDS, FeatureSchemaError,
                               FeatureSpec, candidate_ids, candidate_table, current_spec,
                               frame_matrix)
from tilepick.features.candidates import space_configs
from tilepick.problem import GemmProblem

SM = 132


def frame(pairs) -> pd.DataFrame:
    """A dataset-like frame of (problem, config) rows."""
    return pd.DataFrame([{**problem_fields(p), **config_fields(c)} for p, c in pairs])


def feats(problem, config_id, hw):
    x = frame_matrix(frame([(problem, KernelConfig.from_id(config_id))]), hw)
    return {name: x[0, i] for i, name in enumerate(FEATURE_NAMES)}


# -- formulas on hand-computed cases ----------------------------------------------------------


def test_m1_tiles_waves_and_efficiency(hw):
    f = feats(GemmProblem(1, 4096, 4096), "gemm.ptr.m16n128k64.g8.w4.s3", hw)
    assert f["tiles_m"] == 1 and f["eff_m"] == pytest.approx(1 / 16)
    assert f["tiles_n"] == 32 and f["eff_n"] == 1.0
    assert f["k_blocks"] == 64 and f["eff_k"] == 1.0 and f["k_iters"] == 64
    assert f["tile_eff"] == pytest.approx(1 / 16)
    assert f["output_tiles"] == 32 and f["programs"] == 32
    assert f["waves"] == pytest.approx(32 / SM)
    assert f["sm_util"] == pytest.approx(32 / SM)        # one partial wave
    assert f["log2_m"] == 0.0 and f["m"] == 1.0
    assert f["pipeline_fill"] == 1.0                     # 64 K steps >> 3 stages


def test_primes_pad_every_dimension(hw):
    f = feats(GemmProblem(127, 1009, 4099), "gemm.tma.m64n256k64.g8.w8.s3", hw)
    assert (f["tiles_m"], f["tiles_n"], f["k_blocks"]) == (2, 4, 65)
    assert f["eff_m"] == pytest.approx(127 / 128)
    assert f["eff_n"] == pytest.approx(1009 / 1024)
    assert f["eff_k"] == pytest.approx(4099 / (65 * 64))
    assert f["tile_eff"] == pytest.approx(127 / 128 * 1009 / 1024 * 4099 / 4160)
    assert f["pow2div_m"] == 0 and f["pow2div_k"] == 0    # odd sizes
    assert f["k_mod_64_zero"] == 0
    assert f["align_a"] == 2 and f["align_b"] == 2         # odd lds: 2-byte bf16 elements only


def test_exact_multiples_and_waves(hw):
    f = feats(GemmProblem(4096, 4096, 4096), "gemm.tma_persistent.m128n256k64.g8.w8.s3", hw)
    assert f["eff_m"] == f["eff_n"] == f["eff_k"] == f["tile_eff"] == 1.0
    assert f["output_tiles"] == 32 * 16
    assert f["waves"] == pytest.approx(512 / SM)
    assert f["sm_util"] == pytest.approx(512 / (4 * SM))  # 4 waves, the last one partial
    assert f["is_persistent"] == 1 and f["is_tma"] == 1
    assert f["k_mod_64_zero"] == 1 and f["pow2div_k"] == 10   # capped at 1024
    assert f["align_a"] == f["align_b"] == f["align_c"] == 16
    assert f["tma_aligned"] == 1
    assert f["arith_intensity"] == pytest.approx(GemmProblem(4096, 4096, 4096).flops
                                                 / GemmProblem(4096, 4096, 4096).min_bytes)


def test_split_k_programs_and_workspace(hw):
    f = feats(GemmProblem(16, 4096, 8192), "gemm.splitk.m16n128k128.g8.w4.s3.sk4", hw)
    assert f["output_tiles"] == 32 and f["programs"] == 128
    assert f["k_blocks"] == 64 and f["k_iters"] == 16
    assert f["split_k"] == 4 and f["is_splitk"] == 1 and f["launches"] == 2
    assert f["log2_splitk_ws_ratio"] > 0


def test_load_instructions_per_thread(hw):
    """Pointer kernels load 16-byte vectors from 16-byte-aligned operands and single elements
    otherwise; TMA and vendor rows issue no such loads."""
    cid = "gemm.ptr.m16n128k128.g1.w4.s5"
    aligned = feats(GemmProblem(3, 13648, 12672, layout="rc"), cid, hw)
    # A 16x128 and B 128x128 tiles of bf16, 8 per vector, over 128 threads
    assert aligned["log2_load_instrs"] == pytest.approx(math.log2(1 + (16 * 128 / 8 + 128 * 128 / 8) / 128))
    odd_k = feats(GemmProblem(3, 13650, 12674, layout="rc"), cid, hw)   # K rows 4-byte aligned
    assert odd_k["log2_load_instrs"] == pytest.approx(math.log2(1 + (16 * 128 + 128 * 128) / 128))
    assert feats(GemmProblem(3, 13650, 12674, layout="rc"), "gemm.cublas", hw)["log2_load_instrs"] == 0
    tma = feats(GemmProblem(64, 4096, 4096), "gemm.tma.m64n256k64.g8.w8.s3", hw)
    assert tma["log2_load_instrs"] == 0


def test_vendor_rows_have_no_tile_features(hw):
    f = feats(GemmProblem(128, 128, 128), "gemm.cublas", hw)
    for name in ("block_m", "tiles_m", "eff_m", "tile_eff", "smem_kb", "occupancy", "sm_util",
                 "log2_estimate_us"):
        assert math.isnan(f[name]), name
    assert f["is_vendor"] == 1 and f["m"] == 128 and f["log2_roofline_us"] == pytest.approx(
        math.log2(max(GemmProblem(128, 128, 128).flops / 989e12,
                      GemmProblem(128, 128, 128).min_bytes / 4800e9) * 1e6))


def test_alignment_matches_problem_operand_align(hw):
    problems = [GemmProblem(1000, 1001, 1003), GemmProblem(64, 96, 100, layout="cc", lda=104),
                GemmProblem(17, 33, 65, layout="rc", base_align=4),
                GemmProblem(8, 8, 8, dtype="fp32", layout="cr", ldb=10)]
    for p in problems:
        f = feats(p, "gemm.ptr.m16n16k32.g1.w4.s3", hw)
        assert (f["align_a"], f["align_b"], f["align_c"]) == (
            p.operand_align("a"), p.operand_align("b"), p.operand_align("c")), p.key()


@pytest.mark.parametrize("dtype", ["bf16", "fp32", "fp8e4m3"])
def test_shared_memory_matches_the_solvers(hw, dtype):
    p = GemmProblem(256, 256, 256, dtype=dtype, layout="rc" if dtype == "fp8e4m3" else "rr")
    configs = [c for c in space_configs() if not c.is_vendor]
    x = frame_matrix(frame([(p, c) for c in configs]), hw)
    want = np.array([solvers.SOLVERS[c.family].smem_bytes(p, c) / 1024 for c in configs])
    np.testing.assert_allclose(x[:, FEATURE_INDEX["smem_kb"]], want)


def test_single_row_gemv_features_are_what_the_shipped_models_learned():
    """The row blocks (session 17) must not move a single-row GEMV config's features: the
    shipped models were trained on the session-16 count (the weight tile only), and a changed
    feature moved their top-1 on 24 of 324 GEMV problems."""
    solver = solvers.SOLVERS["gemm.gemv"]
    p = GemmProblem(1, 4096, 4096, layout="rc")
    for c in (c for c in space_configs(["gemm.gemv"]) if c.block_m == 1):
        want = c.num_stages * c.block_n * c.block_k * 2 if c.num_stages > 1 else 0
        assert solver.smem_bytes(p, c) == want, c.id


# -- batch versus single ----------------------------------------------------------------------


PARITY_PROBLEMS = [GemmProblem(1, 4096, 4096), GemmProblem(127, 1009, 4099),
                   GemmProblem(4096, 4096, 4096), GemmProblem(3, 38, 3104),
                   GemmProblem(1000, 1000, 1000, lda=1003), GemmProblem(96, 80, 64, batch=3)]


def test_frame_rows_equal_one_by_one(hw):
    rng = np.random.default_rng(0)
    pairs = []
    for p in PARITY_PROBLEMS:
        cfgs = solvers.applicable_configs(p, hw)
        pairs += [(p, cfgs[i]) for i in rng.choice(len(cfgs), size=min(12, len(cfgs)),
                                                   replace=False)]
    many = frame_matrix(frame(pairs), hw)
    ones = np.vstack([frame_matrix(frame([pc]), hw) for pc in pairs])
    np.testing.assert_array_equal(many, ones)


def test_candidate_path_equals_frame_path(hw):
    for p in PARITY_PROBLEMS:
        table = candidate_table(p, hw)
        index, x = table.candidates(p)
        ref = frame_matrix(frame([(p, table.configs[i]) for i in index]), hw)
        np.testing.assert_allclose(x, ref, rtol=1e-12, equal_nan=True, err_msg=p.key())


def test_config_features_do_not_read_problem_sizes(hw):
    config_pos = [i for i, f in enumerate(FEATURES) if f.kind == "config"]
    cfgs = [KernelConfig.from_id("gemm.tma.m128n128k64.g8.w8.s4"),
            KernelConfig.from_id("gemm.splitk.m16n64k64.g8.w4.s3.sk2"), KernelConfig("gemm.cublas")]
    a = frame_matrix(frame([(GemmProblem(1, 2, 3), c) for c in cfgs]), hw)[:, config_pos]
    b = frame_matrix(frame([(GemmProblem(5000, 7, 4096, lda=4100), c) for c in cfgs]), hw)
    np.testing.assert_array_equal(a, b[:, config_pos])


# -- the spec is generated from the table ------------------------------------------------------


def test_spec_is_the_table():
    spec = current_spec()
    assert spec.names == tuple(f.name for f in FEATURES) == FEATURE_NAMES
    assert len(set(spec.names)) == len(spec.names)
    assert spec.categorical == ("dtype_code", "layout_code", "family_code")
    assert all(n in spec.names for n in spec.categorical)
    order = [KINDS.index(k) for k in spec.kinds]
    assert order == sorted(order), "declare hardware, problem, config, then interaction features"
    assert current_spec().digest == spec.digest                      # stable
    assert FeatureSpec.from_dict(spec.to_dict()) == spec


def test_spec_mismatch_names_the_difference():
    spec = current_spec()
    d = spec.to_dict()
    d["names"] = d["names"][:-1] + ["mystery_feature"]
    with pytest.raises(FeatureSchemaError, match="mystery_feature"):
        FeatureSpec.from_dict(d).check_matches(spec)
    d = spec.to_dict()
    d["schema_version"] += 1
    with pytest.raises(FeatureSchemaError, match="schema version"):
        FeatureSpec.from_dict(d).check_matches(spec)
    d = spec.to_dict()
    d["names"] = [d["names"][1], d["names"][0]] + d["names"][2:]
    with pytest.raises(FeatureSchemaError, match="order"):
        FeatureSpec.from_dict(d).check_matches(spec)


# -- the fast candidate mask is exactly applicable_configs ------------------------------------


MASK_PROBLEMS = [
    GemmProblem(m, n, k) for m, n, k in
    [(1, 1, 1), (1, 4096, 4096), (2, 3, 5), (7, 16, 262144), (16, 128, 3), (17, 333, 12345),
     (64, 64, 64), (100, 7, 31), (128, 28672, 4096), (1000, 1000, 1000), (4096, 4096, 4096),
     (8191, 129, 65), (65536, 33, 1024), (131072, 1, 256), (46341, 46341, 64)]
] + [
    GemmProblem(64, 96, 100, layout="cc", lda=104),
    GemmProblem(17, 33, 65, layout="rc", base_align=4),
    GemmProblem(96, 80, 64, batch=3), GemmProblem(1000, 1000, 1000, lda=1003),
    GemmProblem(200, 300, 400, dtype="fp32", tf32=True, layout="cr"),
    GemmProblem(256, 512, 1024, dtype="fp8e4m3", layout="rc"),
    GemmProblem(256, 512, 1024, dtype="fp8e4m3", layout="rr"),
    GemmProblem(48, 64, 80, dtype="fp16", layout="rc", lda=96, base_align=8),
    # fp8 past the wgmma accumulation limit: block_m >= 64 only with enough split-K
    GemmProblem(64, 1, 1048576, dtype="fp8e4m3", layout="rc"),
    GemmProblem(1024, 16, 300000, dtype="fp8e4m3", layout="rc"),
]


@pytest.mark.parametrize("problem", MASK_PROBLEMS, ids=lambda p: p.key())
def test_candidate_mask_equals_applicable_configs(hw, problem):
    assert candidate_ids(problem, hw) == [c.id for c in solvers.applicable_configs(problem, hw)]


def test_candidate_mask_on_a_pool(hw):
    p = GemmProblem(33, 4096, 777)
    too_big = "gemm.ptr.m256n256k256.g8.w8.s5"
    pool = [c.id for c in solvers.applicable_configs(p, hw)][::7] + [too_big]
    got = candidate_ids(p, hw, pool)
    assert got == [i for i in pool if i != too_big]
