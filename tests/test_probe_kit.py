"""The kernel probes' shared harness (benchmarks/probe_kit.py) on the interpreter: a variant is
timed only if its result matches float64; a wrong or failing one is recorded with why."""

import importlib.util
from pathlib import Path

import pytest

from tilepick import solvers
from tilepick.config import KernelConfig

_path = Path(__file__).resolve().parents[1] / "benchmarks" / "probe_kit.py"
_spec = importlib.util.spec_from_file_location("probe_kit", _path)
probe_kit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe_kit)


def test_checked_candidates_keep_only_right_results():
    c = probe_kit.CheckedCandidates("48x40x56:rc", dtype="fp16", device="cpu")
    assert list(c.fns) == ["cublas"] and c.errors["cublas"] < probe_kit.TOLERANCE
    cfg = KernelConfig.from_id("gemm.ptr.m16n16k32.g1.w4.s2")
    out = c.output()
    assert out.shape == (48, 40)
    assert c.add(cfg.id, lambda o=out: solvers.launch(c.p, cfg, c.inp.a, c.inp.b, o), out)
    out = c.output()
    assert not c.add("wrong", lambda o=out: o.fill_(1.0), out)
    assert c.notes["wrong"].startswith("wrong result")
    assert not c.add("fails", lambda: 1 / 0, c.output())
    assert c.notes["fails"].startswith("ZeroDivisionError")
    assert set(c.fns) == {"cublas", cfg.id}

    rows, timed = c.time(rounds=2, max_ms=1.0)
    assert [r["tflops"] for r in rows] == sorted((r["tflops"] for r in rows), reverse=True)
    assert {r["candidate"] for r in rows} == set(timed) == {"cublas", cfg.id}
    best = probe_kit.best_by_prefix(rows, ("gemm.ptr.", "cublas", "gemm.tma."))
    assert best["gemm.ptr."]["candidate"] == cfg.id and best["gemm.tma."] is None
    line = probe_kit.best_line(c.spec, best)
    assert line.startswith("48x40x56:rc") and "ptr=" in line and "tma=" not in line


def test_malformed_shape_is_named():
    with pytest.raises(ValueError, match="'4096x4096:rr'.*MxNxK:layout"):
        probe_kit.CheckedCandidates("4096x4096:rr", dtype="fp16", device="cpu")
