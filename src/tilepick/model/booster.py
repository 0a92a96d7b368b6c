"""LightGBM boosters on the prediction path: loading gzip'd text models, and low-overhead calls.

``Booster.predict`` spends ~35 us in Python per call (argument checks, a predictor object,
parameter strings) before the C library starts; the rank path makes a few calls per new
problem within a ~1 ms budget. :class:`FastBooster` calls ``LGBM_BoosterPredictForMat`` itself
with preallocated buffers. It relies on lightgbm's internal ctypes handle; when that is not
there (another lightgbm version), it falls back to the public ``predict``, which is slower
but gives the same numbers.
"""

from __future__ import annotations

import ctypes
import gzip
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

try:  # training needs LightGBM; prediction falls back to the trees' text (model.trees)
    import lightgbm as lgb
except ImportError:
    lgb = None

try:  # lightgbm internals (stable since 3.x); the fallback below covers their absence
    from lightgbm.basic import _LIB, _c_str, _safe_call

    _PARAMS = _c_str("num_threads=1")
    # LGBM_BoosterPredictForMat declared once with plain argument types: a call passes Python
    # ints and addresses instead of building ~10 ctypes objects (~3 us a call)
    _PREDICT_FOR_MAT = ctypes.CFUNCTYPE(
        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int32,
        ctypes.c_int32, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
        ctypes.c_void_p, ctypes.c_void_p)(
            ctypes.cast(_LIB.LGBM_BoosterPredictForMat, ctypes.c_void_p).value)
    _FAST = True
except (ImportError, AttributeError):  # pragma: no cover - depends on the installed lightgbm
    _FAST = False

if TYPE_CHECKING:
    from tilepick.model.trees import NumpyTrees

_DTYPE_FLOAT64 = 1
_COL_MAJOR, _ROW_MAJOR = 0, 1
_PREDICT_RAW_SCORE = 1


def read_model_text(path: str | Path) -> str:
    path = Path(path)
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    return path.read_text(encoding="utf-8")


# Per-tree fields that prediction never reads (LightGBM, the compiled trees and model.trees
# alike): split gains and the per-node weights, counts and values kept for training statistics
# and SHAP. Dropping them halves a shipped model (0.73 -> 0.31 MB for the 3-run bf16 ranker),
# which the repository's 64 MiB upload limit needs; the scores are unchanged (tests).
TRAINING_ONLY_FIELDS = ("split_gain=", "leaf_weight=", "leaf_count=", "internal_value=",
                        "internal_weight=", "internal_count=")


def prediction_text(text: str) -> str:
    """LightGBM model text without :data:`TRAINING_ONLY_FIELDS` (and without ``tree_sizes``,
    the byte offsets they invalidate: LightGBM then parses the trees one by one)."""
    out, in_trees = [], False
    for line in text.split("\n"):
        if line.startswith("Tree="):
            in_trees = True
        elif line.startswith("end of trees"):
            in_trees = False
        if line.startswith("tree_sizes=") or (in_trees and line.startswith(TRAINING_ONLY_FIELDS)):
            continue
        out.append(line)
    return "\n".join(out)


def write_model_text(booster: lgb.Booster, path: str | Path) -> int:
    """Write a booster as gzip-compressed LightGBM text, prediction fields only
    (:func:`prediction_text`); returns the file size in bytes."""
    path = Path(path)
    text = prediction_text(booster.model_to_string())
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(text)
    return path.stat().st_size


_CONSTANT_TREE = ("num_leaves=1\nnum_cat=0\nsplit_feature=\nsplit_gain=\nthreshold=\n"
                  "decision_type=\nleft_child=\nright_child=\nleaf_value=0\nleaf_weight=\n"
                  "leaf_count=0\ninternal_value=\ninternal_weight=\ninternal_count=\n"
                  "is_linear=0\nshrinkage=1\n\n\n")


def _split_model_text(text: str) -> tuple[list[str], list[str]]:
    """(header lines before the first tree, tree bodies without their ``Tree=i`` line)."""
    head, _, rest = text.partition("\nTree=0\n")
    trees_part = rest.partition("end of trees")[0]
    bodies = ("Tree=0\n" + trees_part).split("Tree=")[1:]
    return head.split("\n"), [b.partition("\n")[2] for b in bodies]


def _assemble(header: list[str], bodies: list[str]) -> lgb.Booster:
    """A booster from header lines and tree bodies in order (renumbered; ``tree_sizes``, the
    byte offsets of the original trees, dropped: LightGBM then parses the trees one by one)."""
    head = "\n".join(ln for ln in header if not ln.startswith("tree_sizes="))
    out = [head.rstrip("\n") + "\n"]
    out += [f"Tree={i}\n{body}" for i, body in enumerate(bodies)]
    out.append("end of trees\n\npandas_categorical:null\n")
    return lgb.Booster(model_str="\n".join(out))


