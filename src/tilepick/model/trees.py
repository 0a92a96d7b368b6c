"""A saved LightGBM model evaluated with numpy alone: prediction without the lightgbm package.

Why: ranking needs only the trees, and the trees are plain text (``model.txt.gz``). Machines
that run the kernels need not carry LightGBM (the GPU machines of this project start bare, and
their upload limit is nearly spent by the repository); training still needs it. Slower than
LightGBM's C++ or the compiled trees (milliseconds a problem, not microseconds), so it is the
last resort of :meth:`tilepick.model.booster.FastBooster.load`; the scores are the same
(``tests/test_trees.py`` checks them against LightGBM on the shipped models).

The decision rules are LightGBM's (``include/LightGBM/tree.h``): ``decision_type`` bit 0 marks a
categorical split, bit 1 the default direction (left) for missing values, bits 2-3 the missing
type (0 none: NaN reads as 0; 1 zero: |x| <= 1e-35 takes the default; 2 NaN: NaN takes it);
a numerical split goes left when ``x <= threshold``; a categorical one goes left when int(x)
is set in the split's bitset (NaN or negative: right). Children below zero are leaves (~child).

Models without categorical splits walk every tree at once (:class:`_Forest`): one numpy step
per tree level for all (row, tree) pairs, instead of one per level of each tree. Why: the
cuBLASLt entry model scores ~8 rows with 300 trees, where the per-tree loop cost 23 ms a
problem on the GPU machines (which have no LightGBM); the forest walk ~1 ms.
"""

from __future__ import annotations

import numpy as np

_ZERO = 1e-35


