"""Compiled trees for the prediction path: an optional accelerator, same scores as LightGBM.

Why: ranking a new problem has a ~1 ms budget, and LightGBM's C API spends most of the tree
stages' time converting each row (~0.5 us) before walking 127-leaf trees (~0.1 us each).
``lleaves`` compiles a LightGBM text model to machine code through LLVM, which reads the dense
row-major matrix as it is: stage 1 of a median problem (189 candidates x 5 trees) takes
~45 us instead of ~144 us, stage 2 (32 x 35 trees) ~69 us instead of ~106 us, with scores
equal to LightGBM's (BENCHMARKS.md, "Prediction latency", session 7).

Optional: ``pip install tilepick[fast]`` (lleaves, and llvmlite < 0.45, whose 0.45 API lleaves
does not follow). Without it, or with ``TILEPICK_COMPILED_TREES=0``, or when a compile fails
(with a warning), the caller keeps LightGBM. Compiled objects are cached per model text
(sha256) under ``$TILEPICK_TREE_CACHE`` (default ``~/.cache/tilepick/trees``): the first load
of a model on a machine compiles (~2.5 s for the bf16 model, without inlining: inlining made
the 35-tree stage compile for ~20 s), later loads read the object file.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

ENV_SWITCH = "TILEPICK_COMPILED_TREES"
ENV_CACHE = "TILEPICK_TREE_CACHE"
# void forest_root(double *data, double *out, int32 start, int32 end), as lleaves declares it
# but with address arguments (the GIL is released during the call, as for any CFUNCTYPE)
_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)


def enabled() -> bool:
    """Compiled trees are wanted (the switch is not off) and lleaves can be imported."""
    if os.environ.get(ENV_SWITCH, "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    try:
        import lleaves  # noqa: F401
    except Exception:   # ImportError, or llvmlite failing to load its library
        return False
    return True


def cache_dir() -> Path:
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env)
    from tilepick.runtime import cache_root

    return cache_root() / "trees"


def compile_iterations(booster, start: int, count: int
                       ) -> Callable[[np.ndarray], np.ndarray] | None:
    """A function giving the raw scores of trees [start, start + count) (count 0: all the rest)
    of a single-output booster, or None where compiled trees are unavailable."""
    if booster is None or not enabled():   # None: no LightGBM booster (model.trees)
        return None
    try:
        import lleaves

        text = booster.model_to_string(start_iteration=start, num_iteration=count or None)
        digest = hashlib.sha256(text.encode()).hexdigest()[:24]
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:   # lleaves reads models from files only
            path = Path(tmp) / "model.txt"
            path.write_text(text)
            model = lleaves.Model(model_file=str(path))
            model.compile(cache=str(folder / f"{digest}.o"), raw_score=True, finline=False)
        if model.num_feature() != booster.num_feature() or model._n_classes != 1:
            raise ValueError("compiled model does not match the booster")
        features = booster.num_feature()
        # lleaves' entry point, declared with address arguments: numpy's ``.ctypes.data``
        # (an int) costs half of ``.ctypes.data_as(POINTER(c_double))``
        entry = _ENTRY(ctypes.cast(model._c_entry_func, ctypes.c_void_p).value)
    except Exception as exc:  # noqa: BLE001 - any failure: LightGBM serves instead
        warnings.warn(f"compiled trees unavailable ({type(exc).__name__}: {exc}); "
                      "using LightGBM", RuntimeWarning, stacklevel=2)
        return None

    def predict(x: np.ndarray) -> np.ndarray:
        """Raw scores of C-contiguous float64 rows (what the candidate table builds)."""
        n = x.shape[0]
        if x.ndim != 2 or x.shape[1] != features:
            raise ValueError(f"model expects {features} features, got {x.shape}")
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.zeros(n, dtype=np.float64)
        if n:
            entry(x.ctypes.data, out.ctypes.data, 0, n)
        return out

    predict.model = model   # keeps the compiled code alive as long as the function
    return predict
