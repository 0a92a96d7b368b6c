"""Candidate configs of a problem and their features, fast enough for every new shape.

``solvers.applicable_configs`` checks ~3,700 configs one by one in Python (15-40 ms a
problem); prediction has a budget of about a millisecond. So the candidates are a cached
*table* of configs (a pool: the whole space, or the catalog a model was trained on) whose
validity for a problem is one vectorised mask:

* rules that do not depend on the problem's sizes (shared memory, registers, warps) are the
  solvers' own ``config_invalid_reason``, evaluated once per (table, dtype, layout, GPU) on a
  stand-in problem sized so that every size rule passes;
* whether a family can serve the problem at all is the solvers' own
  ``not_applicable_reason``, asked once per problem (the repack family only when plain TMA
  cannot serve it: that is its rule);
* the size rules (a tile larger than the problem needs, split-K with empty splits or with
  enough output tiles already) are mirrored here, vectorised. ``tests/test_features.py``
  checks, over many shapes, that the mask selects exactly what ``applicable_configs`` returns;
  a rule added to the solvers without its mirror here fails that test.

Config-only features are computed once per table too; a new problem pays for its own scalars,
the interaction features of its valid candidates, and the model.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from tilepick.config import KernelConfig, space
from tilepick.features.columns import (CONFIG_INPUTS, FAMILY_CODES, Columns, config_columns,
                                       dtype_of, hardware_columns, problem_columns)
from tilepick.features.compute import FEATURE_NAMES, compute
from tilepick.features.table import (FEATURES, LAUNCH_S, _flops, _load_instrs, _min_bytes,
                                     _multiple, _operand_align, _pow2_divisor_log2,
                                     _roofline_s, _splitk_per_factor, _tma_aligned)
from tilepick.hardware import HardwareProfile
from tilepick.problem import DType, GemmProblem, next_pow2
from tilepick.solvers import SOLVERS
from tilepick.solvers.triton_gemm import FP8_WGMMA_MAX_K, fp8_wgmma_k_too_long

_CONFIG_FEATURES = tuple(f.name for f in FEATURES if f.kind == "config")
_PER_PROBLEM = ("hardware", "problem")   # one value per problem (hardware: cached per table)


def _columns(positions: list[int]):
    """A slice where the positions are contiguous (the table lists its features kind by kind):
    writing a block of columns through a slice is a plain strided copy, through an index list
    numpy's slower fancy-index path (~40 us a block on the prediction path)."""
    if positions == list(range(positions[0], positions[-1] + 1)):
        return slice(positions[0], positions[-1] + 1)
    return positions


_CONFIG_POS = [j for j, f in enumerate(FEATURES) if f.kind == "config"]
_PER_PROBLEM_POS = [j for j, f in enumerate(FEATURES) if f.kind in _PER_PROBLEM]
_INTERACTION_POS = [j for j, f in enumerate(FEATURES) if f.kind == "interaction"]
_CONFIG_COLS, _PER_PROBLEM_COLS, _INTERACTION_COLS = (
    _columns(_CONFIG_POS), _columns(_PER_PROBLEM_POS), _columns(_INTERACTION_POS))
_PER_PROBLEM_NAMES = [FEATURE_NAMES[j] for j in _PER_PROBLEM_POS]
_INTERACTION_NAMES = [FEATURE_NAMES[j] for j in _INTERACTION_POS]
_INPUT_NAMES = CONFIG_INPUTS


# The problem features in table order, as :func:`_problem_features` computes them.
_FAST_PROBLEM_NAMES = (
    "m", "n", "k", "batch", "log2_m", "log2_n", "log2_k", "log2_batch", "log2_flops",
    "log2_min_bytes", "arith_intensity", "log2_arith_intensity", "log2_m_over_n",
    "log2_m_over_k", "log2_n_over_k", "pow2div_m", "pow2div_n", "pow2div_k", "k_mod_64_zero",
    "align_a", "align_b", "align_c", "tma_aligned", "dtype_code", "layout_code", "itemsize",
    "roofline_us", "log2_roofline_us")
_FAST_PROBLEM = tuple(f.name for f in FEATURES if f.kind == "problem") == _FAST_PROBLEM_NAMES
_HARDWARE_NAMES = tuple(f.name for f in FEATURES if f.kind == "hardware")
_FAST_PROBLEM &= tuple(_PER_PROBLEM_NAMES) == _HARDWARE_NAMES + _FAST_PROBLEM_NAMES


