"""Kernel configs and the config space of every family, declared once.

A config's ``id`` is the one name of a kernel variant everywhere: datasets, models, predictions,
the perf-db and logs. Its format, ``<family>.m<BM>n<BN>k<BK>.g<G>.w<W>.s<S>[.sk<SK>]`` (for
example ``gemm.tma_persistent.m128n256k64.g8.w8.s3``), the bare family name for vendor
libraries (``gemm.cublas``), or ``<family>.<entry>`` for a named entry of a vendor library
(``gemm.cublaslt.a66.t197.s35.k1.r0.w0.c2.i0.cl5``), round-trips through
:meth:`KernelConfig.from_id`.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass

# family name -> short description. The family is the first part of every config id.
FAMILIES = {
    "gemm.ptr": "masked pointer kernel, any strides and layouts, grouped tile order, "
                "16-byte vector hints where the leading dimensions allow",
    "gemm.tma": "Hopper TMA kernel (tensor descriptors), one program per output tile",
    "gemm.tma_persistent": "Hopper TMA kernel, persistent grid of one program per SM",
    "gemm.tma_repack": "Hopper TMA kernel behind a copy of misaligned operands into "
                       "16-byte-aligned workspace (odd leading dimensions)",
    "gemm.splitk": "split-K pointer kernel, deterministic: fp32 workspace + reduction pass",
    "gemm.splitk_atomic": "split-K pointer kernel, fp32 atomics into a zeroed workspace + cast",
    "gemm.cublas": "cuBLAS through torch (mm / bmm / _scaled_mm)",
    # appended after cuBLAS: family codes are positions in this dict, and models trained
    # before a family existed keep theirs (features.spec accepts such a model's shorter list)
    "gemm.gemv": "GEMV for decode steps (M <= 4, B K-contiguous): rows of B streamed with "
                 "16-byte loads into block_m rows of A, fp32 products, no tensor cores",
    "gemm.splitk_fused": "split-K pointer kernel in one launch: fp32 atomics into a zero-kept "
                         "workspace, the last program of a tile casts and re-zeroes it",
    "gemm.tma_splitk": "Hopper TMA kernel split over K in one launch (the partials meet as in "
                       "gemm.splitk_fused; the last program stores through the copy engine)",
    "gemm.gemv_t": "GEMV on C^T = B^T A^T for narrow outputs (N <= 4, A row-major): rows of A "
                   "streamed with 16-byte loads into block_n columns of B, fp32 products",
    "gemm.gemv_t_splitk": "gemm.gemv_t split over K in one launch (the partials meet as in "
                          "gemm.splitk_fused): few rows of A against a long K",
    "gemm.cublas_repack": "cuBLAS behind a copy of misaligned operands into 16-byte-aligned "
                          "padded workspace (odd leading dimensions: cuBLAS's align1 path)",
    "gemm.cublaslt": "cuBLASLt's heuristic entries run by name through ctypes: the algorithms "
                     "(tile, stages, split-K, cluster) besides the one torch.matmul runs",
    "gemm.gemv_n_splitk": "GEMV for decode steps of x @ W (M = 1, B N-contiguous): "
                          "[block_k, block_n] tiles of B streamed along N with 16-byte loads, "
                          "fp32 products, K split in one launch (partials as in "
                          "gemm.splitk_fused)",
}
# the first is the baseline everyone compares with (torch.matmul as it is). Each of these has
# one config, whose id is the family name (code relies on that).
VENDOR_FAMILIES = ("gemm.cublas", "gemm.cublas_repack")
# vendor families whose configs are named entries of the library (``KernelConfig.entry``):
# no tile parameters, no static space (the library's heuristic lists them per problem)
NAMED_VENDOR_FAMILIES = ("gemm.cublaslt",)
# a cuBLASLt entry name (``cublaslt_lib.LtAlgo.name``): algorithm id, tile, stages, split-K,
# reduction, swizzle, custom option, inner shape, cluster shape, each a decimal number
LT_ENTRY_RE = re.compile(r"a(\d+)\.t(\d+)\.s(\d+)\.k(\d+)\.r(\d+)\.w(\d+)\.c(\d+)"
                         r"\.i(\d+)\.cl(\d+)")
_LT_PREFIXES = ("a", "t", "s", "k", "r", "w", "c", "i", "cl")


def lt_entry_canonical(entry: str) -> str | None:
    """The one spelling of a cuBLASLt entry name (numbers without leading zeros, as
    ``LtAlgo.name`` writes them), or None when ``entry`` is not such a name."""
    m = LT_ENTRY_RE.fullmatch(entry)
    if m is None:
        return None
    return ".".join(f"{p}{int(v)}" for p, v in zip(_LT_PREFIXES, m.groups()))

# The config space of each Triton family, declared once. Validity for a given problem and GPU
# (shared memory, registers, alignment, TMA rules) is the solver's business.
_TILE = (16, 32, 64, 128, 256)
SPACES: dict[str, dict[str, tuple]] = {
    "gemm.ptr": dict(block_m=_TILE, block_n=_TILE, block_k=(32, 64, 128, 256),
                     group_m=(1, 8), num_warps=(4, 8), num_stages=(3, 4, 5), split_k=(1,)),
    "gemm.tma": dict(block_m=(64, 128, 256), block_n=(64, 128, 256), block_k=(32, 64, 128),
                     group_m=(1, 8), num_warps=(4, 8), num_stages=(2, 3, 4, 5, 6), split_k=(1,)),
    "gemm.tma_persistent": dict(block_m=(64, 128, 256), block_n=(64, 128, 256),
                                block_k=(32, 64, 128), group_m=(1, 8), num_warps=(4, 8),
                                num_stages=(2, 3, 4, 5, 6), split_k=(1,)),
    "gemm.tma_repack": dict(block_m=(64, 128, 256), block_n=(64, 128, 256),
                            block_k=(32, 64, 128), group_m=(1, 8), num_warps=(4, 8),
                            num_stages=(2, 3, 4, 5, 6), split_k=(1,)),
    "gemm.splitk": dict(block_m=(16, 32, 64), block_n=(64, 128, 256), block_k=(64, 128, 256),
                        group_m=(8,), num_warps=(4, 8), num_stages=(3, 4),
                        split_k=(2, 4, 8, 16)),
    "gemm.splitk_atomic": dict(block_m=(16, 32, 64), block_n=(64, 128, 256),
                               block_k=(64, 128, 256), group_m=(8,), num_warps=(4, 8),
                               num_stages=(3, 4), split_k=(2, 4, 8, 16)),
    # block_m rows of A per program, each weight tile read once for all of them; block_n rows
    # of B^T, block_k the K step of each 16-byte-load sweep (decode_probe2's best at M = 1:
    # n1-n4 x k512-k2048, 4-8 warps, 1 or 3 stages)
    "gemm.gemv": dict(block_m=(1, 2, 4), block_n=(1, 2, 4, 8),
                      block_k=(256, 512, 1024, 2048),
                      group_m=(1,), num_warps=(4, 8), num_stages=(1, 3), split_k=(1,)),
    # skinny problems against a large weight (M <= 128): up to 128 rows of A in one tile, so
    # the weight is read once, and up to 32 splits to fill the GPU
    "gemm.splitk_fused": dict(block_m=(16, 32, 64, 128), block_n=(32, 64, 128, 256),
                              block_k=(64, 128, 256), group_m=(8,), num_warps=(4, 8),
                              num_stages=(3, 4, 5), split_k=(2, 4, 8, 16, 32)),
    # M = 64-256 against a large weight: wgmma tiles fed by TMA, K split to fill the SMs
    "gemm.tma_splitk": dict(block_m=(64, 128), block_n=(64, 128, 256), block_k=(64, 128),
                            group_m=(8,), num_warps=(4, 8), num_stages=(3, 4, 5),
                            split_k=(2, 4, 8, 16)),
    # narrow outputs (N <= 4): block_m rows of A streamed per program (more of them, in shorter
    # K steps, than the decode GEMV's weight rows: A's K is often short here), block_n of C's
    # columns per program
    "gemm.gemv_t": dict(block_m=(1, 2, 4, 8, 16, 32, 64), block_n=(1, 2, 4),
                        block_k=(32, 64, 128, 256, 512, 1024, 2048),
                        group_m=(1,), num_warps=(4, 8), num_stages=(1, 3), split_k=(1,)),
    # the same with K split (valid only while the unsplit grid leaves SMs idle): long K steps,
    # each split a few of them
    "gemm.gemv_t_splitk": dict(block_m=(1, 2, 4, 8, 16, 32, 64), block_n=(1, 2, 4),
                               block_k=(256, 512, 1024, 2048), group_m=(1,), num_warps=(4, 8),
                               num_stages=(1, 3), split_k=(2, 4, 8, 16, 32, 64)),
    # x @ W decode steps: wide column blocks, thin K steps, many splits (session 16's probe:
    # its best were 512-1024 columns x 16-32 rows of K, 4 warps, 4-64 splits)
    "gemm.gemv_n_splitk": dict(block_m=(1,), block_n=(128, 256, 512, 1024),
                               block_k=(8, 16, 32, 64), group_m=(1,), num_warps=(4, 8),
                               num_stages=(1,), split_k=(2, 4, 8, 16, 32, 64)),
}
PARAM_NAMES = ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages", "split_k")


class ConfigError(ValueError):
    """A config id or parameter set that does not name a kernel of a known family."""


@dataclass(frozen=True, order=True)
class KernelConfig:
    family: str
    block_m: int = 0
    block_n: int = 0
    block_k: int = 0
    group_m: int = 0
    num_warps: int = 0
    num_stages: int = 0
    split_k: int = 1
    entry: str = ""   # the library entry's name (gemm.cublaslt only: a cuBLASLt algorithm)

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ConfigError(f"unknown kernel family {self.family!r}: known {sorted(FAMILIES)}")
        if self.family in NAMED_VENDOR_FAMILIES:
            if any(getattr(self, p) != 0 for p in PARAM_NAMES if p != "split_k") \
                    or self.split_k != 1:
                raise ConfigError(f"vendor family {self.family} takes no parameters, got "
                                  f"{ {p: getattr(self, p) for p in PARAM_NAMES} }")
            if not isinstance(self.entry, str):
                raise ConfigError(f"{self.family}: entry must be a str, got {self.entry!r}")
            canonical = lt_entry_canonical(self.entry)
            if canonical is None:
                raise ConfigError(f"{self.family}: entry {self.entry!r} is not a cuBLASLt "
                                  "algorithm name (e.g. a66.t197.s35.k1.r0.w0.c2.i0.cl5)")
            if canonical != self.entry:
                raise ConfigError(f"{self.family}: non-canonical entry {self.entry!r}; the "
                                  f"entry is {canonical!r}")
            return
        if self.entry != "":
            raise ConfigError(f"{self.family} has no named entries, got entry={self.entry!r}")
        if self.is_vendor:
            if any(getattr(self, p) not in (0, 1) for p in PARAM_NAMES):
                raise ConfigError(f"vendor family {self.family} takes no parameters")
            return
        for p in PARAM_NAMES:
            if getattr(self, p) <= 0:
                raise ConfigError(f"{self.family}: {p} must be > 0")
        if ("splitk" in self.family) != (self.split_k > 1):
            raise ConfigError(f"{self.family}: split_k={self.split_k} does not fit the family")

    @property
    def is_vendor(self) -> bool:
        return self.family in VENDOR_FAMILIES or self.family in NAMED_VENDOR_FAMILIES

    @property
    def id(self) -> str:
        if self.entry:
            return f"{self.family}.{self.entry}"
        if self.is_vendor:
            return self.family
        s = (f"{self.family}.m{self.block_m}n{self.block_n}k{self.block_k}"
             f".g{self.group_m}.w{self.num_warps}.s{self.num_stages}")
        return s + (f".sk{self.split_k}" if self.split_k > 1 else "")

    def __str__(self) -> str:
        return self.id

    @property
    def params(self) -> dict:
        if self.is_vendor:
            return {}
        return {p: getattr(self, p) for p in PARAM_NAMES}

    _ID_RE = re.compile(r"^(?P<fam>[a-z0-9_.]+?)\.m(?P<bm>\d+)n(?P<bn>\d+)k(?P<bk>\d+)"
                        r"\.g(?P<g>\d+)\.w(?P<w>\d+)\.s(?P<s>\d+)(?:\.sk(?P<sk>\d+))?$")

    @classmethod
    def from_id(cls, config_id: str) -> "KernelConfig":
        """Parse an id (memoised: launches by id sit on the dispatch hot path)."""
        return _parse_id(cls, config_id)

    @classmethod
    def _from_id(cls, config_id: str) -> "KernelConfig":
        if config_id in VENDOR_FAMILIES:
            return cls(config_id)
        for fam in NAMED_VENDOR_FAMILIES:
            if config_id == fam or config_id.startswith(fam + "."):
                entry = config_id[len(fam) + 1:]
                canonical = lt_entry_canonical(entry)
                if canonical is None:
                    raise ConfigError(f"not a {fam} config id: {config_id!r} (expected "
                                      f"{fam}.<entry>, e.g. {fam}.a66.t197.s35.k1.r0.w0.c2.i0.cl5)")
                if canonical != entry:
                    raise ConfigError(f"non-canonical config id {config_id!r}; the id is "
                                      f"{fam + '.' + canonical!r}")
                return cls(fam, entry=entry)
        m = cls._ID_RE.match(config_id)
        if not m:
            raise ConfigError(f"not a kernel config id: {config_id!r} "
                              "(expected e.g. gemm.ptr.m128n128k64.g8.w4.s3)")
        g = m.groupdict()
        c = cls(g["fam"], int(g["bm"]), int(g["bn"]), int(g["bk"]), int(g["g"]), int(g["w"]),
                int(g["s"]), int(g["sk"] or 1))
        if c.id != config_id:  # one spelling per kernel: ids are keys everywhere
            raise ConfigError(f"non-canonical config id {config_id!r}; the id is {c.id!r}")
        return c


@functools.lru_cache(maxsize=65536)
def _parse_id(cls, config_id: str) -> KernelConfig:
    return cls._from_id(config_id)


@functools.lru_cache(maxsize=None)
def _space(family: str) -> tuple[KernelConfig, ...]:
    if family in VENDOR_FAMILIES:
        return (KernelConfig(family),)
    if family in NAMED_VENDOR_FAMILIES:
        return ()   # the library's heuristic names the entries per problem, on the GPU
    grid = SPACES[family]
    return tuple(KernelConfig(family, **dict(zip(PARAM_NAMES, values)))
                 for values in itertools.product(*(grid[p] for p in PARAM_NAMES)))


def space(family: str) -> list[KernelConfig]:
    """Every config the family declares (before the per-problem validity rules); empty for
    :data:`NAMED_VENDOR_FAMILIES`, whose entries the library lists per problem."""
    return list(_space(family))


def nearest_in_space(family: str, **params) -> KernelConfig:
    """Each parameter snapped to the nearest value the family declares (log2 distance;
    the smaller value on a tie): maps configs from other sources (the Triton tutorial,
    nvMatmulHeuristics) onto the space."""
    if family in FAMILIES and family not in SPACES:
        raise ConfigError(f"{family} declares no parameter space to snap to")
    grid = SPACES[family]
    snapped = {p: min(grid[p], key=lambda v: (abs(math.log2(v) - math.log2(params[p])), v))
               for p in PARAM_NAMES}
    return KernelConfig(family, **snapped)


# The CUDA autotune list of Triton's python/tutorials/03-matrix-multiplication.py
# (get_cuda_autotune_config): (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages,
# num_warps), GROUP_SIZE_M 8. Its kernel is a masked pointer GEMM, i.e. gemm.ptr. The first 8
# serve fp16/bf16, the last 8 are marked "good for fp8 inputs". What users get from
# triton.autotune today: a baseline of the evaluation, and always measured by the sweeps.
TUTORIAL_FAMILY = "gemm.ptr"
TUTORIAL_CONFIGS = ((128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4),
                    (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 32, 32, 4, 4),
                    (64, 32, 32, 5, 2), (32, 64, 32, 5, 2))
TUTORIAL_FP8_CONFIGS = ((128, 256, 128, 3, 8), (256, 128, 128, 3, 8), (256, 64, 128, 4, 4),
                        (64, 256, 128, 4, 4), (128, 128, 128, 4, 4), (128, 64, 64, 4, 4),
                        (64, 128, 64, 4, 4), (128, 32, 64, 4, 4))


@functools.lru_cache(maxsize=None)
def tutorial_ids(dtype: str) -> tuple[str, ...]:
    """The tutorial's 8 configs for a dtype as ``gemm.ptr`` config ids (``num_warps=2``,
    which the space does not declare, maps to 4)."""
    from tilepick.problem import DType

    table = TUTORIAL_FP8_CONFIGS if DType.parse(dtype) is DType.FP8 else TUTORIAL_CONFIGS
    return tuple(nearest_in_space(TUTORIAL_FAMILY, block_m=bm, block_n=bn, block_k=bk,
                                  group_m=8, num_warps=w, num_stages=s, split_k=1).id
                 for bm, bn, bk, s, w in table)