def _numeric_left(nodes, nd: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Whether values ``v`` at nodes ``nd`` of ``nodes`` (a :class:`_Tree` or :class:`_Forest`:
    arrays threshold, missing, default_left) go left by a numerical split, missing values
    included (see the module doc)."""
    nan = np.isnan(v)
    miss = nodes.missing[nd]
    v = np.where(nan & (miss != 2), 0.0, v)
    go_left = v <= nodes.threshold[nd]
    default = ((miss == 1) & (np.abs(v) <= _ZERO)) | ((miss == 2) & nan)
    return np.where(default, nodes.default_left[nd], go_left)


class _Tree:
    __slots__ = ("feature", "threshold", "cat", "default_left", "missing", "left", "right",
                 "leaf", "cat_bounds", "cat_bits")

    def __init__(self, fields: dict):
        self.leaf = np.array(fields["leaf_value"].split(), dtype=np.float64)
        if int(fields["num_leaves"]) == 1:
            self.feature = None
            return
        ints = lambda key: np.array(fields[key].split(), dtype=np.int64)  # noqa: E731
        self.feature = ints("split_feature")
        self.threshold = np.array(fields["threshold"].split(), dtype=np.float64)
        dt = ints("decision_type")
        self.cat = (dt & 1).astype(bool)
        self.default_left = ((dt >> 1) & 1).astype(bool)
        self.missing = (dt >> 2) & 3
        self.left, self.right = ints("left_child"), ints("right_child")
        if int(fields.get("num_cat", "0")) > 0:
            self.cat_bounds = ints("cat_boundaries")
            self.cat_bits = np.array(fields["cat_threshold"].split(), dtype=np.uint64)
        else:
            self.cat_bounds = self.cat_bits = None

    def predict(self, x: np.ndarray) -> np.ndarray:
        n = x.shape[0]
        if self.feature is None:
            return np.full(n, self.leaf[0])
        node = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        while len(rows):
            nd = node[rows]
            go_left = _numeric_left(self, nd, x[rows, self.feature[nd]])
            cat = self.cat[nd]
            if cat.any():
                go_left[cat] = self._in_bitset(nd[cat], x[rows[cat], self.feature[nd[cat]]])
            child = np.where(go_left, self.left[nd], self.right[nd])
            node[rows] = child
            rows = rows[child >= 0]
        return self.leaf[~node]

    def _in_bitset(self, nd: np.ndarray, v: np.ndarray) -> np.ndarray:
        ok = ~np.isnan(v) & (v >= 0)
        iv = np.where(ok, v, 0).astype(np.int64)
        idx = self.threshold[nd].astype(np.int64)
        lo, hi = self.cat_bounds[idx], self.cat_bounds[idx + 1]
        word = iv // 32
        ok &= word < hi - lo
        bits = self.cat_bits[np.where(ok, lo + word, 0)]
        return ok & (((bits >> (iv % 32).astype(np.uint64)) & np.uint64(1)) == 1)


class _Forest:
    """Every tree's nodes in flat arrays (global node ids; a child below zero is ~global leaf
    id), for trees without categorical splits."""

    def __init__(self, trees: list[_Tree]):
        split = [t for t in trees if t.feature is not None]
        sizes = np.array([len(t.feature) for t in split], dtype=np.int64)
        leaves = np.array([len(t.leaf) for t in trees], dtype=np.int64)
        node_off = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        leaf_off = np.concatenate(([0], np.cumsum(leaves)[:-1])).astype(np.int64)
        self.leaf = np.concatenate([t.leaf for t in trees])
        # per tree: its root's global id, or ~its only leaf for a one-leaf tree
        self.root = np.empty(len(trees), dtype=np.int64)
        cat = lambda f: np.concatenate([f(t) for t in split]) if split else np.empty(0)  # noqa
        it = iter(node_off)
        globs = []
        for i, t in enumerate(trees):
            if t.feature is None:
                self.root[i] = ~leaf_off[i]
                continue
            off = next(it)
            self.root[i] = off
            globs.append(tuple(np.where(c >= 0, c + off, ~(~c + leaf_off[i]))
                               for c in (t.left, t.right)))
        self.feature = cat(lambda t: t.feature).astype(np.int64)
        self.threshold = cat(lambda t: t.threshold).astype(np.float64)
        self.missing = cat(lambda t: t.missing).astype(np.int64)
        self.default_left = cat(lambda t: t.default_left).astype(bool)
        self.left = np.concatenate([g[0] for g in globs]) if globs else np.empty(0, np.int64)
        self.right = np.concatenate([g[1] for g in globs]) if globs else np.empty(0, np.int64)

    def leaves(self, x: np.ndarray, trees: np.ndarray) -> np.ndarray:
        """Leaf values, (rows, len(trees)), of the trees indexed by ``trees``."""
        n, t = x.shape[0], len(trees)
        node = np.tile(self.root[trees], n)
        row = np.repeat(np.arange(n), t)
        act = np.flatnonzero(node >= 0)
        while len(act):
            nd = node[act]
            go_left = _numeric_left(self, nd, x[row[act], self.feature[nd]])
            child = np.where(go_left, self.left[nd], self.right[nd])
            node[act] = child
            act = act[child >= 0]
        return self.leaf[~node].reshape(n, t)


class NumpyTrees:
    """The raw-score ``predict`` of :class:`tilepick.model.booster.FastBooster`, from the text."""

    booster = None   # no LightGBM booster behind it (the compiled-trees path needs one)

    def __init__(self, text: str):
        header, trees = _parse(text)
        self.num_outputs = int(header.get("num_tree_per_iteration", "1"))
        self.num_features = int(header["max_feature_idx"]) + 1
        self.trees = [_Tree(t) for t in trees]
        self.num_trees = len(self.trees)
        # categorical splits (a bitset per node) are walked tree by tree
        self._forest = (None if any(t.feature is not None and t.cat.any() for t in self.trees)
                        else _Forest(self.trees))

    @classmethod
    def from_text(cls, text: str) -> "NumpyTrees":
        return cls(text)

    def predict(self, x: np.ndarray, start: int = 0, count: int = 0) -> np.ndarray:
        """Raw scores of the iterations [start, start + count) (count 0: all the rest): shape
        (rows,), or (rows, outputs) for a packed model."""
        x = np.asarray(x, dtype=np.float64)
        n, f = x.shape
        if f != self.num_features:
            raise ValueError(f"model expects {self.num_features} features, got {f}")
        k = self.num_outputs
        iterations = self.num_trees // k
        stop = iterations if count <= 0 else min(iterations, start + count)
        out = np.zeros((n, k))
        if self._forest is not None and stop > start:
            idx = np.arange(start * k, stop * k)
            vals = self._forest.leaves(x, idx)
            for j in range(k):   # tree it * k + j feeds output j; summed in tree order
                for col in vals[:, j::k].T:
                    out[:, j] += col
        else:
            for it in range(start, stop):
                for j in range(k):
                    out[:, j] += self.trees[it * k + j].predict(x)
        return out if k > 1 else out[:, 0]


def _parse(text: str) -> tuple[dict, list[dict]]:
    """(header fields, one dict of fields per tree) of LightGBM's text format."""
    header: dict = {}
    trees: list[dict] = []
    current = header
    for line in text.splitlines():
        if line.startswith("Tree="):
            current = {}
            trees.append(current)
        elif line.startswith("end of trees"):
            break
        elif "=" in line:
            key, _, value = line.partition("=")
            current[key] = value
    if "max_feature_idx" not in header:
        raise ValueError("not a LightGBM text model (no max_feature_idx)")
    return header, trees
