"""Problem sets for the sweeps: declared once, deterministic given a seed.

Why this module exists: a picker is only as good as the shapes it was measured and judged on.
Every sweep, training run and evaluation draws its problems from here, so that "the training
set with seed 0" means the same list of shapes on every machine and in every report.

Three kinds of shapes are offered:

* **LLM shapes** (:func:`llm`): the weight shapes of public transformer models (:data:`MODELS`)
  times token counts M (:func:`token_counts`). These are what users actually run.
* **Synthetic shapes** (:func:`square`, :func:`random_loguniform`, :func:`tall_skinny`,
  :func:`k_heavy`, :func:`edge_cases`): the corners a model of kernel speed has to get right
  even though no LLM layer lands there (odd sizes, tiny dimensions, huge K).
* **Train / validation split** (:func:`training_and_validation`): disjoint by construction, see
  that function for the hold-out rule.

Size caps (every generator applies them; problems beyond them are dropped, never clipped):

* :data:`MAX_MATRIX_ELEMENTS` = ``2**31 - 1``: A, B and C (times the batch) each stay within
  int32 element offsets, so kernels that index with 32-bit arithmetic are never handed a shape
  they cannot address and the sweep measures speed, not overflow.
* :data:`MAX_PROBLEM_BYTES` = 2 GiB: the bytes of A + B + C (``GemmProblem.min_bytes``) of one
  problem. A sweep also allocates a float64 reference and runs every candidate config on each
  problem, so larger problems would dominate sweep time and GPU memory while adding little that
  the ~1-2 GiB problems do not already show (large GEMMs are compute bound and scale smoothly).

Seeds: every random choice comes from ``random.Random`` seeded with a string built from the
seed and a per-use salt, which is stable across Python versions and processes (unlike
``hash()``), so the same seed gives the same lists everywhere.
"""

from __future__ import annotations

import csv
import json
import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tilepick.data.io import open_text
from tilepick.problem import LAYOUTS, DType, GemmProblem, ProblemError

__all__ = [
    "MAX_MATRIX_ELEMENTS", "MAX_PROBLEM_BYTES", "ModelConfig", "MODELS", "HOLDOUT_FAMILIES",
    "held_out_weights",
    "Projection", "llm_projections", "token_counts", "within_caps", "llm", "square",
    "random_loguniform", "tall_skinny", "k_heavy", "edge_cases", "mixed",
    "training_and_validation", "train_extra", "train_narrow", "train_decode", "train_midm",
    "train_small_k", "train_thin_long_k", "train_low_flop", "train_decode_misaligned_k",
    "train_mid_misaligned", "train_small_misaligned", "train_long_k_misaligned",
    "train_long_k_wide_misaligned", "train_decode_pow2_n", "EXTRA_MODELS", "NAMED_SETS", "problem_set", "resolve_problems",
    "ProblemFileError", "read_problem_file", "write_problem_file",
    "DEFAULT_N_TRAIN", "DEFAULT_N_VAL",
]

MAX_MATRIX_ELEMENTS = 2**31 - 1
MAX_PROBLEM_BYTES = 2 * 2**30
MAX_TOKENS = 16384


# ---------------------------------------------------------------------------------------------
# Model table
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelConfig:
    """The few numbers of a transformer that fix the shapes of its linear layers.

    ``gated_mlp`` separates SwiGLU/GeGLU MLPs (gate and up projections, usually fused) from
    plain GELU/ReLU MLPs (one up projection). ``num_experts`` > 1 marks a mixture-of-experts
    model: its FFN shapes are those of one expert, plus a router with N = ``num_experts``.
    ``source`` is the Hugging Face repository whose config.json the numbers come from, so they
    can be re-checked.
    """

    name: str
    family: str
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    gated_mlp: bool = True
    num_experts: int = 1
    experts_per_token: int = 1
    source: str = ""


def _m(name, family, hidden, intermediate, heads, kv_heads, head_dim, vocab, gated=True,
       experts=1, top_k=1, source=""):
    return ModelConfig(name, family, hidden, intermediate, heads, kv_heads, head_dim, vocab,
                       gated, experts, top_k, source)


MODELS: dict[str, ModelConfig] = {c.name: c for c in (
    # name            family     hidden  inter   heads kv  hd   vocab
    _m("llama2-7b", "llama2", 4096, 11008, 32, 32, 128, 32000, source="meta-llama/Llama-2-7b-hf"),
    _m("llama2-13b", "llama2", 5120, 13824, 40, 40, 128, 32000, source="meta-llama/Llama-2-13b-hf"),
    _m("llama2-70b", "llama2", 8192, 28672, 64, 8, 128, 32000, source="meta-llama/Llama-2-70b-hf"),
    _m("llama3-8b", "llama3", 4096, 14336, 32, 8, 128, 128256, source="meta-llama/Meta-Llama-3-8B"),
    _m("llama3-70b", "llama3", 8192, 28672, 64, 8, 128, 128256,
       source="meta-llama/Meta-Llama-3-70B"),
    _m("llama3.1-405b", "llama3", 16384, 53248, 128, 8, 128, 128256,
       source="meta-llama/Llama-3.1-405B"),
    _m("mistral-7b", "mistral", 4096, 14336, 32, 8, 128, 32000, source="mistralai/Mistral-7B-v0.1"),
    _m("mixtral-8x7b", "mistral", 4096, 14336, 32, 8, 128, 32000, experts=8, top_k=2,
       source="mistralai/Mixtral-8x7B-v0.1"),
    _m("qwen2.5-7b", "qwen2.5", 3584, 18944, 28, 4, 128, 152064, source="Qwen/Qwen2.5-7B"),
    _m("qwen2.5-14b", "qwen2.5", 5120, 13824, 40, 8, 128, 152064, source="Qwen/Qwen2.5-14B"),
    _m("qwen2.5-32b", "qwen2.5", 5120, 27648, 40, 8, 128, 152064, source="Qwen/Qwen2.5-32B"),
    _m("qwen2.5-72b", "qwen2.5", 8192, 29568, 64, 8, 128, 152064, source="Qwen/Qwen2.5-72B"),
    _m("phi3-mini", "phi3", 3072, 8192, 32, 32, 96, 32064,
       source="microsoft/Phi-3-mini-4k-instruct"),
    _m("phi3-medium", "phi3", 5120, 17920, 40, 10, 128, 32064,
       source="microsoft/Phi-3-medium-4k-instruct"),
    # Gemma: GeGLU (gated); 7B's heads * head_dim = 4096 differs from hidden = 3072.
    _m("gemma-2b", "gemma", 2048, 16384, 8, 1, 256, 256000, source="google/gemma-2b"),
    _m("gemma-7b", "gemma", 3072, 24576, 16, 16, 256, 256000, source="google/gemma-7b"),
    _m("gpt2-small", "gpt2", 768, 3072, 12, 12, 64, 50257, gated=False,
       source="openai-community/gpt2"),
    _m("gpt2-medium", "gpt2", 1024, 4096, 16, 16, 64, 50257, gated=False,
       source="openai-community/gpt2-medium"),
    _m("gpt2-large", "gpt2", 1280, 5120, 20, 20, 64, 50257, gated=False,
       source="openai-community/gpt2-large"),
    _m("gpt2-xl", "gpt2", 1600, 6400, 25, 25, 64, 50257, gated=False,
       source="openai-community/gpt2-xl"),
    _m("bert-base", "bert", 768, 3072, 12, 12, 64, 30522, gated=False,
       source="google-bert/bert-base-uncased"),
    _m("bert-large", "bert", 1024, 4096, 16, 16, 64, 30522, gated=False,
       source="google-bert/bert-large-uncased"),
    # T5 (v1.0): ReLU MLP, d_kv = 64; its "LM head" is the tied vocabulary projection.
    _m("t5-base", "t5", 768, 3072, 12, 12, 64, 32128, gated=False, source="google-t5/t5-base"),
    _m("t5-large", "t5", 1024, 4096, 16, 16, 64, 32128, gated=False, source="google-t5/t5-large"),
)}

