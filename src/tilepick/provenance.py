"""Where a measurement came from: GPU, driver, CUDA, torch, Triton, tilepick, commit, date.

Every dataset row and benchmark table carries this, so a number can be traced and re-made.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import subprocess


DIRTY = "-dirty"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _git_commit(cwd: str | None = None) -> str:
    """``$TILEPICK_COMMIT``, else git's HEAD, with ``-dirty`` appended where tracked files differ
    from it. Why the mark: a copy of the tree whose ``.git`` lags its files (the device
    machine's, session 26) reports an older HEAD than the code that ran; a dirty commit names
    no tree that git can give back, so tools that rebuild a commit's kernels (the system
    perf-db) leave such rows out instead of crediting them to the wrong sources."""
    env = os.environ.get("TILEPICK_COMMIT")
    if env:
        return env
    here = cwd or _PACKAGE_DIR
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=5)
        head = out.stdout.strip()
        if not head:
            return "unknown"
        # a tree whose state git cannot tell counts as dirty: the commit may not be what ran
        return head if git_dirty(here) is False else head + DIRTY
    except Exception:
        return "unknown"


def git_dirty(cwd: str | None = None) -> bool | None:
    """Whether tracked files differ from git's HEAD (None: not a git checkout, or git failed)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                             cwd=cwd or _PACKAGE_DIR, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip()) if out.returncode == 0 else None


def _driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else "unknown"
    except Exception:
        return "unknown"


@functools.lru_cache(maxsize=1)
def collect() -> dict:
    import torch
    import triton

    import tilepick

    info = {
        "tilepick_version": tilepick.__version__,
        "tilepick_commit": _git_commit(),
        "torch_version": torch.__version__,
        "triton_version": triton.__version__,
        "python_version": platform.python_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if torch.cuda.is_available() and not os.environ.get("TRITON_INTERPRET"):
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        info.update(gpu_name=p.name, sm_count=p.multi_processor_count,
                    cuda_version=torch.version.cuda or "unknown", driver_version=_driver_version())
    else:
        info.update(gpu_name="cpu-interpreter", sm_count=0, cuda_version="none",
                    driver_version="none")
    return info
