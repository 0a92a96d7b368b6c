"""tilepick: pick the fastest GPU kernel for every problem shape, and run it."""

from tilepick.config import KernelConfig
from tilepick.problem import DeviceMismatch, DType, GemmProblem, ProblemError

try:
    from importlib.metadata import version as _version

    __version__ = _version("tilepick")
except Exception:  # running from a source tree without installation
    __version__ = "0.0.0+src"

__all__ = ["GemmProblem", "DType", "KernelConfig", "ProblemError", "DeviceMismatch",
           "__version__", "matmul",
           "bmm", "linear", "Dispatcher"]


def __getattr__(name):
    """The torch-facing API loads lazily: importing tilepick for its CLI, data or model code
    must not pay for (or require) the dispatcher."""
    if name in ("matmul", "bmm", "linear", "set_dispatcher", "default_dispatcher"):
        from tilepick import api

        value = getattr(api, name)
    elif name == "Dispatcher":
        from tilepick.dispatch.dispatcher import Dispatcher as value
    else:
        raise AttributeError(f"module 'tilepick' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function (it sits on the hot path)
    return value