#: Training-only models (``--problems train_extra``): more weight shapes (N, K) for training,
#: from families the validation set never holds. Kept out of MODELS so that the train /
#: validation split of :func:`training_and_validation`, whose problems are measured, stays as it
#: is. Numbers as published in each source's config.json (entered by hand, not fetched; the
#: Gemma-2 ones were checked against a public transformers config): re-check with the source.
EXTRA_MODELS: dict[str, ModelConfig] = {c.name: c for c in (
    _m("llama3.2-1b", "llama3", 2048, 8192, 32, 8, 64, 128256, source="meta-llama/Llama-3.2-1B"),
    _m("llama3.2-3b", "llama3", 3072, 8192, 24, 8, 128, 128256, source="meta-llama/Llama-3.2-3B"),
    _m("gemma2-2b", "gemma2", 2304, 9216, 8, 4, 256, 256000, source="google/gemma-2-2b"),
    _m("gemma2-9b", "gemma2", 3584, 14336, 16, 8, 256, 256000, source="google/gemma-2-9b"),
    _m("gemma2-27b", "gemma2", 4608, 36864, 32, 16, 128, 256000, source="google/gemma-2-27b"),
    _m("mistral-nemo-12b", "mistral", 5120, 14336, 32, 8, 128, 131072,
       source="mistralai/Mistral-Nemo-Base-2407"),
    _m("mixtral-8x22b", "mistral", 6144, 16384, 48, 8, 128, 32768, experts=8, top_k=2,
       source="mistralai/Mixtral-8x22B-v0.1"),
    _m("yi-34b", "yi", 7168, 20480, 56, 8, 128, 64000, source="01-ai/Yi-34B"),
    _m("deepseek-llm-7b", "deepseek", 4096, 11008, 32, 32, 128, 102400,
       source="deepseek-ai/deepseek-llm-7b-base"),
    _m("deepseek-llm-67b", "deepseek", 8192, 22016, 64, 8, 128, 102400,
       source="deepseek-ai/deepseek-llm-67b-base"),
    _m("falcon-7b", "falcon", 4544, 18176, 71, 1, 64, 65024, gated=False,
       source="tiiuae/falcon-7b"),
    _m("opt-6.7b", "opt", 4096, 16384, 32, 32, 128, 50272, gated=False,
       source="facebook/opt-6.7b"),
    _m("starcoder2-15b", "starcoder2", 6144, 24576, 48, 4, 128, 49152, gated=False,
       source="bigcode/starcoder2-15b"),
)}

#: Families whose weight shapes only ever appear in validation (see training_and_validation).
HOLDOUT_FAMILIES: tuple[str, ...] = ("qwen2.5", "phi3")


@dataclass(frozen=True)
class Projection:
    """One linear layer as a GEMM ``x @ W`` with W: K x N (N outputs, K inputs)."""

    name: str   # "<model>.<layer>", e.g. "llama3-8b.qkv"
    model: str
    layer: str
    n: int
    k: int


def llm_projections(model: str | ModelConfig) -> list[Projection]:
    """The (N, K) of every distinct linear layer of ``model``, in the ``x @ W`` orientation.

    Both the fused gate+up projection (what vLLM-style servers run) and the separate one (what
    eager Hugging Face code runs) are listed because both are common in practice. Separate Q,
    K and V are not: their shapes equal the attention output's (Q) or are the fused QKV's
    smaller cousins, and listing them would weight attention over the MLP.
    """
    if isinstance(model, str) and model not in MODELS:
        raise KeyError(f"unknown model {model!r}: choose one of {sorted(MODELS)}")
    cfg = MODELS[model] if isinstance(model, str) else model
    h, hd = cfg.hidden, cfg.head_dim
    layers: list[tuple[str, int, int]] = [
        ("qkv", (cfg.heads + 2 * cfg.kv_heads) * hd, h),
        ("attn_out", h, cfg.heads * hd),
    ]
    if cfg.num_experts > 1:
        layers.append(("router", cfg.num_experts, h))
    if cfg.gated_mlp:
        layers.append(("gate_up", 2 * cfg.intermediate, h))
    layers += [
        ("up", cfg.intermediate, h),
        ("down", h, cfg.intermediate),
        ("lm_head", cfg.vocab, h),
    ]
    return [Projection(f"{cfg.name}.{layer}", cfg.name, layer, n, k) for layer, n, k in layers]


# ---------------------------------------------------------------------------------------------
# Helpers: seeds, caps, dedup
# ---------------------------------------------------------------------------------------------
def _rng(seed: int, salt: str) -> random.Random:
    """A private stream per use, so adding draws in one generator never shifts another's."""
    return random.Random(f"tilepick.shapes:{salt}:{int(seed)}")


def within_caps(p: GemmProblem, max_bytes: int = MAX_PROBLEM_BYTES) -> bool:
    """Whether a problem respects the module's element and byte caps (see the module doc)."""
    b = p.batch
    if max(p.m * p.k, p.k * p.n, p.m * p.n) * b > MAX_MATRIX_ELEMENTS:
        return False
    return p.min_bytes <= max_bytes


def _mnk(p: GemmProblem) -> tuple[int, int, int]:
    return (p.m, p.n, p.k)


class _Collector:
    """Builds a problem list in order, dropping duplicates and shapes beyond the caps."""

    def __init__(self, dtype, layout: str):
        self.dtype = DType.parse(dtype)
        if layout not in LAYOUTS:
            raise ProblemError(f"unknown layout {layout!r}: choose one of {LAYOUTS}")
        self.layout = layout
        self.items: list[GemmProblem] = []
        self.seen: set[tuple[int, int, int]] = set()

    def add(self, m: int, n: int, k: int) -> bool:
        m, n, k = int(m), int(n), int(k)
        if min(m, n, k) < 1 or (m, n, k) in self.seen:
            return False
        p = GemmProblem(m, n, k, dtype=self.dtype, layout=self.layout)
        if not within_caps(p):
            return False
        self.seen.add((m, n, k))
        self.items.append(p)
        return True


def _subsample(problems: list[GemmProblem], count: int | None, seed: int,
               salt: str) -> list[GemmProblem]:
    """A seeded subset that keeps the original order, so subsets read like the full list."""
    if count is None or count >= len(problems):
        return list(problems)
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    idx = sorted(_rng(seed, "subsample:" + salt).sample(range(len(problems)), count))
    return [problems[i] for i in idx]


def _loguniform_int(rng: random.Random, lo: int, hi: int) -> int:
    return min(hi, max(lo, int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 0.5)))))))


def _is_prime(x: int) -> bool:
    if x < 2:
        return False
    if x % 2 == 0:
        return x == 2
    r = math.isqrt(x)
    f = 3
    while f <= r:
        if x % f == 0:
            return False
        f += 2
    return True


def _prime_near(x: int, lo: int, hi: int) -> int:
    """The first prime >= x within [lo, hi], else the last one below x, else x itself."""
    for v in range(max(x, lo), hi + 1):
        if _is_prime(v):
            return v
    for v in range(min(x, hi), lo - 1, -1):
        if _is_prime(v):
            return v
    return x


# ---------------------------------------------------------------------------------------------
# Token counts
# ---------------------------------------------------------------------------------------------
#: Non-power-of-two token counts seen in practice (batch x sequence remainders, chunked prefill
#: sizes, round decimal batch sizes). Fixed, so every seed measures them.
FIXED_TOKEN_COUNTS: tuple[int, ...] = (3, 5, 7, 13, 24, 48, 100, 129, 200, 384, 777, 1000, 1536,
                                       3000, 5000, 10000)


