"""Computing the feature table over columns, and packing it as the model's input matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tilepick.features.columns import Columns, frame_columns
from tilepick.features.table import FEATURES, KINDS
from tilepick.hardware import HardwareProfile

FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURES)
FEATURE_INDEX: dict[str, int] = {name: i for i, name in enumerate(FEATURE_NAMES)}


_BY_KINDS: dict[tuple, tuple] = {}


def _formulas(kinds: tuple[str, ...]) -> tuple:
    found = _BY_KINDS.get(kinds)
    if found is None:
        found = _BY_KINDS[kinds] = tuple((f.name, f.fn) for f in FEATURES if f.kind in kinds)
    return found


def compute(cols: Columns, kinds: tuple[str, ...] = KINDS) -> Columns:
    """Compute the features of the given kinds in table order, storing each into ``cols``."""
    store = cols.__dict__  # the prediction path runs this per new problem: no method calls
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, fn in _formulas(tuple(kinds)):
            store[name] = fn(cols)
    return cols


def assemble(cols: Columns, rows: int, out: np.ndarray | None = None) -> np.ndarray:
    """The (rows x features) float64 matrix in spec order; per-problem scalars broadcast."""
    x = np.empty((rows, len(FEATURES)), dtype=np.float64) if out is None else out
    for j, f in enumerate(FEATURES):
        x[:, j] = cols[f.name]
    return x


def frame_matrix(frame, hw: HardwareProfile) -> np.ndarray:
    """Features of every row of a dataset frame, for training and evaluation.

    The hardware peak depends on the dtype, so the columns are built per dtype and the rows
    written back in frame order (a pooled frame, e.g. bf16 + fp16, is one matrix)."""
    x = np.empty((len(frame), len(FEATURES)), dtype=np.float64)
    if len(frame) == 0:
        return x
    codes, dtypes = pd.factorize(frame["dtype"].astype(str))
    for i in range(len(dtypes)):
        rows = np.flatnonzero(codes == i)
        part = frame.iloc[rows] if len(dtypes) > 1 else frame
        x[rows] = assemble(compute(frame_columns(part, hw)), len(rows))
    return x
