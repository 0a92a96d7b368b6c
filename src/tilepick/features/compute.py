"""Computing the feature table over columns, and packing it as the model's input matrix."""

from __future__ import annotations

import numpy as np

from tilepick.features.columns import Columns, frame_columns
from tilepick.features.table import FEATURES, KINDS
from tilepick.hardware import HardwareProfile

FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURES)
FEATURE_INDEX: dict[str, int] = {name: i for i, name in enumerate(FEATURE_NAMES)}


def compute(cols: Columns, kinds: tuple[str, ...] = KINDS) -> Columns:
    """Compute the features of the given kinds in table order, storing each into ``cols``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        for f in FEATURES:
            if f.kind in kinds:
                cols[f.name] = f.fn(cols)
    return cols


def assemble(cols: Columns, rows: int, out: np.ndarray | None = None) -> np.ndarray:
    """The (rows x features) float64 matrix in spec order; per-problem scalars broadcast."""
    x = np.empty((rows, len(FEATURES)), dtype=np.float64) if out is None else out
    for j, f in enumerate(FEATURES):
        x[:, j] = cols[f.name]
    return x


def frame_matrix(frame, hw: HardwareProfile) -> np.ndarray:
    """Features of every row of a dataset frame (one dtype), for training and evaluation."""
    if len(frame) == 0:
        return np.empty((0, len(FEATURES)), dtype=np.float64)
    cols = compute(frame_columns(frame, hw))
    return assemble(cols, len(frame))