def _problem_features(c: Columns) -> list:
    """The problem features of one problem (Python float columns), in table order: the
    table's own helpers for every formula with a body (alignment, TMA rule, roofline, flops,
    bytes, power-of-two divisors: their one-problem branches), the one-line ones written out,
    without a function call per feature. Stores what the interaction features read back:
    ``_flops``, ``_min_bytes`` (the table's memo keys), ``align_a``, ``align_b``."""
    m, n, k, batch = c.m, c.n, c.k, c.batch
    log2 = math.log2
    flops, mb = _flops(c), _min_bytes(c)
    ai = flops / mb
    align_a = c.align_a = _operand_align(c, "a")
    align_b = c.align_b = _operand_align(c, "b")
    roofline_us = _roofline_s(c) * 1e6
    return [m, n, k, batch, log2(m), log2(n), log2(k), log2(batch), log2(flops), log2(mb), ai,
            log2(ai), log2(m / n), log2(m / k), log2(n / k), _pow2_divisor_log2(m),
            _pow2_divisor_log2(n), _pow2_divisor_log2(k), _multiple(k, 64),
            align_a, align_b, _operand_align(c, "c"), _tma_aligned(c), c.dtype_code,
            c.layout_code, c.itemsize, roofline_us, log2(roofline_us)]


# The interaction features in table order, as :func:`_interactions` computes them.
_FAST_INTERACTION_NAMES = (
    "tiles_m", "tiles_n", "k_blocks", "k_iters", "eff_m", "eff_n", "eff_k", "tile_eff",
    "output_tiles", "programs", "waves", "sm_util", "waves_resident", "sm_util_resident",
    "pipeline_fill", "log2_traffic_ratio", "log2_load_instrs", "log2_splitk_ws_ratio",
    "log2_estimate_us", "estimate_tflops")
_FAST_INTERACTIONS = tuple(_INTERACTION_NAMES) == _FAST_INTERACTION_NAMES
# columns of CandidateTable._gather: the config features in table order, then four more
_G = {name: i for i, name in enumerate(_CONFIG_FEATURES)}
_G_BLOCKS, _G_SPLIT, _G_STAGES = _G["block_m"], _G["split_k"], _G["num_stages"]
_G_WS = _G["splitk_ws_factor"]
_G_SLOTS = len(_CONFIG_FEATURES)          # sm_count, sm_count * occupancy: the wave slots
_G_REPACK, _G_LAUNCH = _G_SLOTS + 2, _G_SLOTS + 3   # 1 + 2 is_repack, launch microseconds
_G_LOAD = _G_SLOTS + 4   # log2_load_instrs: 4 columns, by align_a >= 16 and align_b >= 16
_FAST_INTERACTIONS &= (_G["block_n"] == _G_BLOCKS + 1 and _G["block_k"] == _G_BLOCKS + 2)