def token_counts(seed: int = 0, per_octave: int = 1, hi: int = MAX_TOKENS) -> list[int]:
    """M values: powers of two 1..hi, :data:`FIXED_TOKEN_COUNTS`, and seeded values between.

    Powers of two alone would teach a picker that M is always a multiple of every tile size;
    the fixed odd counts cover the well-known awkward cases and the seeded ones (``per_octave``
    inside each octave, alternately forced odd) cover the rest without hand-picking.
    """
    rng = _rng(seed, "tokens")
    values = {1 << i for i in range(hi.bit_length()) if (1 << i) <= hi}
    values |= {v for v in FIXED_TOKEN_COUNTS if v <= hi}
    i = 2
    while (1 << i) + 1 < min(hi, 1 << (i + 1)):
        lo_, hi_ = (1 << i) + 1, min(hi, (1 << (i + 1)) - 1)
        for j in range(per_octave):
            v = rng.randint(lo_, hi_)
            if j % 2 == 0:
                v |= 1
                if v > hi_:
                    v -= 2
            values.add(v)
        i += 1
    return sorted(values)


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------
def _model_names(models: Iterable[str] | None) -> list[str]:
    """Model names, or families expanded to their models, in MODELS order."""
    if models is None:
        return list(MODELS)
    want = list(models)
    out = []
    for w in want:
        if w in MODELS:
            out.append(w)
            continue
        fam = [name for name, c in MODELS.items() if c.family == w]
        if not fam:
            raise KeyError(f"unknown model or family {w!r}: models {sorted(MODELS)}, families "
                           f"{sorted({c.family for c in MODELS.values()})}")
        out += fam
    return list(dict.fromkeys(out))


def _llm_entries(dtype, layout: str, seed: int, m_values: Sequence[int] | None,
                 models: Iterable[str] | None, configs: Iterable[ModelConfig] | None = None
                 ) -> list[tuple[Projection, GemmProblem]]:
    ms = sorted(set(token_counts(seed) if m_values is None else (int(m) for m in m_values)))
    col = _Collector(dtype, layout)
    out = []
    if configs is None:
        configs = [MODELS[name] for name in _model_names(models)]
    for cfg in configs:
        for proj in llm_projections(cfg):
            for m in ms:
                if col.add(m, proj.n, proj.k):
                    out.append((proj, col.items[-1]))
    return out


def llm(dtype="bf16", layout: str = "rr", seed: int = 0, m_values: Sequence[int] | None = None,
        models: Iterable[str] | None = None) -> list[GemmProblem]:
    """Every model projection (:func:`llm_projections`) times every token count M.

    Shapes shared by several models (Mistral and Mixtral experts, GPT-2 and BERT) appear once.
    ``models`` takes model names or family names (e.g. ``["llama3", "gpt2-xl"]``).
    """
    return [p for _, p in _llm_entries(dtype, layout, seed, m_values, models)]


