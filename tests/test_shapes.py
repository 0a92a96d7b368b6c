"""Problem sets: determinism, the train/validation hold-out, caps, and problem files."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tilepick.bench import shapes as S
from tilepick.problem import GemmProblem, ProblemError


def keys(problems):
    return [p.key() for p in problems]


def mnk(problems):
    return {(p.m, p.n, p.k) for p in problems}


@pytest.fixture(scope="module")
def split():
    return S.training_and_validation("bf16", "rr", seed=0)


# -- model table and projections ----------------------------------------------------------------
def test_llama3_8b_projections_match_published_config():
    proj = {p.layer: (p.n, p.k) for p in S.llm_projections("llama3-8b")}
    assert proj["qkv"] == (6144, 4096)          # (32 + 2*8) * 128
    assert proj["attn_out"] == (4096, 4096)
    assert proj["gate_up"] == (2 * 14336, 4096)
    assert proj["up"] == (14336, 4096)
    assert proj["down"] == (4096, 14336)
    assert proj["lm_head"] == (128256, 4096)
    assert {p.name for p in S.llm_projections("llama3-8b")} >= {"llama3-8b.qkv", "llama3-8b.down"}


def test_gelu_models_have_no_gate_and_gemma_attention_is_wider_than_hidden():
    layers = {p.layer for p in S.llm_projections("gpt2-small")}
    assert "gate_up" not in layers and "up" in layers
    gemma = {p.layer: (p.n, p.k) for p in S.llm_projections("gemma-7b")}
    assert gemma["attn_out"] == (3072, 16 * 256)
    assert gemma["qkv"] == (3 * 16 * 256, 3072)


def test_model_table_covers_the_requested_models():
    for name in ("llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
                 "llama3.1-405b", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-14b",
                 "qwen2.5-32b", "qwen2.5-72b", "phi3-mini", "phi3-medium", "gemma-2b", "gemma-7b",
                 "gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base", "bert-large",
                 "t5-base", "t5-large"):
        assert name in S.MODELS
    with pytest.raises(KeyError, match="unknown model"):
        S.llm_projections("no-such-model")


def test_token_counts_include_powers_of_two_and_odd_values():
    ms = S.token_counts(0)
    assert {1 << i for i in range(15)} <= set(ms)
    assert {3, 7, 13, 100, 777, 1000, 3000} <= set(ms)
    assert max(ms) == 16384 and ms == sorted(set(ms))
    assert S.token_counts(0) == ms and S.token_counts(1) != ms


# -- determinism, duplicates, caps ---------------------------------------------------------------
SEEDED = ["llm", "random", "tall_skinny", "k_heavy", "train", "validation", "mixed",
          "train_extra"]


@pytest.mark.parametrize("name", sorted(S.NAMED_SETS))
def test_named_sets_deterministic_unique_and_capped(name):
    a = S.NAMED_SETS[name]("bf16", "rr", 0)
    b = S.NAMED_SETS[name]("bf16", "rr", 0)
    assert a and keys(a) == keys(b)
    assert len(set(keys(a))) == len(a), "duplicate problem keys"
    for p in a:
        assert p.dtype.value == "bf16" and p.layout == "rr"
        assert max(p.m * p.k, p.k * p.n, p.m * p.n) * p.batch <= 2**31 - 1
        assert p.min_bytes <= S.MAX_PROBLEM_BYTES
    if name in SEEDED:
        assert keys(S.NAMED_SETS[name]("bf16", "rr", 1)) != keys(a)


def test_named_sets_honour_count_dtype_and_layout():
    for name in S.NAMED_SETS:
        got = S.NAMED_SETS[name]("fp16", "rc", 3, count=50)
        assert len(got) == 50, name
        assert all(p.dtype.value == "fp16" and p.layout == "rc" for p in got)


def test_caps_drop_oversized_llm_shapes():
    # Gemma's 256000-wide LM head at 16384 tokens would be a 4.2e9-element C: dropped.
    probs = S.llm("bf16", "rr", 0, m_values=[1, 16384], models=["gemma-7b"])
    assert (1, 256000, 3072) in mnk(probs)
    assert (16384, 256000, 3072) not in mnk(probs)
    assert not S.within_caps(GemmProblem(65536, 65536, 1))


def test_llm_dedups_shared_shapes_and_accepts_families():
    probs = S.llm(m_values=[64], models=["mistral-7b", "mixtral-8x7b"])
    assert len(mnk(probs)) == len(probs)
    assert (64, 8, 4096) in mnk(probs)  # the Mixtral router, the only shape Mistral lacks
    fam = S.llm(m_values=[1], models=["gpt2"])
    assert (1, 4800, 1600) in mnk(fam)  # gpt2-xl fused QKV


def test_generators_cover_their_corners():
    sq = mnk(S.square())
    assert {(4095, 4095, 4095), (4097, 4097, 4097), (64, 64, 64), (1000, 1000, 1000)} <= sq
    assert all(min(p.m, p.n) <= 64 for p in S.tall_skinny())
    assert all(p.k >= 8 * max(p.m, p.n) for p in S.k_heavy())
    assert all(1 in (p.m, p.n, p.k) for p in S.edge_cases())
    rnd = S.random_loguniform(300, seed=5)
    assert len(rnd) == 300 and all(1 <= d <= 32768 for p in rnd for d in (p.m, p.n, p.k))
    assert sum(d % 2 for p in rnd for d in (p.m, p.n, p.k)) > 0.3 * 900  # odd sizes are common


# -- train / validation ----------------------------------------------------------------------------
def test_split_sizes_and_uniqueness(split):
    train, val = split
    assert len(train) >= 1200 and len(set(keys(train))) == len(train)
    assert len(val) >= 200 and len(set(keys(val))) == len(val)


def test_split_is_disjoint_in_mnk(split):
    train, val = split
    assert not mnk(train) & mnk(val)


def test_heldout_weight_shapes_never_reach_training(split):
    train, val = split
    held = {(p.n, p.k) for name, cfg in S.MODELS.items() if cfg.family in S.HOLDOUT_FAMILIES
            for p in S.llm_projections(name)}
    assert held
    val_llm_nk = {(p.n, p.k) for p in val} & held
    assert len(val_llm_nk) >= 20, "validation should contain many held-out weight shapes"
    assert not {(p.n, p.k) for p in train} & held
    # and the training set does contain LLM shapes of the other models
    kept = {(p.n, p.k) for name, cfg in S.MODELS.items() if cfg.family not in S.HOLDOUT_FAMILIES
            for p in S.llm_projections(name)} - held
    assert len({(p.n, p.k) for p in train} & kept) >= 40


def test_split_deterministic_and_seed_dependent(split):
    train, val = split
    t2, v2 = S.training_and_validation("bf16", "rr", seed=0)
    assert keys(t2) == keys(train) and keys(v2) == keys(val)
    t3, v3 = S.training_and_validation("bf16", "rr", seed=1)
    assert keys(t3) != keys(train) and keys(v3) != keys(val)
    assert not mnk(t3) & mnk(v3)


def test_split_pools_do_not_depend_on_requested_sizes(split):
    train, val = split
    big_train, _ = S.training_and_validation("bf16", "rr", seed=0, n_train=2500, n_val=50)
    assert len(big_train) == 2500
    assert not mnk(big_train) & mnk(val)


def test_train_extra_adds_new_weight_shapes_only_for_training():
    """train_extra: the extra models' projections, never a held-out weight shape, never a
    problem of the train or validation pools, and the split itself unchanged by them."""
    extra = S.train_extra("bf16", "rr", 0)
    train, val = S.training_and_validation("bf16", "rr", 0, None, None)
    assert not mnk(extra) & (mnk(train) | mnk(val))
    held = {(p.n, p.k) for name, cfg in S.MODELS.items() if cfg.family in S.HOLDOUT_FAMILIES
            for p in S.llm_projections(name)}
    assert not {(p.n, p.k) for p in extra} & held
    new_nk = {(p.n, p.k) for p in extra} - {(p.n, p.k) for p in train}
    assert len(new_nk) >= 40, "the extra models should bring weight shapes training lacks"
    gemma2_9b_qkv = ((16 + 2 * 8) * 256, 3584)
    assert gemma2_9b_qkv in {(p.n, p.k) for p in extra}
    assert not set(S.EXTRA_MODELS) & set(S.MODELS)   # the split's model table is untouched
    few = S.train_extra("bf16", "rr", 0, count=100)
    assert len(few) == 100 and len({(p.n, p.k) for p in few}) >= 50   # round-robin over (N, K)


def assert_training_only(problems, layout, dtype="bf16"):
    """No (M, N, K) of the train or validation pools, no weight shape (N, K) of the held-out
    families: what every training-only set promises."""
    train, val = S.training_and_validation(dtype, layout, 0, None, None)
    assert not mnk(problems) & (mnk(train) | mnk(val))
    held = {(p.n, p.k) for name, cfg in S.MODELS.items() if cfg.family in S.HOLDOUT_FAMILIES
            for p in S.llm_projections(name)}
    assert not {(p.n, p.k) for p in problems} & held


def test_train_narrow_adds_narrow_and_k_heavy_training_shapes():
    narrow = S.train_narrow("bf16", "rr", 0)
    assert len(narrow) == 400 and narrow == S.train_narrow("bf16", "rr", 0)
    assert S.problem_set("train_narrow", "bf16", "rr", 0, 50) == narrow[:50]
    assert_training_only(narrow, "rr")
    skinny = [p for p in narrow if min(p.m, p.n) <= 64 and max(p.m, p.n) >= 256]
    heavy = [p for p in narrow if p.k >= 8 * max(p.m, p.n) and p.k >= 4096]
    assert len(skinny) >= 150 and len(heavy) >= 150
    assert all(p in skinny or p in heavy for p in narrow)
    assert S.train_narrow("bf16", "rr", 1) != narrow
    with pytest.raises(ValueError, match="count must be >= 0"):
        S.train_narrow("bf16", "rr", 0, count=-1)


def test_train_decode_adds_decode_steps_on_many_weights():
    dec = S.train_decode("bf16", "rc", 0)
    assert len(dec) == 300 and dec == S.train_decode("bf16", "rc", 0)
    assert S.problem_set("train_decode", "bf16", "rc", 0, 50) == dec[:50]
    assert all(1 <= p.m <= 16 and p.n % 256 == 0 and p.k % 256 == 0
               and 1024 <= p.n <= 65536 and 1024 <= p.k <= 65536 for p in dec)
    assert_training_only(dec, "rc")
    assert len({(p.n, p.k) for p in dec}) > 250   # many weights, not a few token counts each
    assert {p.m for p in dec} == set(range(1, 17))
    assert S.train_decode("bf16", "rc", 1) != dec
    with pytest.raises(ValueError, match="count must be >= 0"):
        S.train_decode("bf16", "rr", 0, count=-1)


def test_train_midm_covers_round_batches_on_power_of_two_weights():
    mid = S.train_midm("bf16", "rr", 0)
    assert len(mid) == 300 and mid == S.train_midm("bf16", "rr", 0)
    assert S.problem_set("train_midm", "bf16", "rr", 0, 40) == mid[:40]
    assert all(48 <= p.m <= 320 and p.n % 256 == 0 and p.k % 256 == 0 for p in mid)
    assert sum(p.m == 128 for p in mid) >= 20 and sum(p.n % 4096 == 0 for p in mid) >= 100
    assert_training_only(mid, "rr")


def test_train_small_k_covers_tiny_k_under_large_aligned_and_odd_outputs():
    small = S.train_small_k("fp8e4m3", "rc", 0)
    assert len(small) == 160 and small == S.train_small_k("fp8e4m3", "rc", 0)
    assert S.problem_set("train_small_k", "fp8e4m3", "rc", 0, 30) == small[:30]
    assert all(1 <= p.k <= 64 and 1 << 16 <= p.m * p.n <= 1 << 27 for p in small)
    assert all(16 <= p.m <= 65536 and 16 <= p.n <= 65536 for p in small)
    aligned = sum(p.n % 16 == 0 for p in small)
    assert 80 <= aligned <= 120                # the odd-N half is mostly unaligned
    assert sum(p.k <= 8 for p in small) >= 60 and {1, 2} <= {p.k for p in small}
    assert_training_only(small, "rc", "fp8e4m3")
    assert {p.dtype.value for p in small} == {"fp8e4m3"}


def test_train_thin_long_k_alternates_decode_steps_and_tiny_outputs():
    thin = S.train_thin_long_k("fp8e4m3", "rc", 0)
    assert len(thin) == 160 and thin == S.train_thin_long_k("fp8e4m3", "rc", 0)
    decode = [p for p in thin if p.m <= 4 and p.n <= 4096 and 1024 <= p.k <= 65536]
    tiny = [p for p in thin if p.m <= 128 and p.n <= 128 and 2048 <= p.k <= 262144]
    assert len(decode) >= 80 and len(tiny) >= 80
    assert all(p in decode or p in tiny for p in thin)
    assert max(p.k for p in tiny) > 65536      # beyond the decode half's K
    assert_training_only(thin, "rc", "fp8e4m3")
    assert S.train_thin_long_k("bf16", "rr", 0) != S.train_thin_long_k("bf16", "rr", 1)


def test_train_low_flop_alternates_narrow_outputs_and_small_odd_problems():
    low = S.train_low_flop("bf16", "rr", 0)
    assert len(low) == 600 and low == S.train_low_flop("bf16", "rr", 0)
    assert S.problem_set("train_low_flop", "bf16", "rr", 0, 50) == low[:50]
    narrow, small = low[0::2], low[1::2]       # the draws alternate and none is dropped here
    assert all(p.n <= 16 and 16 <= p.m <= 131072 and 64 <= p.k <= 131072 for p in narrow)
    assert all(max(p.m, p.n, p.k) <= 4096 and 2 * p.m * p.n * p.k <= 1 << 31 for p in small)
    assert sum(p.n == 1 for p in narrow) >= 30 and sum(p.k % 8 for p in small) >= 150
    assert_training_only(low, "rr")
    assert S.train_low_flop("bf16", "rr", 0) != S.train_low_flop("bf16", "rr", 1)


def test_train_decode_misaligned_k_draws_even_and_odd_k_never_a_multiple_of_8():
    dec = S.train_decode_misaligned_k("bf16", "rc", 0)
    assert len(dec) == 300 and dec == S.train_decode_misaligned_k("bf16", "rc", 0)
    assert S.problem_set("train_decode_misaligned_k", "bf16", "rc", 0, 40) == dec[:40]
    assert all(1 <= p.m <= 16 and 1024 <= p.n <= 131072 and 1024 <= p.k <= 65535 for p in dec)
    assert not any(p.k % 8 == 0 for p in dec)
    odd = [p for p in dec if p.k % 2]
    assert 80 <= len(odd) <= 120 and {p.k % 8 for p in dec if p.k % 2 == 0} == {2, 4, 6}
    assert sum(p.m == 1 for p in dec) >= 20
    assert_training_only(dec, "rc")
    assert dec != S.train_decode_misaligned_k("bf16", "rr", 0)


def test_train_mid_misaligned_rotates_which_leading_dimension_is_off_16_bytes():
    mid = S.train_mid_misaligned("bf16", "rr", 0)
    assert len(mid) == 300 and mid == S.train_mid_misaligned("bf16", "rr", 0)
    assert S.problem_set("train_mid_misaligned", "bf16", "rr", 0, 30) == mid[:30]
    assert all(17 <= p.m <= 8192 and 17 <= p.n and 1 << 12 <= p.m * p.n and 128 <= p.k
               for p in mid)
    kinds = [(p.n % 8 == 0, p.k % 8 == 0) for p in mid]
    assert (True, True) not in kinds
    assert all(kinds.count(c) == 100 for c in ((True, False), (False, True), (False, False)))
    assert sum(p.k % 2 for p in mid if p.k % 8) >= 60      # odd and merely even K both drawn
    assert {p.k % 8 for p in mid if p.k % 2 == 0 and p.k % 8} == {2, 4, 6}
    assert_training_only(mid, "rr")
    assert mid != S.train_mid_misaligned("bf16", "rr", 1)


def test_train_small_misaligned_draws_the_same_kinds_on_smaller_problems():
    small = S.train_small_misaligned("bf16", "rc", 0)
    assert len(small) == 300 and small == S.train_small_misaligned("bf16", "rc", 0)
    assert S.problem_set("train_small_misaligned", "bf16", "rc", 0, 30) == small[:30]
    assert all(128 <= p.m <= 2048 and 128 <= p.n <= 2048 and 128 <= p.k <= 4096
               for p in small)
    kinds = [(p.n % 8 == 0, p.k % 8 == 0) for p in small]
    assert all(kinds.count(c) == 100 for c in ((True, False), (False, True), (False, False)))
    assert_training_only(small, "rc")
    mid = {(p.m, p.n, p.k) for p in S.train_mid_misaligned("bf16", "rc", 0)}
    assert not mid & {(p.m, p.n, p.k) for p in small}


def test_train_long_k_misaligned_draws_the_same_kinds_on_long_k_small_outputs():
    long_k = S.train_long_k_misaligned("bf16", "cr", 0)
    assert len(long_k) == 300 and long_k == S.train_long_k_misaligned("bf16", "cr", 0)
    assert S.problem_set("train_long_k_misaligned", "bf16", "cr", 0, 30) == long_k[:30]
    assert all(1 <= p.m <= 512 and p.n <= 512 and p.m * p.n < 1 << 16
               and 16384 <= p.k <= 262144 for p in long_k)
    kinds = [(p.n % 8 == 0, p.k % 8 == 0) for p in long_k]
    assert all(kinds.count(c) == 100 for c in ((True, False), (False, True), (False, False)))
    assert_training_only(long_k, "cr")
    assert long_k != S.train_long_k_misaligned("bf16", "cr", 1)


def test_train_long_k_wide_misaligned_draws_the_same_kinds_on_wider_outputs():
    wide = S.train_long_k_wide_misaligned("bf16", "rc", 0)
    assert len(wide) == 150 and wide == S.train_long_k_wide_misaligned("bf16", "rc", 0)
    assert S.problem_set("train_long_k_wide_misaligned", "bf16", "rc", 0, 30) == wide[:30]
    assert all(8 <= p.m <= 4096 and 1 << 12 <= p.m * p.n < 1 << 18
               and 16384 <= p.k <= 262144 and S.within_caps(p) for p in wide)
    kinds = [(p.n % 8 == 0, p.k % 8 == 0) for p in wide]
    assert all(kinds.count(c) == 50 for c in ((True, False), (False, True), (False, False)))
    assert_training_only(wide, "rc")
    narrow = {(p.m, p.n, p.k) for p in S.train_long_k_misaligned("bf16", "rc", 0)}
    assert not narrow & {(p.m, p.n, p.k) for p in wide}



def test_train_decode_pow2_n_draws_decode_steps_on_power_of_two_outputs():
    pocket = S.train_decode_pow2_n("bf16", "rr", 0)
    assert len(pocket) == 96 and pocket == S.train_decode_pow2_n("bf16", "rr", 0)
    assert S.problem_set("train_decode_pow2_n", "bf16", "rr", 0, 20) == pocket[:20]
    assert all(1 <= p.m <= 4 and 1024 <= p.k <= 65536 and p.k % 256 == 0 for p in pocket)
    assert sorted(p.n for p in pocket) == sorted([4096, 8192, 16384, 32768] * 24)
    assert_training_only(pocket, "rr")
    assert not {(p.n, p.k) for p in pocket} & {(8192, 8192), (8192, 28672)}

# -- problem files ---------------------------------------------------------------------------------
SAMPLE = [GemmProblem(1, 4096, 4096), GemmProblem(777, 6144, 4096, dtype="fp16", layout="rc"),
          GemmProblem(3, 5, 7, batch=4, dtype="fp32", tf32=True),
          GemmProblem(64, 64, 64, layout="rr", lda=128)]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_problem_file_round_trip(tmp_path, suffix):
    path = S.write_problem_file(SAMPLE, tmp_path / f"probs{suffix}")
    assert keys(S.read_problem_file(path)) == keys(SAMPLE)
    plain = S.training_and_validation(seed=0, n_train=40, n_val=10)[1]
    path = S.write_problem_file(plain, tmp_path / f"plain{suffix}")
    if suffix == ".csv":
        assert path.read_text().splitlines()[0] == "m,n,k,batch,dtype,layout"
    assert keys(S.read_problem_file(path)) == keys(plain)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_gzipped_problem_files_read_like_plain_ones(tmp_path, suffix):
    import gzip

    plain = S.write_problem_file(SAMPLE, tmp_path / f"probs{suffix}")
    packed = tmp_path / f"probs{suffix}.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert keys(S.read_problem_file(packed)) == keys(SAMPLE)
    written = S.write_problem_file(SAMPLE, tmp_path / f"w{suffix}.gz")
    assert gzip.decompress(written.read_bytes()) == plain.read_bytes()
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"m": 1, "n": 2, "k": 3}\n{"m": 1, "n": 2}\n'))
    with pytest.raises(ProblemError, match=r"bad\.jsonl\.gz:2: .*missing k"):
        S.read_problem_file(bad)


def test_csv_defaults_comments_and_extra_columns(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("# exported shapes\nm,n,k,name\n16,32,64,layer0\n\n1024.0,1,3,lm\n")
    got = S.read_problem_file(path, dtype="fp16", layout="rc")
    assert [(p.m, p.n, p.k) for p in got] == [(16, 32, 64), (1024, 1, 3)]
    assert all(p.dtype.value == "fp16" and p.layout == "rc" for p in got)


def test_jsonl_op_field(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"op": "gemm", "m": 2, "n": 3, "k": 4}\n'
                    '{"m": 5, "n": 6, "k": 7, "batch": 2}\n')
    assert mnk(S.read_problem_file(path)) == {(2, 3, 4), (5, 6, 7)}
    path.write_text('{"m": 2, "n": 3, "k": 4}\n{"op": "conv", "m": 2, "n": 3, "k": 4}\n')
    with pytest.raises(ProblemError, match=r"p\.jsonl:2: .*conv"):
        S.read_problem_file(path)


@pytest.mark.parametrize("name, text, line, what", [
    ("bad.csv", "m,n,k\n1,2,3\n4,x,6\n", 3, "n must be an integer"),
    ("bad.csv", "m,n,k\n1,2,3\n\n4,0,6\n", 4, "> 0"),
    ("bad.csv", "m,n,k,dtype\n1,2,3,bf16\n4,5,6,int3\n", 3, "unsupported dtype"),
    ("bad.csv", "m,n,k,layout\n1,2,3,rr\n4,5,6,xy\n", 3, "unknown layout"),
    ("bad.csv", "m,n\n1,2\n", 1, "header must name columns"),
    ("bad.csv", "m,n,k\n1,2,3\n1,2,3,4\n", 3, "values but the header"),
    ("bad.csv", "m,n,k,batch\n1,2,3,1.5\n", 2, "batch must be an integer"),
    ("bad.jsonl", '{"m": 1, "n": 2, "k": 3}\n{"m": 1, "n": 2}\n', 2, "missing k"),
    ("bad.jsonl", '{"m": 1, "n": 2, "k": 3}\n\n{"m": 1, "n": 2, "k": 3\n', 3, "not valid JSON"),
    ("bad.jsonl", '[1, 2, 3]\n', 1, "JSON object"),
    ("bad.jsonl", '{"m": 1, "n": 2, "k": -3}\n', 1, "> 0"),
])
def test_bad_problem_file_rows_name_the_line(tmp_path, name, text, line, what):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ProblemError, match=rf"{re.escape(name)}:{line}: .*{what}"):
        S.read_problem_file(path)


def test_resolve_problems_names_and_files(tmp_path):
    want = S.NAMED_SETS["edge"]("bf16", "rr", 0, 5)
    assert keys(S.resolve_problems("edge", count=5)) == keys(want)
    path = S.write_problem_file(SAMPLE[:2], tmp_path / "x.csv")
    assert keys(S.resolve_problems(str(path))) == keys(SAMPLE[:2])
    with pytest.raises(ProblemError, match="unknown problem set"):
        S.resolve_problems("nonexistent-set")


def test_no_kernel_imports():
    import subprocess

    code = ("import sys, tilepick.bench.shapes; "
            "print(any(m.startswith(('tilepick.kernels', 'triton')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_written_jsonl_is_plain_json(tmp_path):
    path = S.write_problem_file(SAMPLE[:1], tmp_path / "one.jsonl")
    assert json.loads(path.read_text()) == {"op": "gemm", "m": 1, "n": 4096, "k": 4096,
                                            "batch": 1, "dtype": "bf16", "layout": "rr"}


def test_gemv_problem_lists_are_what_the_family_serves():
    """The committed GEMV problem lists (benchmarks/problems, the provenance of train_gemv and
    the validation passes) hold problems the family serves, and the session-17 row-block lists
    are exactly the M = 2-4 problems of session 16's lists."""
    from pathlib import Path

    from tilepick.bench.shapes import resolve_problems
    from tilepick.hardware import profile
    from tilepick.solvers import SOLVERS

    here = Path(__file__).resolve().parents[1] / "benchmarks" / "problems"
    gemv, hw = SOLVERS["gemm.gemv"], profile("h200")
    for name in ("train_rc_bf16", "validation_rc_bf16", "train_rc_fp8e4m3",
                 "validation_rc_fp8e4m3"):
        first = resolve_problems(str(here / f"{name}_gemv.jsonl"))
        rows = resolve_problems(str(here / f"{name}_gemv_rows.jsonl"))
        assert first and all(gemv.configs(p, hw) for p in first), name
        assert rows == [p for p in first if p.m > 1], name
    probe = resolve_problems(str(here / "gemv_rows_probe_bf16.jsonl"))
    assert {p.m for p in probe} == {2, 3, 4, 8, 16} and {p.layout for p in probe} == {"rc"}