def _interactions(c: Columns, g: np.ndarray, out: np.ndarray) -> None:
    """The interaction features into ``out`` (features x candidates): the table's formulas
    (:mod:`tilepick.features.table`) with the same floating-point operations in the same
    order, fused into few numpy calls (M, N and K as one 3-row operation; waves and wave
    efficiency over SMs and over resident slots as one 2-row operation). ``c``: the problem's
    and hardware's scalars (its per-problem features computed); ``g``: the candidates' rows
    of ``CandidateTable._gather``, transposed (a view), whose ``log2_load_instrs`` columns
    hold the table's formula for each answer of align_a >= 16, align_b >= 16. Every
    transcendental function runs on a contiguous row of ``out`` or a fresh array, as the
    table's formulas do."""
    blocks, split = g[_G_BLOCKS:_G_BLOCKS + 3], g[_G_SPLIT]
    mnk = np.array([[c.m], [c.n], [c.k]])
    tiles = out[0:3]                                  # tiles_m, tiles_n, k_blocks
    np.ceil(np.divide(mnk, blocks, out=tiles), out=tiles)
    np.ceil(np.divide(out[2], split, out=out[3]), out=out[3])            # k_iters
    np.divide(mnk, tiles * blocks, out=out[4:7])                          # eff_m, eff_n, eff_k
    np.multiply(np.multiply(out[4], out[5], out=out[7]), out[6], out=out[7])   # tile_eff
    np.multiply(np.multiply(out[0], out[1], out=out[8]), c.batch, out=out[8])  # output_tiles
    programs = np.multiply(out[8], split, out=out[9])
    slots = g[_G_SLOTS:_G_SLOTS + 2]
    waves = np.divide(programs, slots, out=out[10:13:2])     # waves, waves_resident
    np.divide(programs, np.ceil(waves) * slots, out=out[11:14:2])   # sm_util, sm_util_resident
    np.minimum(1.0, np.divide(out[3], g[_G_STAGES], out=out[14]), out=out[14])  # pipeline_fill
    mb = _min_bytes(c)
    a = c.batch * c.m * c.k * c.itemsize / mb
    b = c.batch * c.k * c.n * c.itemsize / mb
    o = c.batch * c.m * c.n * c.out_itemsize / mb
    t = a * out[1]
    t += b * out[0]
    t += o
    np.log2(t, out=out[15])                                               # log2_traffic_ratio
    out[16] = g[_G_LOAD + 2 * (c.align_a >= 16) + (c.align_b >= 16)]          # log2_load_instrs
    ws, per_factor = g[_G_WS], _splitk_per_factor(c)
    t = (per_factor / mb) * ws
    t += 1.0
    np.log2(t, out=out[17])                                               # log2_splitk_ws_ratio
    flops = _flops(c)
    peak_us = flops / (c.peak_tflops * 1e6)
    bw = c.mem_bw_gbps * 1e3
    compute_us = out[7] * out[11]
    np.divide(peak_us, compute_us, out=compute_us)
    memory_us = mb / bw * g[_G_REPACK]
    memory_us += (per_factor / bw) * ws
    np.maximum(compute_us, memory_us, out=compute_us)
    compute_us += g[_G_LAUNCH]
    np.log2(compute_us, out=out[18])                                      # log2_estimate_us
    np.divide(flops / 1e6, np.exp2(out[18], out=out[19]), out=out[19])   # estimate_tflops


def space_configs(families=None) -> list[KernelConfig]:
    """Every config of every solver family, in ``applicable_configs`` order."""
    return [c for fam in SOLVERS if families is None or fam in families for c in space(fam)]


def order_like_space(config_ids) -> list[KernelConfig]:
    """Config ids as KernelConfigs in the order ``applicable_configs`` would list them."""
    wanted = set(config_ids)
    known = {c.id for c in space_configs()}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"config ids not in any family's space: {unknown[:5]}"
                         f"{' ...' if len(unknown) > 5 else ''}")
    return [c for c in space_configs() if c.id in wanted]


def hardware_key(hw: HardwareProfile) -> tuple:
    return (hw.name, hw.arch, hw.sm_count, hw.l2_bytes, hw.smem_per_block, hw.smem_per_sm,
            hw.regs_per_sm, hw.max_regs_per_thread, hw.mem_bw_gbps,
            tuple(sorted(hw.peak_tflops.items())), tuple(hw.capability))