def _scale_leaves(body: str, factor: float) -> str:
    """A tree body with its leaf values multiplied by ``factor`` (repr: exact round trip)."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("leaf_value="):
            values = (float(v) * factor for v in line[len("leaf_value="):].split())
            lines[i] = "leaf_value=" + " ".join(repr(v) for v in values)
    return "\n".join(lines)


def average(boosters: list[lgb.Booster]) -> lgb.Booster:
    """One single-output booster whose raw score is the mean of the inputs' raw scores.

    Why: a seed ensemble (``TrainOptions.seed_ensemble``) must serve through the same paths
    as one booster: the cascade's first trees, the compiled trees, the numpy fallback, the
    uncertainty pack. The trees are concatenated input by input (the first input's trees come
    first, so the cascade's stage 1 is the first member's first trees) with every leaf value
    divided by the number of inputs; the LightGBM init score is folded into the first tree of
    each model already, so the sum of the scaled trees is the mean.
    """
    if not boosters:
        raise ValueError("nothing to average")
    if len(boosters) == 1:
        return boosters[0]
    parts = [_split_model_text(b.model_to_string()) for b in boosters]
    outputs = {next((ln for ln in head if ln.startswith("num_tree_per_iteration=")), "=1")
               for head, _ in parts}
    if outputs != {"num_tree_per_iteration=1"} or len({b.num_feature() for b in boosters}) != 1:
        raise ValueError("average takes single-output boosters over the same feature columns")
    factor = 1.0 / len(boosters)
    return _assemble(parts[0][0], [_scale_leaves(body, factor) for _, trees in parts
                                   for body in trees])


def interleave(booster: lgb.Booster, members: int) -> lgb.Booster:
    """An :func:`average` of ``members`` equal-length boosters with its trees reordered
    iteration by iteration (iteration 0 of every member, then 1, ...): the same scores, but
    its first ``t * members`` trees are the mean of the members' first ``t`` trees, on the
    scale of one member's. Why: the uncertainty pack keeps each fold model's first trees
    (``CascadeSettings.uncertainty_trees``) and maps their score gaps through the ranker's
    calibration; in :func:`average`'s order they would be the first member's trees divided
    by ``members``, gaps too small by that factor."""
    if members <= 1:
        return booster
    head, trees = _split_model_text(booster.model_to_string())
    if len(trees) % members:
        raise ValueError(f"{len(trees)} trees do not split into {members} equal members")
    rounds = len(trees) // members
    return _assemble(head, [trees[j * rounds + i] for i in range(rounds)
                            for j in range(members)])


def pack(boosters: list[lgb.Booster], max_iterations: list[int | None] | None = None
         ) -> lgb.Booster:
    """One booster whose raw score has one column per input booster (same feature columns).

    Why: one predict call instead of one per model. LightGBM's multiclass layout keeps
    ``num_tree_per_iteration`` trees per iteration, one per output column, summed separately;
    boosters with fewer trees are padded with constant-zero trees. The raw scores equal the
    inputs' raw scores (tests check this); the packed model is never trained further.
    ``max_iterations`` keeps only the first trees of each input (None: all of them).
    """
    if not boosters:
        raise ValueError("nothing to pack")
    k = len(boosters)
    parts = [_split_model_text(b.model_to_string()) for b in boosters]
    limits = max_iterations or [None] * k
    parts = [(head, trees[:limit] if limit else trees) for (head, trees), limit
             in zip(parts, limits)]
    widths = {b.num_feature() for b in boosters}
    if len(widths) != 1:
        raise ValueError(f"boosters to pack take different feature counts: {sorted(widths)}")
    header = []
    for line in parts[0][0]:
        if line.startswith("num_class="):
            line = f"num_class={k}"
        elif line.startswith("num_tree_per_iteration="):
            line = f"num_tree_per_iteration={k}"
        elif line.startswith("objective="):
            line = f"objective=multiclass num_class:{k}"
        header.append(line)
    iters = max(len(trees) for _, trees in parts)
    return _assemble(header, [trees[t] if t < len(trees) else _CONSTANT_TREE
                              for t in range(iters) for _, trees in parts])


class FastBooster:
    """A loaded booster with a raw-score predict that costs microseconds, not tens of them."""

    def __init__(self, booster: lgb.Booster):
        self.booster = booster
        self.num_trees = booster.num_trees()
        self.num_features = booster.num_feature()
        self.num_outputs = booster.num_model_per_iteration()

    @classmethod
    def load(cls, path: str | Path) -> "FastBooster | NumpyTrees":
        """The model at ``path``; without lightgbm installed, the same trees evaluated by
        numpy (:class:`tilepick.model.trees.NumpyTrees`: the same scores, slower)."""
        if lgb is None:
            from tilepick.model.trees import NumpyTrees

            return NumpyTrees.from_text(read_model_text(path))
        return cls(lgb.Booster(model_str=read_model_text(path)))

    def predict(self, x: np.ndarray, start: int = 0, count: int = 0) -> np.ndarray:
        """Raw scores of the iterations [start, start + count) (count 0: all the rest), on
        one thread: shape (rows,), or (rows, outputs) for a packed booster.

        ``x`` must be float64 and C- or Fortran-contiguous with the model's feature count.
        """
        n, f = x.shape
        k = self.num_outputs
        if f != self.num_features:
            raise ValueError(f"model expects {self.num_features} features, got {f}")
        if n == 0:
            return np.empty((0, k) if k > 1 else 0)
        if not _FAST:  # pragma: no cover
            return self.booster.predict(x, raw_score=True, start_iteration=start,
                                        num_iteration=count or None, num_threads=1)
        if x.dtype != np.float64:
            raise ValueError(f"features must be float64, got {x.dtype}")
        if x.flags.f_contiguous:
            layout = _COL_MAJOR
        elif x.flags.c_contiguous:
            layout = _ROW_MAJOR
        else:
            x = np.ascontiguousarray(x)
            layout = _ROW_MAJOR
        out = np.empty(n * k, dtype=np.float64)
        out_len = ctypes.c_int64(0)
        _safe_call(_PREDICT_FOR_MAT(
            self.booster._handle.value, x.ctypes.data, _DTYPE_FLOAT64, n, f, layout,
            _PREDICT_RAW_SCORE, start, count, _PARAMS, ctypes.addressof(out_len),
            out.ctypes.data))
        if out_len.value != n * k:
            raise RuntimeError(f"LightGBM returned {out_len.value} scores for {n} rows")
        return out.reshape(n, k) if k > 1 else out