def square(dtype="bf16", layout: str = "rr") -> list[GemmProblem]:
    """Square and near-square sizes 64..16384: the classic benchmark grid.

    Kept because it is where vendor libraries are most tuned, so it is the fairest place to
    compare against them; the +/-1 sizes (4095, 4097) catch pickers that assume divisibility.
    """
    pow2 = [1 << i for i in range(6, 15)]
    mult128 = [192, 384, 640, 768, 1152, 1280, 1536, 2304, 2560, 3072, 3584, 5120, 6144,
               7168, 10240, 12288]
    decimal = [100, 500, 1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000, 12000, 16000]
    off1 = [v + d for v in pow2 for d in (-1, 1) if 64 <= v + d <= 16384]
    sizes = sorted(set(pow2 + mult128 + decimal + off1))
    col = _Collector(dtype, layout)
    for s in sizes:
        col.add(s, s, s)
    for s in pow2:  # near-square: one dimension halved / doubled / off by one
        h, d = max(64, s // 2), min(16384, 2 * s)
        for m, n, k in ((s, s, h), (s, s, d), (s, d, s), (d, s, s), (h, s, s), (s, h, s),
                        (s + 1, s - 1, s), (s - 1, s, s + 1), (s, s + 1, s - 1)):
            col.add(m, n, k)
    return col.items


def random_loguniform(count: int = 500, dtype="bf16", layout: str = "rr", seed: int = 0,
                      lo: int = 1, hi: int = 32768, odd_fraction: float = 0.25,
                      prime_fraction: float = 0.1) -> list[GemmProblem]:
    """``count`` random (M, N, K), each dimension log-uniform in [lo, hi].

    Log-uniform because kernel behaviour changes per octave, not per unit; a fraction of the
    dimensions is forced odd (no vector-width alignment) or prime (no tile divides it), since
    uniform draws rarely produce the worst cases. Draws beyond the caps or repeated are redrawn.
    """
    if not 1 <= lo <= hi:
        raise ValueError(f"need 1 <= lo <= hi, got lo={lo}, hi={hi}")
    rng = _rng(seed, "loguniform")
    col = _Collector(dtype, layout)
    attempts = 0
    while len(col.items) < count and attempts < 50 * count + 1000:
        attempts += 1
        dims = []
        for _ in range(3):
            v = _loguniform_int(rng, lo, hi)
            r = rng.random()
            if r < prime_fraction:
                v = _prime_near(v, lo, hi)
            elif r < prime_fraction + odd_fraction:
                v = v | 1 if (v | 1) <= hi else v - 1 if v > lo else v
            dims.append(v)
        col.add(*dims)
    return col.items


def tall_skinny(dtype="bf16", layout: str = "rr", seed: int = 0,
                count: int | None = None) -> list[GemmProblem]:
    """One of M, N tiny (1..64), the other large: decode steps and skinny weight updates.

    These are memory bound and want split-K or narrow tiles; both orientations are listed
    because a kernel's M and N tiles are rarely symmetric. A seeded extra set fills the gaps.
    """
    small = (1, 2, 4, 7, 16, 33, 64)
    large = (2048, 8192, 16384, 65536, 131072)
    ks = (256, 1024, 4096, 8192)
    col = _Collector(dtype, layout)
    for s in small:
        for big in large:
            for k in ks:
                col.add(s, big, k)
                col.add(big, s, k)
    rng = _rng(seed, "tall_skinny")
    for _ in range(60):
        s, big, k = (_loguniform_int(rng, 1, 64), _loguniform_int(rng, 2048, 262144),
                     _loguniform_int(rng, 64, 16384))
        col.add(*((s, big, k) if rng.random() < 0.5 else (big, s, k)))
    return _subsample(col.items, count, seed, "tall_skinny")


def k_heavy(dtype="bf16", layout: str = "rr", seed: int = 0,
            count: int | None = None) -> list[GemmProblem]:
    """K at least 8x larger than M and N: weight-gradient GEMMs and long reductions.

    With few output tiles the GPU is idle unless the reduction is split, so these are the
    shapes that decide whether split-K configs earn their place in the search space.
    """
    mn = (1, 16, 64, 128, 257, 1024)
    ks = (8192, 32768, 100000, 262144, 1048576)
    col = _Collector(dtype, layout)
    for m in mn:
        for n in mn:
            for k in ks:
                if k >= 8 * max(m, n):
                    col.add(m, n, k)
    rng = _rng(seed, "k_heavy")
    for _ in range(60):
        m, n = _loguniform_int(rng, 1, 2048), _loguniform_int(rng, 1, 2048)
        k = _loguniform_int(rng, max(8 * max(m, n), 4096), 1 << 20)
        col.add(m, n, k)
    return _subsample(col.items, count, seed, "k_heavy")


def edge_cases(dtype="bf16", layout: str = "rr", seed: int = 0,
               count: int | None = None) -> list[GemmProblem]:
    """At least one of M, N, K equal to 1: degenerate GEMMs (GEMV, outer products, dot products).

    They break assumptions (empty reductions per tile, 1-wide vectors, masks everywhere), so
    a picker must handle them even if no config is fast on them.
    """
    others = (1, 2, 3, 8, 17, 128, 1000, 4096, 4097, 65536)
    col = _Collector(dtype, layout)
    for a in others:
        for b in others:
            col.add(1, a, b)
            col.add(a, 1, b)
            col.add(a, b, 1)
    return _subsample(col.items, count, seed, "edge")


# ---------------------------------------------------------------------------------------------
# Train / validation
# ---------------------------------------------------------------------------------------------
DEFAULT_N_TRAIN = 1500
DEFAULT_N_VAL = 300
_LLM_FRACTION_TRAIN = 0.55
_LLM_FRACTION_VAL = 0.6
_SYNTH_VAL_FRACTION = 0.25


def _synthetic_pool(dtype, layout: str, seed: int) -> list[GemmProblem]:
    col = _Collector(dtype, layout)
    for src in (square(dtype, layout), random_loguniform(800, dtype, layout, seed),
                tall_skinny(dtype, layout, seed), k_heavy(dtype, layout, seed),
                edge_cases(dtype, layout, seed)):
        for p in src:
            col.add(p.m, p.n, p.k)
    return col.items


def _round_robin(entries: list[tuple[tuple[int, int], GemmProblem]], count: int,
                 rng: random.Random) -> list[GemmProblem]:
    """Take ``count`` problems cycling over weight shapes (n, k), M shuffled within each, so a
    small sample still covers every weight shape instead of a few shapes at many M."""
    groups: dict[tuple[int, int], list[GemmProblem]] = {}
    for key, p in entries:
        groups.setdefault(key, []).append(p)
    order = list(groups)
    rng.shuffle(order)
    for key in order:
        rng.shuffle(groups[key])
    out: list[GemmProblem] = []
    depth = 0
    while len(out) < count:
        took = False
        for key in order:
            if depth < len(groups[key]):
                out.append(groups[key][depth])
                took = True
                if len(out) == count:
                    break
        if not took:
            break
        depth += 1
    return out


def training_and_validation(dtype="bf16", layout: str = "rr", seed: int = 0,
                            n_train: int | None = DEFAULT_N_TRAIN,
                            n_val: int | None = DEFAULT_N_VAL,
                            ) -> tuple[list[GemmProblem], list[GemmProblem]]:
    """A fixed (per seed) train / validation split whose shapes never overlap.

    Hold-out rule, chosen so that validation measures generalisation to unseen weights:

    1. Every model of :data:`HOLDOUT_FAMILIES` (Qwen2.5, Phi-3) is validation-only, and its
       weight shapes (N, K) are banned from training altogether: any training problem, LLM or
       synthetic, with such an (N, K) is dropped (e.g. Llama-2-13B's MLP, which Qwen2.5-14B
       shares). A picker is thus judged on weight shapes it has never seen at any M.
    2. The synthetic shapes are split by a seeded draw: about a quarter go to the validation
       pool; no (M, N, K) of that pool is ever used for training.

    Each set is then drawn from its pool (validation ~60% LLM, training ~55% LLM; LLM problems
    are taken round-robin over weight shapes so every shape is covered). The pools do not
    depend on ``n_train`` / ``n_val``, so asking for more training data never moves a shape
    across the split. ``None`` means the whole pool. Both lists are sorted by (N, K, M).
    """
    held = _model_names(HOLDOUT_FAMILIES)
    kept = [name for name in MODELS if name not in held]
    val_llm = _llm_entries(dtype, layout, seed, None, held)
    held_nk = {(proj.n, proj.k) for proj, _ in val_llm}
    train_llm = [(proj, p) for proj, p in _llm_entries(dtype, layout, seed, None, kept)
                 if (p.n, p.k) not in held_nk]
    llm_mnk = {_mnk(p) for _, p in val_llm} | {_mnk(p) for _, p in train_llm}

    split_rng = _rng(seed, "split")
    val_synth, train_synth = [], []
    for p in _synthetic_pool(dtype, layout, seed):
        to_val = split_rng.random() < _SYNTH_VAL_FRACTION  # drawn for every shape: stable split
        if _mnk(p) in llm_mnk:
            continue
        if to_val:
            val_synth.append(p)
        elif (p.n, p.k) not in held_nk:
            train_synth.append(p)

    def draw(llm_entries, synth, n, llm_fraction, salt):
        rng = _rng(seed, salt)
        entries = [((p.n, p.k), p) for _, p in llm_entries]
        if n is None:
            chosen = [p for _, p in entries] + list(synth)
        else:
            want_llm = min(len(entries), max(0, n - len(synth), round(n * llm_fraction)))
            chosen = _round_robin(entries, want_llm, rng)
            pool = list(synth)
            rng.shuffle(pool)
            chosen += pool[:n - len(chosen)]
            if len(chosen) < n:
                raise ValueError(f"only {len(chosen)} {salt} shapes are available, {n} requested")
        return sorted(chosen, key=lambda p: (p.n, p.k, p.m))

    val = draw(val_llm, val_synth, n_val, _LLM_FRACTION_VAL, "validation")
    train = draw(train_llm, train_synth, n_train, _LLM_FRACTION_TRAIN, "train")
    # The construction guarantees these; a violation is a bug here, not a user error.
    assert not {_mnk(p) for p in val} & {_mnk(p) for p in train}
    assert not held_nk & {(p.n, p.k) for p in train}
    return train, val


def held_out_weights() -> frozenset[tuple[int, int]]:
    """The weight shapes (N, K) of :data:`HOLDOUT_FAMILIES`: no training problem may have one,
    at any M, dtype or layout (rule 1 of :func:`training_and_validation`). Training
    (:func:`tilepick.model.train.train`) drops such problems from whatever folders it is
    given, so a list drawn without this rule cannot leak them into a model."""
    return frozenset((proj.n, proj.k) for name in _model_names(HOLDOUT_FAMILIES)
                     for proj in llm_projections(name))


def _training_only_exclusions(dtype, layout: str, seed: int) -> tuple[set, set]:
    """What a training-only set must avoid: the held-out families' weight shapes (N, K), and
    every (M, N, K) of the train and validation pools."""
    held_nk = set(held_out_weights())
    train, val = training_and_validation(dtype, layout, seed, None, None)
    return held_nk, {_mnk(p) for p in train} | {_mnk(p) for p in val}


def _training_only_draws(dtype, layout: str, seed: int, salt: str, count: int,
                         draw) -> list[GemmProblem]:
    """``count`` problems from ``draw(rng, problems so far) -> (m, n, k)`` (a seeded stream of
    its own), skipping any (M, N, K) of the train and validation pools and any held-out
    weight shape (N, K)."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    held_nk, taken = _training_only_exclusions(dtype, layout, seed)
    rng = _rng(seed, salt)
    col = _Collector(dtype, layout)
    for _ in range(50 * count):
        if len(col.items) >= count:
            break
        m, n, k = draw(rng, len(col.items))
        if (m, n, k) not in taken and (n, k) not in held_nk:
            col.add(m, n, k)
    return col.items


def train_extra(dtype="bf16", layout: str = "rr", seed: int = 0,
                count: int | None = None) -> list[GemmProblem]:
    """More training problems: the projections of :data:`EXTRA_MODELS` at every token count,
    without any weight shape (N, K) of the held-out families, any (M, N, K) of the validation
    pool, or any of the ``train`` pool (measured or measurable there already). ``count`` takes
    that many round-robin over the weight shapes (seeded); sorted by (N, K, M)."""
    held_nk, taken = _training_only_exclusions(dtype, layout, seed)
    entries = [((p.n, p.k), p) for _, p in _llm_entries(dtype, layout, seed, None, None,
                                                         EXTRA_MODELS.values())
               if (p.n, p.k) not in held_nk and _mnk(p) not in taken]
    n = len(entries) if count is None else min(count, len(entries))
    return sorted(_round_robin(entries, n, _rng(seed, "train_extra")),
                  key=lambda p: (p.n, p.k, p.m))


def train_narrow(dtype="bf16", layout: str = "rr", seed: int = 0,
                 count: int | None = 400) -> list[GemmProblem]:
    """More training problems of the shapes the model ranks worst out of fold (session 10:
    problems whose best config is split-K, 66 of 5,610, 91.8% and 81.7% mean efficiency;
    narrow tiles for skinny outputs): seeded log-uniform draws, alternately narrow (one of M,
    N in [1, 64], the other in [256, 262144], K in [16, 65536]) and K-heavy (M, N in [1,
    2048], K from 8 x max(M, N) and 4096 up to 2^20). Never an (M, N, K) of the validation or
    the train pool, nor a weight shape (N, K) of the held-out families."""
    def draw(rng, have):
        if have % 2 == 0:
            small, big = _loguniform_int(rng, 1, 64), _loguniform_int(rng, 256, 262144)
            m, n = (small, big) if rng.random() < 0.5 else (big, small)
            return m, n, _loguniform_int(rng, 16, 65536)
        m, n = _loguniform_int(rng, 1, 2048), _loguniform_int(rng, 1, 2048)
        return m, n, _loguniform_int(rng, max(8 * max(m, n), 4096), 1 << 20)
    return _training_only_draws(dtype, layout, seed, "train_narrow", 400 if count is None
                                else count, draw)


def _transformer_width(rng) -> int:
    """A layer width: log-uniform in [1024, 65536], rounded to a multiple of 256."""
    return 256 * max(4, round(_loguniform_int(rng, 1024, 65536) / 256))


def train_decode(dtype="bf16", layout: str = "rr", seed: int = 0,
                 count: int | None = 300) -> list[GemmProblem]:
    """Decode steps: M in [1, 16] tokens against one weight, N and K log-uniform in
    [1024, 65536] rounded to multiples of 256 (transformer widths). Why: the model ranks M = 1
    worst on validation (rr 96.9%, rc 95.5%) and, on unseen weights, picks pointer configs
    a few % slower than cuBLAS (LLM suite, N = K = 8192), while the train pool holds each
    weight at only a few token counts. Never an (M, N, K) of the validation or the train pool,
    nor a weight shape (N, K) of the held-out families."""
    def draw(rng, have):
        m = _loguniform_int(rng, 1, 16)
        n = _transformer_width(rng)
        return m, n, _transformer_width(rng)
    return _training_only_draws(dtype, layout, seed, "train_decode", 300 if count is None
                                else count, draw)


def train_midm(dtype="bf16", layout: str = "rr", seed: int = 0,
               count: int | None = 300) -> list[GemmProblem]:
    """Batches of 48-320 tokens against one weight (half of them a round batch: 64, 96, 128, 192
    or 256), N and K transformer widths: half of them multiples of 4096 in [4096, 65536], half
    multiples of 256 in [1024, 65536]. Why: cuBLAS is jagged there (H200, ``x @ W``): at M =
    128 it runs 1.17-1.72x slower than a TMA config on weights 8192 x 28672 and 57344 x 8192
    (LLM suite, hybrid mode), 0.55-0.61 of the best on the four training weights like them,
    but within 5% on N = 32000; with so few such problems the model keeps cuBLAS (it predicts
    it at twice its speed there). Never an (M, N, K) of the validation or the train pool, nor
    a weight shape (N, K) of the held-out families."""
    def width(rng):
        if rng.random() < 0.5:
            return 4096 * max(1, round(_loguniform_int(rng, 4096, 65536) / 4096))
        return _transformer_width(rng)

    def draw(rng, have):
        m = rng.choice((64, 96, 128, 192, 256)) if have % 2 else _loguniform_int(rng, 48, 320)
        n = width(rng)
        return m, n, width(rng)
    return _training_only_draws(dtype, layout, seed, "train_midm", 300 if count is None
                                else count, draw)


def train_small_k(dtype="bf16", layout: str = "rr", seed: int = 0,
                  count: int | None = 160) -> list[GemmProblem]:
    """Outer-product-like problems: K in [1, 64] (half of them K <= 8) under an output of
    2^16-2^27 elements, M and N log-uniform in [16, 65536], N a multiple of 16 on every other
    draw. Why: on the fp8 validation set the three worst picks (46-48% of the best) are K = 1
    and K = 56 problems with N a multiple of 8, where the TMA-repack kernel runs ~2x the
    pointer kernel; the fp8 training data has 60 problems with K <= 64 and only two of them
    with an output that aligned and that large, both won by TMA-repack, while on the odd-N
    ones the pointer kernel wins 2-3x (BENCHMARKS, "Session 24"). Never an (M, N, K) of the
    validation or the train pool, nor a weight shape (N, K) of the held-out families."""
    def draw(rng, have):
        k = _loguniform_int(rng, 1, 8) if have % 4 < 2 else _loguniform_int(rng, 9, 64)
        while True:
            m, n = _loguniform_int(rng, 16, 65536), _loguniform_int(rng, 16, 65536)
            if have % 2 == 0:
                n = 16 * max(1, round(n / 16))
            if (1 << 16) <= m * n <= (1 << 27):
                return m, n, k
    return _training_only_draws(dtype, layout, seed, "train_small_k", 160 if count is None
                                else count, draw)


def train_thin_long_k(dtype="bf16", layout: str = "rr", seed: int = 0,
                      count: int | None = 160) -> list[GemmProblem]:
    """Thin outputs over long K, alternately: decode steps (M in [1, 4], N log-uniform in
    [1, 4096], K in [1024, 65536]) and tiny outputs (M, N log-uniform in [1, 128], K in
    [2048, 262144]). Why: after the small-K problems, the fp8 validation set's worst picks are
    here: the GEMV's K block on a 17-wide output (54% of the best with K blocks of 256 where
    2048 wins), and the fused split-K's split count on tiny outputs (70-76% with 16 splits where
    32 win); the fp8 training data has 167 problems with M x N <= 2^16 and K >= 2048, bf16's
    1,528 (BENCHMARKS, "Session 24"). Never an (M, N, K) of the validation or the train pool,
    nor a weight shape (N, K) of the held-out families."""
    def draw(rng, have):
        if have % 2 == 0:
            return (_loguniform_int(rng, 1, 4), _loguniform_int(rng, 1, 4096),
                    _loguniform_int(rng, 1024, 65536))
        return (_loguniform_int(rng, 1, 128), _loguniform_int(rng, 1, 128),
                _loguniform_int(rng, 2048, 262144))
    return _training_only_draws(dtype, layout, seed, "train_thin_long_k", 160 if count is None
                                else count, draw)


def train_low_flop(dtype="bf16", layout: str = "rr", seed: int = 0,
                   count: int | None = 600) -> list[GemmProblem]:
    """Alternately narrow outputs (N log-uniform in [1, 16], M in [16, 131072], K in [64,
    131072]) and small odd problems (M, N, K log-uniform in [1, 4096], 2MNK <= 2^31: a few
    microseconds of work). Why (session 46, shipped bf16 model, rr validation set): the 30
    problems with N <= 16 are 15% of the set and hold 35% of the model's top-1 loss and 43%
    of its top-4-benchmarked loss; the 69 under 1 GFLOP hold 65% and 70%; the training data
    has about 400 distinct rr problems with N <= 16 among ~4,000. Never an (M, N, K) of the
    validation or the train pool, nor a weight shape (N, K) of the held-out families."""
    def draw(rng, have):
        if have % 2 == 0:
            return (_loguniform_int(rng, 16, 131072), _loguniform_int(rng, 1, 16),
                    _loguniform_int(rng, 64, 131072))
        while True:
            m, n, k = (_loguniform_int(rng, 1, 4096) for _ in range(3))
            if 2 * m * n * k <= 1 << 31:
                return m, n, k
    return _training_only_draws(dtype, layout, seed, "train_low_flop", 600 if count is None
                                else count, draw)


def _even_not_multiple_of_8(x: int) -> int:
    """x rounded down to even, then moved up by 2 if that is a multiple of 8: a multiple of 2
    or 4 but not of 8 (a leading dimension off 16 bytes in bf16); never below 2."""
    x = max(2, 2 * (x // 2))
    return x + 2 if x % 8 == 0 else x


def train_decode_misaligned_k(dtype="bf16", layout: str = "rr", seed: int = 0,
                              count: int | None = 300) -> list[GemmProblem]:
    """Decode steps over big weights whose K is not a multiple of 8: M log-uniform in [1, 16],
    N in [1024, 131072], K in [1024, 65535], K even on two draws of three (a multiple of 2
    or 4, not of 8) and odd on the third. Why (session 47, out of fold over 10,061 problems):
    at M <= 8 with N, K >= 1024 the model reads 98.5-99.2% where K is a multiple of 8 and
    84-94% where it is not (rc odd K 84.1%, rr even K 88.9%), on 12-21 training problems per
    layout and kind. There the winner turns on K: at M = 4 with even K cuBLAS wins and the
    GEMV reads 0.52-0.67 of it (rc 4 x 13280 x 3082: 0.57; the rc validation problem
    3 x 13650 x 12674: 0.80), while with odd K cuBLAS reads 0.59-0.94 of the best and the
    GEMV or the pointer kernels win. Never an (M, N, K) of the validation or the train pool,
    nor a weight shape (N, K) of the held-out families."""
    def draw(rng, have):
        m, n = _loguniform_int(rng, 1, 16), _loguniform_int(rng, 1024, 131072)
        k = _loguniform_int(rng, 1024, 65535)
        if have % 3 < 2:                            # even, not a multiple of 8: <= 65534
            k = _even_not_multiple_of_8(k)
        else:
            k |= 1                                  # odd: <= 65535
        return m, n, k
    return _training_only_draws(dtype, layout, seed, "train_decode_misaligned_k",
                                300 if count is None else count, draw)


def _not_multiple_of_8(rng: random.Random, x: int) -> int:
    """x moved to a nearby value that is not a multiple of 8 elements (16 bytes in bf16): odd
    on half the draws, even (a multiple of 2 or 4) on the other half; never below 1."""
    return x | 1 if rng.random() < 0.5 else _even_not_multiple_of_8(x)


def train_mid_misaligned(dtype="bf16", layout: str = "rr", seed: int = 0,
                         count: int | None = 300) -> list[GemmProblem]:
    """Mid-sized problems with a leading dimension off 16 bytes: M and N log-uniform in
    [17, 8192] with 2^12 <= M x N < 2^24, K log-uniform in [128, 16384]; in turn N a multiple
    of 8 and K not, N not and K a multiple of 8, and neither. Why (session 49, out of fold
    over 11,087 problems, M, N > 16, K >= 128, 2^16 <= M x N < 2^20): where N and K are
    multiples of 8 the model reads 99.2% (rr, 480 problems) and 99.4% (rc, 444); where one is
    not, 85.9% (rr, N aligned, K not: 20 problems), 92.5% (rc, 17), 91.9% (rc, N not, K
    aligned: 22) and 94-96% (neither: 98-111); the rr validation set's worst pick is such a
    problem (511 x 512 x 513, 68.6%: the 16-row pointer tiles win there by 1.4x, a near-tie
    for the model). In rr and rc the leading dimensions are K (A) and N (B, C); an operand
    off 16 bytes is loaded one element per instruction and TMA cannot take it, so the
    families' order turns on which one. Never an (M, N, K) of the validation or the train
    pool, nor a weight shape (N, K) of the held-out families."""
    return _training_only_draws(dtype, layout, seed, "train_mid_misaligned",
                                300 if count is None else count,
                                _misaligned_draw(17, 8192, (1 << 12, 1 << 24), 128, 16384))


def _misaligned_draw(mn_lo: int, mn_hi: int, mn_area: tuple[int, int], k_lo: int, k_hi: int):
    """The draw of the misaligned named sets: M and N log-uniform in [mn_lo, mn_hi] with
    mn_area[0] <= M x N < mn_area[1], K log-uniform in [k_lo, k_hi]; in turn N a multiple of 8
    and K not, N not and K a multiple of 8, and neither."""
    def draw(rng, have):
        while True:
            m, n = _loguniform_int(rng, mn_lo, mn_hi), _loguniform_int(rng, mn_lo, mn_hi)
            if mn_area[0] <= m * n < mn_area[1]:
                break
        k = _loguniform_int(rng, k_lo, k_hi)
        kind = have % 3
        n = 8 * max(3, round(n / 8)) if kind == 0 else _not_multiple_of_8(rng, n)
        k = 8 * max(16, round(k / 8)) if kind == 1 else _not_multiple_of_8(rng, k)
        return m, n, k
    return draw


def train_small_misaligned(dtype="bf16", layout: str = "rr", seed: int = 0,
                           count: int | None = 300) -> list[GemmProblem]:
    """:func:`train_mid_misaligned`'s three alignment kinds on problems of under a wave of
    64 x 64 tiles to a few waves: M and N log-uniform in [128, 2048], K in [128, 4096]. Why
    (session 50): the rr validation set's worst pick, 511 x 512 x 513 (73.3%: the 16-row
    pointer tiles win at 10.0 us, cuBLAS behind copies is picked at 13.6 us), has six rr
    training problems with K off 16 bytes and M, N in [200, 1500], K in [200, 2000], with 0-6
    16-row pointer configs measured on each: where an unaligned operand is loaded one element
    per instruction, spreading it over more programs pays, and the model has barely seen how
    much. Never an (M, N, K) of the validation or the train pool, nor a weight shape (N, K)
    of the held-out families."""
    return _training_only_draws(dtype, layout, seed, "train_small_misaligned",
                                300 if count is None else count,
                                _misaligned_draw(128, 2048, (0, 1 << 32), 128, 4096))


def train_long_k_misaligned(dtype="bf16", layout: str = "rr", seed: int = 0,
                            count: int | None = 300) -> list[GemmProblem]:
    """:func:`train_mid_misaligned`'s three alignment kinds on long-K problems with a small
    output: M and N log-uniform in [1, 512] with M x N < 2^16, K log-uniform in [16384,
    262144]. Why (session 51, out of fold over 12,287 problems, gated): with K >= 16384 and
    M x N < 2^16 the model reads 95.6-99.3% where N and K are multiples of 8 and, where N is
    not, 84.3% (cc, 47 problems), 92.4% (cr, 47), 94.8% (rc, 288), 95.8% (rr, 347); where K is
    not, 89.2% (cc, 40), 91.6% (cr, 40), 95.6-95.7% (rc, rr). The worst validation picks in
    cr (16 x 257 x 32768, 72%) and rc (128 x 257 x 262144, 51%) are of this kind: the split
    over K and the copies behind cuBLAS (`gemm.cublas_repack`) trade places there. cc and cr
    have the fewest such problems. Never an (M, N, K) of the validation or the train pool, nor
    a weight shape (N, K) of the held-out families."""
    return _training_only_draws(dtype, layout, seed, "train_long_k_misaligned",
                                300 if count is None else count,
                                _misaligned_draw(1, 512, (0, 1 << 16), 16384, 262144))


def train_long_k_wide_misaligned(dtype="bf16", layout: str = "rr", seed: int = 0,
                                 count: int | None = 150) -> list[GemmProblem]:
    """:func:`train_long_k_misaligned`'s three alignment kinds and K range on wider outputs: M
    and N log-uniform in [8, 4096] with 2^12 <= M x N < 2^18. Why (session 54): out of fold
    (``benchmarks/results/extra_data_oof_long_k4_s53.json.gz``) that set's problems with
    M x N >= 2^12, about 22 per layout and alignment kind, read 91.6-99.4% (cc with N and K
    off 8: 91.6; rc 94.7, rr 94.7-95.6 where K is off), and the rc validation set's worst pick
    is one of them: 128 x 257 x 262144, where `gemm.cublas_repack` (119 TFLOP/s) is picked
    and the one-launch split-K (235) wins; the model predicts cuBLAS behind copies at 157.
    Shapes over the caps (an operand over 2 GiB) are skipped. Never an (M, N, K) of the
    validation or the train pool, nor a weight shape (N, K) of the held-out families."""
    return _training_only_draws(dtype, layout, seed, "train_long_k_wide_misaligned",
                                150 if count is None else count,
                                _misaligned_draw(8, 4096, (1 << 12, 1 << 18), 16384, 262144))


def train_decode_pow2_n(dtype="bf16", layout: str = "rr", seed: int = 0,
                        count: int | None = 96) -> list[GemmProblem]:
    """Decode steps on power-of-two outputs: M log-uniform in [1, 4], N one of 4096, 8192,
    16384 and 32768 (a quarter each, in turn), K a transformer width (:func:`_transformer_width`).
    Why (session 55): there cuBLAS and the one-launch split-K lie within a few % of each other
    and the vendor gate's call is a coin that retrains flip (rr 1 x 8192 x 8192 of the LLM
    suite went from cuBLAS, 1.00x, to a split-K at 0.94-0.96x in sessions 40 and 54), while
    the training data holds ~100 such rr problems at M <= 4, and the gate misses a third of
    them in sample (``benchmarks/analysis_s55/pocket_gate.py``). Never an
    (M, N, K) of the validation or the train pool, nor a weight shape (N, K) of the held-out
    families (so not 8192 x 8192 nor 8192 x 28672)."""
    widths = (4096, 8192, 16384, 32768)

    def draw(rng, have):
        return _loguniform_int(rng, 1, 4), widths[have % 4], _transformer_width(rng)
    return _training_only_draws(dtype, layout, seed, "train_decode_pow2_n",
                                96 if count is None else count, draw)


def mixed(dtype="bf16", layout: str = "rr", seed: int = 0,
          count: int | None = 1000) -> list[GemmProblem]:
    """A blend of every generator (40% LLM, 25% random, 10% each square / tall-skinny /
    K-heavy, 5% edge) for a quick broad sweep where one list must stand for all shapes."""
    count = 1000 if count is None else count
    weights = (("llm", 0.40), ("random", 0.25), ("square", 0.10), ("tall_skinny", 0.10),
               ("k_heavy", 0.10), ("edge", 0.05))
    sources = {
        "llm": lambda: llm(dtype, layout, seed),
        "random": lambda: random_loguniform(max(count, 1), dtype, layout, seed),
        "square": lambda: square(dtype, layout),
        "tall_skinny": lambda: tall_skinny(dtype, layout, seed),
        "k_heavy": lambda: k_heavy(dtype, layout, seed),
        "edge": lambda: edge_cases(dtype, layout, seed),
    }
    col = _Collector(dtype, layout)
    leftovers: list[GemmProblem] = []
    for name, w in weights:
        items = sources[name]()
        _rng(seed, "mixed:" + name).shuffle(items)
        want = round(count * w)
        taken = 0
        for p in items:
            if taken < want:
                taken += col.add(p.m, p.n, p.k)
            else:
                leftovers.append(p)
    _rng(seed, "mixed:leftovers").shuffle(leftovers)
    for p in leftovers:  # a source that ran short is made up from the others
        if len(col.items) >= count:
            break
        col.add(p.m, p.n, p.k)
    return col.items[:count]


# ---------------------------------------------------------------------------------------------
# Named sets (for the CLI: --problems NAME)
# ---------------------------------------------------------------------------------------------
ProblemSetFn = Callable[..., list[GemmProblem]]


def _named_llm(dtype, layout, seed, count=None):
    return _subsample(llm(dtype, layout, seed), count, seed, "llm")


def _named_square(dtype, layout, seed, count=None):
    return _subsample(square(dtype, layout), count, seed, "square")


def _named_random(dtype, layout, seed, count=None):
    return random_loguniform(500 if count is None else count, dtype, layout, seed)


def _named_train(dtype, layout, seed, count=None):
    return training_and_validation(dtype, layout, seed, DEFAULT_N_TRAIN if count is None else count,
                                   DEFAULT_N_VAL)[0]


def _named_validation(dtype, layout, seed, count=None):
    return training_and_validation(dtype, layout, seed, DEFAULT_N_TRAIN,
                                   DEFAULT_N_VAL if count is None else count)[1]


#: name -> callable(dtype, layout, seed, count=None) -> list[GemmProblem]. ``count`` subsamples
#: (seeded) or, for "random", "train", "validation" and "mixed", sets the size.
NAMED_SETS: dict[str, ProblemSetFn] = {
    "llm": _named_llm,
    "square": _named_square,
    "random": _named_random,
    "tall_skinny": tall_skinny,
    "k_heavy": k_heavy,
    "edge": edge_cases,
    "train": _named_train,
    "validation": _named_validation,
    "train_extra": train_extra,
    "train_narrow": train_narrow,
    "train_decode": train_decode,
    "train_midm": train_midm,
    "train_small_k": train_small_k,
    "train_thin_long_k": train_thin_long_k,
    "train_low_flop": train_low_flop,
    "train_decode_misaligned_k": train_decode_misaligned_k,
    "train_mid_misaligned": train_mid_misaligned,
    "train_small_misaligned": train_small_misaligned,
    "train_long_k_misaligned": train_long_k_misaligned,
    "train_long_k_wide_misaligned": train_long_k_wide_misaligned,
    "train_decode_pow2_n": train_decode_pow2_n,
    "mixed": mixed,
}


def problem_set(name: str, dtype="bf16", layout: str = "rr", seed: int = 0,
                count: int | None = None) -> list[GemmProblem]:
    """Look up a named set with an error that lists the names, for CLI messages."""
    try:
        fn = NAMED_SETS[name]
    except KeyError:
        raise ProblemError(f"unknown problem set {name!r}: choose one of {sorted(NAMED_SETS)} "
                           "or give a .csv / .jsonl file") from None
    return fn(dtype, layout, seed, count)


def resolve_problems(spec: str, dtype="bf16", layout: str = "rr", seed: int = 0,
                     count: int | None = None) -> list[GemmProblem]:
    """``--problems`` accepts a set name, a problem file, or a dataset (a parquet file or a
    folder of them: its problems of ``dtype`` and ``layout``); names first."""
    if spec in NAMED_SETS:
        return problem_set(spec, dtype, layout, seed, count)
    path = Path(spec)
    if is_dataset(spec):
        return _subsample(dataset_problems(path, dtype, layout), count, seed, "dataset")
    if path.exists():
        return _subsample(read_problem_file(spec, dtype, layout), count, seed, "file")
    return problem_set(spec, dtype, layout, seed, count)  # raises, listing the names


def is_dataset(spec: str) -> bool:
    """Does ``--problems`` name a dataset (a parquet file or a folder) rather than a set name
    or a problem file?"""
    path = Path(spec)
    return spec not in NAMED_SETS and (path.is_dir() or path.suffix == ".parquet")


def dataset_problems(path: str | Path, dtype="bf16", layout: str = "rr") -> list[GemmProblem]:
    """The problems a measured dataset holds (sorted by key), of one dtype and layout: to
    measure more configs of the same problems (e.g. a model's picks, ``sweep --model-top``)."""
    from tilepick.data.io import done_problems, part_files

    if not (Path(path).exists() and part_files(path)):
        raise ProblemError(f"{path}: no parquet files (a dataset folder or .parquet file)")
    keys = done_problems(path)
    problems = [GemmProblem.from_key(k) for k in sorted(keys) if k.startswith("gemm.")]
    tok = DType.parse(dtype).value
    chosen = [p for p in problems if p.dtype.value == tok and p.layout == layout]
    if not chosen:
        found = sorted({(p.dtype.value, p.layout) for p in problems})
        raise ProblemError(f"{path}: no {tok} {layout} problems (it holds dtype/layout "
                           f"{found[:8]})")
    return chosen


# ---------------------------------------------------------------------------------------------
# Problem files
# ---------------------------------------------------------------------------------------------
class ProblemFileError(ProblemError):
    """A problem file that cannot be read; the message starts with ``path:line:``."""


_INT_FIELDS = ("m", "n", "k", "batch", "lda", "ldb", "ldc", "base_align")
_REQUIRED = ("m", "n", "k")
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


def _parse_int(value, field: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{field} must be an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        f = value
    else:
        s = str(value).strip()
        try:
            return int(s)
        except ValueError:
            try:
                f = float(s)
            except ValueError:
                raise ValueError(f"{field} must be an integer, got {value!r}") from None
    if not math.isfinite(f) or f != int(f):
        raise ValueError(f"{field} must be an integer, got {value!r}")
    return int(f)


def _parse_bool(value, field: str) -> bool:
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in ("1", "true", "yes", "y", "t"):
        return True
    if s in ("0", "false", "no", "n", "f"):
        return False
    raise ValueError(f"{field} must be true or false, got {value!r}")


def _row_to_problem(row: dict, dtype, layout: str) -> GemmProblem:
    """One record (CSV row or JSON object) to a problem; empty optional values take defaults."""
    row = {str(k).strip().lower(): v for k, v in row.items() if k is not None}
    row = {k: v for k, v in row.items() if not (isinstance(v, str) and v.strip() == "")
           and v is not None}
    missing = [f for f in _REQUIRED if f not in row]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (every problem needs m, n, k)")
    op = str(row.get("op", "gemm")).strip().lower()
    if op != "gemm":
        raise ValueError(f"op {row['op']!r} is not supported (only 'gemm')")
    kw: dict = {"dtype": str(row.get("dtype", dtype)).strip(),
                "layout": str(row.get("layout", layout)).strip().lower()}
    for f in _INT_FIELDS:
        if f in row:
            kw[f] = _parse_int(row[f], f)
    if "tf32" in row:
        kw["tf32"] = _parse_bool(row["tf32"], "tf32")
    return GemmProblem(**kw)


def _inner_suffix(path: Path) -> str:
    """The type suffix, under a ``.gz``."""
    return (path.with_suffix("") if path.suffix.lower() == ".gz" else path).suffix.lower()


def _is_jsonl(path: Path) -> bool:
    suffix = _inner_suffix(path)
    if suffix == ".csv":
        return False
    if suffix in _JSONL_SUFFIXES:
        return True
    with open_text(path) as fh:  # unknown suffix: sniff the first content
        for line in fh:
            if line.strip():
                return line.lstrip().startswith("{")
    return False


def read_problem_file(path: str | Path, dtype="bf16", layout: str = "rr") -> list[GemmProblem]:
    """Problems from CSV (header with m, n, k and optional batch, dtype, layout, tf32, lda,
    ldb, ldc, base_align) or JSONL (one object per line with the same fields, optional
    ``"op": "gemm"``). ``dtype`` and ``layout`` fill fields a row leaves out.

    Users hand-write or export these files, so errors name ``path:line`` and the problem.
    Blank lines and lines starting with ``#`` are skipped; other unknown columns (a layer name,
    a count, a time from a profiler export) are ignored, so such exports load unchanged.
    The order and any repeats are kept: the file is the user's list.
    """
    path = Path(path)
    if not path.is_file():
        raise ProblemFileError(f"{path}: no such file")
    problems: list[GemmProblem] = []

    def fail(line: int, msg: str):
        raise ProblemFileError(f"{path}:{line}: {msg}")

    if _is_jsonl(path):
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                try:
                    obj = json.loads(s)
                except json.JSONDecodeError as exc:
                    fail(lineno, f"not valid JSON ({exc.msg})")
                if not isinstance(obj, dict):
                    fail(lineno, f"expected a JSON object per line, got {type(obj).__name__}")
                try:
                    problems.append(_row_to_problem(obj, dtype, layout))
                except (ValueError, TypeError) as exc:
                    fail(lineno, str(exc))
        return problems

    with open_text(path, newline="") as fh:
        reader = csv.reader(fh)
        header: list[str] | None = None
        for row in reader:
            lineno = reader.line_num
            if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip().lower() for c in row]
                missing = [f for f in _REQUIRED if f not in header]
                if missing:
                    fail(lineno, f"the header must name columns m, n, k (missing "
                                 f"{', '.join(missing)}); got {row}")
                continue
            if len(row) > len(header):
                fail(lineno, f"{len(row)} values but the header has {len(header)} columns")
            try:
                problems.append(_row_to_problem(dict(zip(header, row)), dtype, layout))
            except (ValueError, TypeError) as exc:
                fail(lineno, str(exc))
        if header is None:
            raise ProblemFileError(f"{path}: empty file (expected a header with m, n, k)")
    return problems


def write_problem_file(problems: Iterable[GemmProblem], path: str | Path) -> Path:
    """Write problems as CSV or JSONL (by suffix, under an optional ``.gz``) so a set can be
    frozen, shared and edited.

    Leading dimensions, tf32 and base alignment are written only when some problem differs
    from the defaults, keeping ordinary files to the six columns people expect.
    """
    path = Path(path)
    problems = list(problems)
    jsonl = _inner_suffix(path) in _JSONL_SUFFIXES
    if not jsonl and _inner_suffix(path) != ".csv":
        raise ProblemFileError(f"{path}: unknown problem file type {path.suffix!r}; "
                               f"use .csv or one of {_JSONL_SUFFIXES}, optionally + .gz")
    rows = []
    extra: set[str] = set()
    for p in problems:
        packed = GemmProblem(p.m, p.n, p.k, p.batch, p.dtype, p.layout, p.tf32)
        row = {"m": p.m, "n": p.n, "k": p.k, "batch": p.batch, "dtype": p.dtype.value,
               "layout": p.layout}
        if p.tf32:
            extra.add("tf32")
        for f in ("lda", "ldb", "ldc"):
            if getattr(p, f) != getattr(packed, f):
                extra.add(f)
        if p.base_align != 16:
            extra.add("base_align")
        row.update({"tf32": p.tf32, "lda": p.lda, "ldb": p.ldb, "ldc": p.ldc,
                    "base_align": p.base_align})
        rows.append(row)
    columns = ["m", "n", "k", "batch", "dtype", "layout"] + [
        f for f in ("tf32", "lda", "ldb", "ldc", "base_align") if f in extra]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_text(path, "w", newline="") as fh:
        if jsonl:
            for row in rows:
                fh.write(json.dumps({"op": "gemm", **{c: row[c] for c in columns}}) + "\n")
        else:
            w = csv.writer(fh)
            w.writerow(columns)
            for row in rows:
                w.writerow([str(row[c]).lower() if c == "tf32" else row[c] for c in columns])
    return path
