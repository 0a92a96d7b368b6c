"""nvMatmulHeuristics (PyPI ``nvidia-matmul-heuristics``) as a baseline: query, map, project.

NVIDIA's analytic heuristic runs on the CPU and, given a GEMM, returns kernel configs (CTA and
warp tiles, load stages, split-K, grid swizzle) for a target library and GPU. We ask it as the
Triton backend with performance-model-based auto-tuning on the predefined GPU of the model's
arch, and project each returned config onto the nearest *valid* config of tilepick's space for
the problem, so that its speed can be looked up in our measurements.

Mappings (checked against the library's header and its own ``asGemmProblem``):

* dtype -> precision string (A/B, compute, C/D letters): bf16 ``TST`` (``T`` is bfloat16;
  ``B`` is an 8-bit *integer*, so "BSB" would ask for an int8 GEMM), fp16 ``HSH``, fp32
  ``SSS`` (``SFS`` with tf32), fp8 e4m3 with bf16 output ``QQTST``;
* layout: tilepick's C is row-major, so the ``*_ROW_MAJOR`` layouts apply, where the first
  letter says whether A is transposed while loading and the second whether B is: ``rr`` ->
  ``NN_ROW_MAJOR``, ``rc`` (``x @ W.T``) -> ``NT_ROW_MAJOR``, ``cr`` -> ``TN_ROW_MAJOR``,
  ``cc`` -> ``TT_ROW_MAJOR``. (The ``*_COL_MAJOR`` ones are BLAS's column-major C.)
  The H200 model gives the same configs for every layout in the cases we tried;
* config -> family: split-K > 1 -> ``gemm.splitk`` (deterministic split-K: workspace and a
  reduction pass, as the heuristic's out-of-place split-K); otherwise ``gemm.tma`` (Hopper's
  native load path, where the TMA stride rules hold) and ``gemm.ptr`` together, ``gemm.tma``
  winning ties: the TMA family's smallest tile is 64, so a 16 x 32 tile goes to the pointer
  kernel. Where split-K has no valid config for the problem, the split is dropped;
* nearest valid config: smallest sum of |log2| distances of BLOCK_M/N/K and split-K, then
  the family order above, then the closest stage count, then warps (``(cta_m / warp_m) *
  (cta_n / warp_n)``, log2), then GROUP_M closest to the grid swizzle, then the id.

The library's order is its ranking (it is not sorted by its runtime estimate under
auto-tuning): top-1 is the first config returned. Queries take ~1-2 ms and are cached per
problem. Without the package (or for a GPU it has no profile for) the baseline is unavailable.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from tilepick.config import KernelConfig
from tilepick.hardware import HardwareProfile, profile
from tilepick.problem import DType, GemmProblem
from tilepick.solvers import SOLVERS

GPUS = {"h200": "H200_SXM", "h100": "H100_SXM"}
LAYOUTS = {"rr": "NN_ROW_MAJOR", "rc": "NT_ROW_MAJOR", "cr": "TN_ROW_MAJOR",
           "cc": "TT_ROW_MAJOR"}
COUNT = 8


@dataclass(frozen=True)
class NvmhConfig:
    """One config as the heuristic returns it (the fields tilepick can use)."""

    cta_m: int
    cta_n: int
    cta_k: int
    warp_m: int
    warp_n: int
    stages: int
    split_k: int = 1
    swizzle: int = 1

    @property
    def num_warps(self) -> int:
        return (self.cta_m // self.warp_m) * (self.cta_n // self.warp_n)


def precision(problem: GemmProblem) -> str:
    return {DType.BF16: "TST", DType.FP16: "HSH", DType.FP8: "QQTST",
            DType.FP32: "SFS" if problem.tf32 else "SSS"}[problem.dtype]


def module():
    """The ``nvMatmulHeuristics`` module, or None where it cannot be loaded."""
    try:
        import nvMatmulHeuristics
    except (ImportError, OSError):
        return None
    return nvMatmulHeuristics


def unavailable_reason(arch: str) -> str | None:
    if arch not in GPUS:
        return f"no nvMatmulHeuristics GPU profile mapped for arch {arch!r}"
    if module() is None:
        return "nvMatmulHeuristics (pip nvidia-matmul-heuristics) is not importable"
    return None


def layout(layout_code: str):
    """tilepick's layout (A then B, r = row-major) as the library's layout enum."""
    return getattr(module().NvMatmulHeuristicsMatmulLayout, LAYOUTS[layout_code])


@functools.lru_cache(maxsize=4)
def _interface(arch: str):
    nv = module()
    return nv.NvMatmulHeuristicsInterfaceEx(
        backend=nv.NvMatmulHeuristicsTarget.TRITON,
        flags=nv.NvMatmulHeuristicsFlags.PERF_MODEL_BASED_AUTO_TUNING,
        gpu=getattr(nv.NvMatmulHeuristicsNvidiaGpu, GPUS[arch]))


@functools.lru_cache(maxsize=None)
def query(m: int, n: int, k: int, batch: int, layout_code: str, prec: str, arch: str,
          count: int = COUNT) -> tuple[NvmhConfig, ...]:
    """The heuristic's first ``count`` configs for a problem, in its order (cached)."""
    h = _interface(arch)
    prob = h.makeNvMatmulHeuristicsProblem(m, n, k, layout(layout_code), batch)
    out = []
    for r in h.get(prob, count, precision=prec):
        c = r["kernel"]
        out.append(NvmhConfig(c.cta_tile_m, c.cta_tile_n, c.cta_tile_k, c.warp_tile_m,
                              c.warp_tile_n, c.stages, max(1, c.split_k or 1),
                              max(1, c.swizzle_factor or 1)))
    return tuple(out)


