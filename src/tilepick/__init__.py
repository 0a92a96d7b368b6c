"""tilepick: pick the fastest GPU kernel for every problem shape, and run it."""

from tilepick.config import KernelConfig
from tilepick.problem import DType, GemmProblem, ProblemError

try:
    from importlib.metadata import version as _version

    __version__ = _version("tilepick")
except Exception:  # running from a source tree without installation
    __version__ = "0.0.0+src"

__all__ = ["GemmProblem", "DType", "KernelConfig", "ProblemError", "__version__"]
