"""Experiment B3 (session 26): `tilepick train` with the rows of problems over BIGF FLOP
weighted BIGW times (on top of the recipe's own weights), by wrapping
``tilepick.model.cv.sample_weights``. Not a training option: it lost on validation
(BENCHMARKS, "Session 26").

    BIGW=3 BIGF=1e12 python benchmarks/analysis_s26/train_weighted_big.py <tilepick train arguments>
"""
import os
import sys

import numpy as np

import tilepick.model.cv as cv

WEIGHT, FLOOR = float(os.environ["BIGW"]), float(os.environ.get("BIGF", "1e12"))
_recipe = cv.sample_weights


def weighted(ds, *args, **kwargs):
    w = _recipe(ds, *args, **kwargs)
    w = np.ones(len(ds)) if w is None else w
    f = ds.frame
    flops = 2.0 * f["m"].to_numpy() * f["n"].to_numpy() * f["k"].to_numpy()
    return w * np.where(flops > FLOOR, WEIGHT, 1.0)


cv.sample_weights = weighted
from tilepick.cli import app  # noqa: E402 (after the wrap: cv.fit looks the name up at call time)

sys.argv = ["tilepick", *sys.argv[1:]]
app()
