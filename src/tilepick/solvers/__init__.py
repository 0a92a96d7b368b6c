"""The solver registry: every candidate family tilepick can run, and lookups over them."""

from __future__ import annotations

from tilepick.config import KernelConfig
from tilepick.hardware import HardwareProfile, current
from tilepick.problem import GemmProblem
from tilepick.runtime import require_devices
from tilepick.solvers.base import (ConfigInvalidError, NotApplicableError, NotInThisContextError,
                                   Solver)
from tilepick.solvers.cublas import CublasRepackSolver, CublasSolver
from tilepick.solvers.cublaslt import CublasLtSolver
from tilepick.solvers.triton_gemm import (GemvNSplitKSolver, GemvSolver, GemvTSolver, GemvTSplitKSolver, PointerSolver, SplitKAtomicSolver,
                                          SplitKFusedSolver, SplitKSolver, TmaPersistentSolver,
                                          TmaRepackSolver, TmaSolver, TmaSplitKSolver)

SOLVERS: dict[str, Solver] = {s.family: s for s in (
    PointerSolver(), TmaSolver(), TmaPersistentSolver(), TmaRepackSolver(), SplitKSolver(), SplitKAtomicSolver(),
    CublasSolver(), GemvSolver(), SplitKFusedSolver(),
    TmaSplitKSolver(), GemvTSolver(), GemvTSplitKSolver(), CublasRepackSolver(),
    CublasLtSolver(), GemvNSplitKSolver())}   # a family added later goes last: orders stay stable

__all__ = ["SOLVERS", "Solver", "solver_for", "applicable_configs", "NotApplicableError",
           "ConfigInvalidError", "NotInThisContextError", "launch", "bind"]


def solver_for(config: KernelConfig | str) -> Solver:
    return SOLVERS[_config(config).family]


def _config(config: KernelConfig | str) -> KernelConfig:
    return KernelConfig.from_id(config) if isinstance(config, str) else config


def applicable_configs(problem: GemmProblem, hw: HardwareProfile | None = None,
                       families: list[str] | None = None) -> list[KernelConfig]:
    """Every valid candidate for the problem, cuBLAS included, in a stable order."""
    hw = hw or current()
    out: list[KernelConfig] = []
    for fam, solver in SOLVERS.items():
        if families is None or fam in families:
            out.extend(solver.configs(problem, hw))
    return out


def launch(problem: GemmProblem, config: KernelConfig | str, a, b, out, scale_a=None,
           scale_b=None, hw: HardwareProfile | None = None, check: bool = True):
    """Run one config; raises NotApplicableError / ConfigInvalidError with the reason."""
    config = _config(config)
    solver = SOLVERS[config.family]
    if check:
        require_devices(a=a, b=b, out=out)
        solver.check(problem, config, hw)
    return solver.launch(problem, config, a, b, out, scale_a, scale_b)


def bind(problem: GemmProblem, config: KernelConfig | str, a, b, out, scale_a=None,
         scale_b=None):
    """A launch of a config already checked for the problem, prepared for tensors laid out like
    these (``Solver.bind``): the dispatcher's hot path, where the rules and the launch plan have
    been worked out on the first call and must not cost anything on the next ones."""
    config = _config(config)
    return SOLVERS[config.family].bind(problem, config, a, b, out, scale_a, scale_b)


def bind_new(problem: GemmProblem, config: KernelConfig | str, a, b):
    """A launch that makes its own output (``Solver.bind_new``), or None."""
    config = _config(config)
    return SOLVERS[config.family].bind_new(problem, config, a, b)