@dataclass
class CandidateTable:
    """A pool of configs for one (dtype token, layout, GPU), with everything static cached."""

    configs: tuple[KernelConfig, ...]
    ids: tuple[str, ...]
    hw: HardwareProfile
    dtype: str
    layout: str
    static_ok: np.ndarray          # bool per config: the solvers' size-independent rules
    config_inputs: dict            # config input arrays (float64)
    config_features: dict          # config-kind feature arrays (float64)
    min_block_m: np.ndarray
    min_block_n: np.ndarray
    min_block_k: np.ndarray
    family_index: np.ndarray       # int family code per config

    @classmethod
    def build(cls, configs, problem_like: GemmProblem, hw: HardwareProfile) -> "CandidateTable":
        configs = tuple(configs)
        static_ok = np.array([
            SOLVERS[c.family].config_invalid_reason(
                SOLVERS[c.family].stand_in(c, problem_like, hw), c, hw) is None
            for c in configs], dtype=bool)
        inputs = config_columns(configs)
        cols = Columns(inputs)
        tok = problem_like.dtype_token
        cols.update(hardware_columns(hw, tok))
        item = float(dtype_of(tok).itemsize)
        cols.update(itemsize=item, out_itemsize=float(dtype_of(tok).out_dtype.itemsize))
        compute(cols, kinds=("config",))
        feats = {name: np.asarray(cols[name], dtype=np.float64) for name in _CONFIG_FEATURES}
        attr = lambda c, name, dflt: getattr(SOLVERS[c.family], name, dflt)  # noqa: E731
        return cls(configs=configs, ids=tuple(c.id for c in configs), hw=hw, dtype=tok,
                   layout=problem_like.layout, static_ok=static_ok,
                   config_inputs={k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()},
                   config_features=feats,
                   min_block_m=np.array([attr(c, "min_block_m", 0) for c in configs], float),
                   min_block_n=np.array([attr(c, "min_block_n", 0) for c in configs], float),
                   min_block_k=np.array([attr(c, "min_block_k", 0) for c in configs], float),
                   family_index=inputs["family_code"].astype(np.int64))

    def __post_init__(self):
        # Column blocks gathered with one fancy index per problem (rows = columns here).
        self._static = np.stack([self.config_features[FEATURE_NAMES[j]] for j in _CONFIG_POS])
        self._inputs = np.stack([self.config_inputs[name] for name in _INPUT_NAMES])
        # the hardware inputs and features: the same for every problem of the table
        hardware = compute(Columns(hardware_columns(self.hw, self.dtype)), kinds=("hardware",))
        self._hardware = dict(hardware.__dict__)
        self.id_array = np.array(self.ids, dtype=object)
        ci = self.config_inputs
        self._bm, self._bn, self._bk = ci["block_m"], ci["block_n"], ci["block_k"]
        self._bm_at_min = self._bm <= self.min_block_m
        self._bn_at_min = self._bn <= self.min_block_n
        self._bk_at_min = self._bk <= self.min_block_k
        self._split = np.flatnonzero(ci["split_k"] > 1)
        present = {FAMILY_CODES[i] for i in np.unique(self.family_index)}
        self._solvers = [(fam, solver) for fam, solver in SOLVERS.items() if fam in present]
        bm_s, bn_s, bk_s, sk_s = (ci[k][self._split] for k in ("block_m", "block_n", "block_k",
                                                               "split_k"))
        # ceil(K / bk) >= split_k  <=>  K > (split_k - 1) * bk
        self._split_cfg = (bm_s, bn_s, (sk_s - 1) * bk_s, sk_s)
        self._size_cache: dict = {}
        # config-only rows the fast interaction features read, gathered with the config
        # features in one call per problem (:func:`_interactions`)
        cf, smc = self.config_features, self._hardware["sm_count"]
        # (row-major, configs x columns: a problem gathers a few hundred whole rows, ~3% of
        # a ranking faster than the same values gathered column by column)
        # log2_load_instrs reads the problem only through align_a >= 16 and align_b >= 16:
        # the table's own formula for each of the four answers (column _G_LOAD + 2a + b)
        loads = []
        for a16 in (False, True):
            for b16 in (False, True):
                c = Columns(cf, itemsize=float(dtype_of(self.dtype).itemsize),
                            align_a=16.0 if a16 else 1.0, align_b=16.0 if b16 else 1.0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    loads.append(np.broadcast_to(np.asarray(_load_instrs(c), np.float64),
                                                 (len(self.configs),)))
        self._gather = np.ascontiguousarray(np.vstack([
            self._static, np.full(len(self.configs), smc), smc * cf["occupancy"],
            1.0 + 2 * cf["is_repack"], (LAUNCH_S * 1e6) * cf["launches"], *loads]).T)
        self._hardware_values = [self._hardware[name] for name in _HARDWARE_NAMES]
        # valid_index: sizes above the largest tile behave alike (clamped cache keys); the
        # split-K rule's inputs over the whole table, neutral (always passing) off split-K
        self._caps = tuple(max(1, next_pow2(int(a.max(initial=0)))) for a in
                           (self._bm, self._bn, self._bk))
        neutral_bm, neutral_bn = np.full(len(self), np.inf), np.full(len(self), np.inf)
        neutral_kf = np.full(len(self), -np.inf)
        neutral_bm[self._split], neutral_bn[self._split] = bm_s, bn_s
        neutral_kf[self._split] = self._split_cfg[2]
        self._split_full = (neutral_bm, neutral_bn, neutral_kf)
        self._index_cache: dict = {}

    def __len__(self) -> int:
        return len(self.configs)

    def _family_ok(self, p: GemmProblem) -> np.ndarray:
        """Which families can serve the problem, by the solvers' own not_applicable_reason.

        Only the families the table has configs of are asked: a family without any (the
        cuBLASLt entries, which the dispatcher adds beside the model's ranking) would be asked
        for nothing, and its rule may be costly (cuBLASLt's imports torch and loads the
        library, which is most of a CPU-only ``tilepick predict``'s start-up). One shortcut:
        the repack family serves exactly the problems the plain TMA family cannot (its rule
        says so, and building its aligned stand-in problem costs more than the rest of the
        mask), so it is only asked when gemm.tma said no.
        """
        hw = self.hw
        ok = {}
        for fam, solver in self._solvers:
            if fam == "gemm.tma_repack" and ok.get("gemm.tma"):
                ok[fam] = False
            else:
                ok[fam] = solver.not_applicable_reason(p, hw) is None
        return np.array([ok.get(f, False) for f in FAMILY_CODES], dtype=bool)

    def valid_mask(self, problem: GemmProblem) -> np.ndarray:
        """Which configs ``applicable_configs(problem, hw)`` would return (see the module doc)."""
        p, hw = problem, self.hw
        ok = self._size_ok(next_pow2(p.m), next_pow2(p.n), next_pow2(p.k)) \
            & self._family_ok(p)[self.family_index]
        if p.dtype is DType.FP8 and p.k > FP8_WGMMA_MAX_K:
            ok &= ~fp8_wgmma_k_too_long(True, self._bm, np.ceil(p.k / self.config_inputs["split_k"]))
        s = self._split
        if len(s):  # split-K: no empty splits, and only while the output tiles leave SMs idle
            bm, bn, k_floor, _ = self._split_cfg
            tiles = np.ceil(p.m / bm) * np.ceil(p.n / bn) * p.batch
            ok[s] &= (p.k > k_floor) & (tiles <= hw.sm_count)
        return ok

    def valid_index(self, problem: GemmProblem) -> np.ndarray:
        """``np.flatnonzero(self.valid_mask(problem))``, faster: the configs that pass the
        size-independent rules, the size rules and the families' applicability are cached per
        (next powers of two, capped at the largest tile; the families' answers), and the
        split-K and fp8 rules are evaluated on those only. ``tests/test_predict_fast.py``
        compares the two."""
        p = problem
        fam = self._family_ok(p)
        cm, cn, ck = self._caps
        key = (min(next_pow2(p.m), cm), min(next_pow2(p.n), cn), min(next_pow2(p.k), ck),
               fam.tobytes())
        found = self._index_cache.get(key)
        if found is None:
            base = np.flatnonzero(self._size_ok(key[0], key[1], key[2])
                                  & fam[self.family_index])
            found = (base, *(a[base] for a in self._split_full))
            if len(self._index_cache) < 4096:
                self._index_cache[key] = found
        base, bm, bn, k_floor = found
        keep = (p.k > k_floor) & (np.ceil(p.m / bm) * np.ceil(p.n / bn) * p.batch
                                  <= self.hw.sm_count)
        if p.dtype is DType.FP8 and p.k > FP8_WGMMA_MAX_K:
            keep &= ~fp8_wgmma_k_too_long(
                True, self._bm[base], np.ceil(p.k / self.config_inputs["split_k"][base]))
        return base[keep]

    def _size_ok(self, m2: int, n2: int, k2: int) -> np.ndarray:
        """Static rules & 'no tile larger than the problem's next power of two needs' (unless
        at the family minimum): a function of the powers of two only, so cached per triple."""
        key = (m2, n2, k2)
        ok = self._size_cache.get(key)
        if ok is None:
            ok = (self.static_ok & (self._bm_at_min | (self._bm <= m2))
                  & (self._bn_at_min | (self._bn <= n2)) & (self._bk_at_min | (self._bk <= k2)))
            if len(self._size_cache) < 65536:
                self._size_cache[key] = ok
        return ok  # callers combine it into a new array; never modified in place

    def features(self, problem: GemmProblem, index: np.ndarray) -> np.ndarray:
        """The (candidates x features) matrix, spec order, row-major (LightGBM reads rows).

        The interaction features come from :func:`_interactions` (fused numpy calls on
        cached config-only factors: the same numbers as the table's formulas, which
        :meth:`features_reference` evaluates; ``tests/test_predict_fast.py`` compares the two)."""
        if not _FAST_INTERACTIONS:   # the table changed: its own formulas, one by one
            return self.features_reference(problem, index)
        x = np.empty((len(index), len(FEATURE_NAMES)), dtype=np.float64)
        rows = self._gather[index]
        x[:, _CONFIG_COLS] = rows[:, :len(_CONFIG_POS)]
        cols = Columns(problem_columns(problem))
        cols.update(self._hardware)
        if _FAST_PROBLEM:
            x[:, _PER_PROBLEM_COLS] = self._hardware_values + _problem_features(cols)
        else:
            compute(cols, kinds=("problem",))
            x[:, _PER_PROBLEM_COLS] = np.array([cols[n] for n in _PER_PROBLEM_NAMES])
        out = np.empty((len(_INTERACTION_POS), len(index)), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            _interactions(cols, rows.T, out)
        x[:, _INTERACTION_COLS] = out.T
        return x

    def features_reference(self, problem: GemmProblem, index: np.ndarray) -> np.ndarray:
        """:meth:`features` through the feature table's formulas one by one (the reference
        the fast path is tested against)."""
        x = np.empty((len(index), len(FEATURE_NAMES)), dtype=np.float64)
        static = self._static[:, index]
        x[:, _CONFIG_COLS] = static.T
        cols = Columns(problem_columns(problem))
        cols.update(self._hardware)
        cols.update(zip(_INPUT_NAMES, self._inputs[:, index]))
        compute(cols, kinds=("problem",))
        x[:, _PER_PROBLEM_COLS] = np.array([cols[n] for n in _PER_PROBLEM_NAMES], np.float64)
        cols.update(zip(_CONFIG_FEATURES, static))
        compute(cols, kinds=("interaction",))
        x[:, _INTERACTION_COLS] = np.array([cols[n] for n in _INTERACTION_NAMES]).T
        return x

    def candidates(self, problem: GemmProblem) -> tuple[np.ndarray, np.ndarray]:
        """(index of the valid configs, their feature matrix)."""
        self._check(problem)
        index = np.flatnonzero(self.valid_mask(problem))
        return index, self.features(problem, index)

    def _check(self, problem: GemmProblem) -> None:
        if problem.dtype_token != self.dtype or problem.layout != self.layout:
            raise ValueError(f"candidate table for {self.dtype}/{self.layout} asked about "
                             f"{problem.key()}")


_TABLES: dict[tuple, CandidateTable] = {}
_LOCK = threading.Lock()


def candidate_table(problem: GemmProblem, hw: HardwareProfile, pool_ids=None,
                    pool_key: str | None = None) -> CandidateTable:
    """The cached table for the problem's dtype and layout on ``hw``.

    ``pool_ids`` restricts the pool to those config ids (a model's catalog); ``pool_key`` names
    that pool in the cache (the ids' digest when omitted). ``None``: the whole config space.
    """
    if pool_ids is not None and pool_key is None:
        pool_key = str(hash(tuple(sorted(pool_ids))))
    key = (pool_key or "space", problem.dtype_token, problem.layout, hardware_key(hw))
    table = _TABLES.get(key)
    if table is None:
        with _LOCK:
            table = _TABLES.get(key)
            if table is None:
                configs = space_configs() if pool_ids is None else order_like_space(pool_ids)
                table = CandidateTable.build(configs, problem, hw)
                _TABLES[key] = table
    return table


def candidate_ids(problem: GemmProblem, hw: HardwareProfile, pool_ids=None) -> list[str]:
    """Ids of the valid candidates of a problem in the declared space: the fast equivalent of
    ``solvers.applicable_configs`` except for ``gemm.cublaslt``, whose configs are cuBLASLt's
    heuristic entries, listed per problem on the GPU only (``space()`` holds none of them), so
    the main model never ranks them; ``tilepick.model.lt_ranker`` does."""
    table = candidate_table(problem, hw, pool_ids)
    return [table.ids[i] for i in np.flatnonzero(table.valid_mask(problem))]


__all__ = ["CandidateTable", "candidate_table", "candidate_ids", "space_configs",
           "order_like_space", "CONFIG_INPUTS"]