def _pools(problem: GemmProblem, c: NvmhConfig, hw: HardwareProfile) -> list[list[str]]:
    """Families to project onto, in order of preference (see the module doc)."""
    plain = ["gemm.tma", "gemm.ptr"] if SOLVERS["gemm.tma"].is_applicable(problem, hw) \
        else ["gemm.ptr"]
    return ([["gemm.splitk"]] if c.split_k > 1 else []) + [plain]


def _log2(a: int, b: int) -> float:
    return abs(math.log2(a) - math.log2(b))


def project(problem: GemmProblem, c: NvmhConfig, hw: HardwareProfile) -> KernelConfig | None:
    """The nearest valid tilepick config to a heuristic config (see the module doc)."""
    for families in _pools(problem, c, hw):
        valid = [(rank, v) for rank, fam in enumerate(families)
                 for v in SOLVERS[fam].configs(problem, hw)]
        if valid:
            return min(valid, key=lambda rv: (
                round(_log2(rv[1].block_m, c.cta_m) + _log2(rv[1].block_n, c.cta_n)
                      + _log2(rv[1].block_k, c.cta_k) + _log2(rv[1].split_k, c.split_k), 9),
                rv[0], abs(rv[1].num_stages - c.stages), _log2(rv[1].num_warps, c.num_warps),
                _log2(rv[1].group_m, c.swizzle), rv[1].id))[1]
    return None


def ranked_ids(problem: GemmProblem, arch: str) -> tuple[str, ...]:
    """The heuristic's configs for ``problem`` projected onto tilepick ids, in its order,
    duplicates (two configs projecting onto one) kept once (cached per problem and arch)."""
    return _ranked_ids(problem, arch)


@functools.lru_cache(maxsize=None)
def _ranked_ids(problem: GemmProblem, arch: str) -> tuple[str, ...]:
    p, hw = problem, profile(arch)
    got = query(p.m, p.n, p.k, p.batch, p.layout, precision(p), arch)
    ids = [cfg.id for cfg in (project(p, c, hw) for c in got) if cfg is not None]
    return tuple(dict.fromkeys(ids))
