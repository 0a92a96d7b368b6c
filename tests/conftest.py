"""Shared test setup: every test runs kernels on the CPU through Triton's interpreter.

``TRITON_INTERPRET`` is read when triton is imported, so it is set here, at import time of the
first conftest, before any test module (or tilepick) imports triton.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
# Predictors score with LightGBM unless a test asks for compiled trees (test_compiled_trees.py):
# compiling every small model the tests train would cost seconds each
os.environ.setdefault("TILEPICK_COMPILED_TREES", "0")
# Dispatchers consult no shipped system perf-db unless a test asks (test_systemdb.py)
os.environ.setdefault("TILEPICK_SYSTEM_DB", "off")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def hw():
    """The hardware profile validity rules are checked against (a TMA-capable Hopper)."""
    from tilepick.hardware import profile

    return profile("h200")
