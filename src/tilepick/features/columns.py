"""The input columns every feature function reads, and the two ways of building them.

Features are computed from one bag of numeric columns: problem columns (``m``, ``n``, ...),
config columns (``block_m``, ...), hardware columns (``sm_count``, ...) and the integer codes of
the string columns (``family_code``, ``dtype_code``, ``layout_code``). Training builds the bag
from a dataset frame (every column an array); prediction builds it from one problem (scalars)
and a cached table of configs (arrays), so that numpy broadcasting computes each problem-level
feature once per problem instead of once per candidate.

The code tables below are part of the feature schema: a model trained with one encoding must
never be fed another, so :mod:`tilepick.features.spec` records them.
"""

from __future__ import annotations

import numpy as np

from tilepick.config import FAMILIES, VENDOR_FAMILIES
from tilepick.hardware import HardwareProfile
from tilepick.problem import LAYOUTS, DType, GemmProblem

# Integer codes of the categorical inputs: the position in these tuples. Append only.
FAMILY_CODES: tuple[str, ...] = tuple(FAMILIES)
DTYPE_CODES: tuple[str, ...] = ("fp16", "bf16", "fp32", "tf32", "fp8e4m3")
LAYOUT_CODES: tuple[str, ...] = tuple(LAYOUTS)


def dtype_of(token: str) -> DType:
    """The storage dtype of a dtype token (tf32 is fp32 data on tf32 tensor cores)."""
    return DType.parse("fp32" if token == "tf32" else token)


# bytes per element by dtype token, from DType (tf32 runs on fp32 storage)
_ITEMSIZE = {tok: dtype_of(tok).itemsize for tok in DTYPE_CODES}
_OUT_ITEMSIZE = {tok: dtype_of(tok).out_dtype.itemsize for tok in DTYPE_CODES}

PROBLEM_INPUTS = ("m", "n", "k", "batch", "lda", "ldb", "ldc", "base_align", "dtype_code",
                  "layout_code", "itemsize", "out_itemsize")
CONFIG_INPUTS = ("family_code", "block_m", "block_n", "block_k", "group_m", "num_warps",
                 "num_stages", "split_k")
HARDWARE_INPUTS = ("sm_count", "peak_tflops", "mem_bw_gbps", "smem_per_block", "smem_per_sm",
                   "l2_bytes")

VENDOR_CODES = tuple(FAMILY_CODES.index(f) for f in VENDOR_FAMILIES)


class Columns:
    """Named numeric columns (arrays, or scalars for per-problem values) with attribute access,
    so that feature formulas read like the maths: ``c.m / c.block_m``. The columns live in the
    instance ``__dict__``: attribute reads are plain lookups (this is on the prediction path)."""

    def __init__(self, values: dict | None = None, **more):
        if values:
            self.__dict__.update(values)
        self.__dict__.update(more)

    def __getattr__(self, name):  # only reached when the name is missing
        raise AttributeError(f"no input column or earlier feature named {name!r}")

    def __getitem__(self, name):
        try:
            return self.__dict__[name]
        except KeyError:
            raise KeyError(f"no input column or earlier feature named {name!r}") from None

    def __setitem__(self, name, value):
        self.__dict__[name] = value

    def __contains__(self, name) -> bool:
        return name in self.__dict__

    def get(self, name, default=None):
        return self.__dict__.get(name, default)

    def update(self, values: dict | None = None, **more):
        if values:
            self.__dict__.update(values)
        self.__dict__.update(more)

    def keys(self):
        return self.__dict__.keys()


def hardware_columns(hw: HardwareProfile, dtype: str) -> dict:
    """The profile's numbers for one dtype token (the peak depends on the dtype)."""
    try:
        peak = hw.peak_tflops[dtype]
    except KeyError:
        raise ValueError(f"hardware profile {hw.arch} has no peak for dtype {dtype!r}") from None
    f = float   # Python floats: per-problem formulas on them skip numpy's per-call cost
    return {"sm_count": f(hw.sm_count), "peak_tflops": f(peak),
            "mem_bw_gbps": f(hw.mem_bw_gbps), "smem_per_block": f(hw.smem_per_block),
            "smem_per_sm": f(hw.smem_per_sm), "l2_bytes": f(hw.l2_bytes)}


def problem_columns(problem: GemmProblem) -> dict:
    """Python float scalars of one problem (exact for every size a GPU can hold). Python's
    arithmetic on them is ~10x cheaper than numpy's on numpy scalars; formulas that compare or
    take logarithms of them have a scalar branch (``table._log2``, ``_multiple``, ...)."""
    tok = problem.dtype_token
    f = float
    return {"m": f(problem.m), "n": f(problem.n), "k": f(problem.k),
            "batch": f(problem.batch), "lda": f(problem.lda), "ldb": f(problem.ldb),
            "ldc": f(problem.ldc), "base_align": f(problem.base_align),
            "dtype_code": f(DTYPE_CODES.index(tok)),
            "layout_code": f(LAYOUT_CODES.index(problem.layout)),
            "itemsize": f(_ITEMSIZE[tok]), "out_itemsize": f(_OUT_ITEMSIZE[tok])}


def config_columns(configs) -> dict:
    """Arrays over a list of KernelConfig (vendor configs carry zeros, as in the dataset)."""
    arr = lambda name: np.array([getattr(c, name) for c in configs], dtype=np.float64)  # noqa: E731
    cols = {name: arr(name) for name in CONFIG_INPUTS if name != "family_code"}
    cols["family_code"] = np.array([FAMILY_CODES.index(c.family) for c in configs],
                                   dtype=np.float64)
    return cols


def _codes(values, table: tuple[str, ...], what: str) -> np.ndarray:
    lookup = {v: i for i, v in enumerate(table)}
    uniq = {v for v in values}
    unknown = sorted(str(v) for v in uniq - set(lookup))
    if unknown:
        raise ValueError(f"unknown {what} {unknown}: known {list(table)}")
    return np.array([lookup[v] for v in values], dtype=np.float64)


def frame_columns(frame, hw: HardwareProfile) -> Columns:
    """Columns of a dataset frame (schema column names), for training and evaluation.

    The frame must hold one dtype token (the hardware peak depends on it); mixed-dtype frames
    are split by the caller.
    """
    dtypes = frame["dtype"].unique()
    if len(dtypes) != 1:
        raise ValueError(f"frame_columns needs one dtype per call, got {sorted(map(str, dtypes))}")
    tok = str(dtypes[0])
    cols = Columns()
    for name in ("m", "n", "k", "batch", "lda", "ldb", "ldc", "base_align", "block_m",
                 "block_n", "block_k", "group_m", "num_warps", "num_stages", "split_k"):
        cols[name] = frame[name].to_numpy(dtype=np.float64)
    cols["family_code"] = _codes(frame["family"].tolist(), FAMILY_CODES, "kernel families")
    cols["layout_code"] = _codes(frame["layout"].tolist(), LAYOUT_CODES, "layouts")
    cols["dtype_code"] = np.full(len(frame), float(DTYPE_CODES.index(tok)))
    cols["itemsize"] = np.full(len(frame), float(_ITEMSIZE[tok]))
    cols["out_itemsize"] = np.full(len(frame), float(_OUT_ITEMSIZE[tok]))
    cols.update(hardware_columns(hw, tok))
    return cols

