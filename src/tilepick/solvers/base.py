"""The solver interface (MIOpen's Solver/Solution model, in Python).

A solver serves one kernel family. It knows which problems it can serve, which of its family's
configs are valid for a problem on a GPU, how much workspace a config needs, and how to launch.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod

from tilepick import config as cfg
from tilepick.config import KernelConfig
from tilepick.hardware import HardwareProfile, current
from tilepick.problem import GemmProblem


class NotApplicableError(ValueError):
    """The solver or config cannot serve the problem; the message says why."""


class ConfigInvalidError(RuntimeError):
    """The config failed to compile or launch for this problem (out of resources and the like).

    Callers treat it as an invalid candidate and move on; it never means a wrong answer.
    """


class NotInThisContextError(ConfigInvalidError):
    """The config refuses to run in the caller's current context (cuBLASLt's first handle on a
    device inside CUDA graph capture; operands off the alignment an entry was listed for), and
    is valid outside it. Callers move on to the next candidate for this launch but must not
    record the config as invalid for the problem: a record would outlive the context (the
    perf-db keeps it across processes) and keep the config from ever running again.
    """


class Solver(ABC):
    family: str
    op: str = "gemm"

    @abstractmethod
    def not_applicable_reason(self, problem: GemmProblem, hw: HardwareProfile) -> str | None:
        """None if the solver can serve the problem, else a human-readable reason."""

    def config_invalid_reason(self, problem: GemmProblem, config: KernelConfig,
                              hw: HardwareProfile) -> str | None:
        """None if the config is valid for the problem on this GPU, else why not."""
        return None

    @abstractmethod
    def launch(self, problem: GemmProblem, config: KernelConfig, a, b, out,
               scale_a=None, scale_b=None):
        """Compute ``out = a @ b`` (scaled for fp8); returns ``out``."""

    def stand_in(self, config: KernelConfig, problem_like: GemmProblem,
                 hw: HardwareProfile) -> GemmProblem:
        """A problem of ``problem_like``'s dtype and layout that every size rule accepts for
        ``config`` (one tile, enough K for its splits): the candidate table checks the
        size-independent rules on it once per config."""
        c = config
        return GemmProblem(max(1, c.block_m), max(1, c.block_n),
                           max(1, c.block_k) * max(1, c.split_k) * 4, dtype=problem_like.dtype,
                           layout=problem_like.layout, tf32=problem_like.tf32)

    def workspace(self, problem: GemmProblem, config: KernelConfig) -> int:
        """Extra device memory the config needs, in bytes."""
        return 0

    def bind(self, problem: GemmProblem, config: KernelConfig, a, b, out, scale_a=None,
             scale_b=None):
        """``launch`` with everything that depends only on the problem, the config and the
        tensors' layout worked out once: a callable ``(a, b, out, scale_a=None, scale_b=None)``
        for tensors laid out exactly like these (shapes, strides, dtypes, device, 16-byte
        alignment). The dispatcher's hot path calls it on a repeated tensor signature. This
        default just forwards to ``launch``; families with per-call setup worth skipping
        (launch plans, 3-D views, descriptors) override it."""
        return functools.partial(self.launch, problem, config)

    def bind_new(self, problem: GemmProblem, config: KernelConfig, a, b):
        """A launch that makes its own output, ``(a, b) -> out``, for tensors laid out like
        these, where that is cheaper than allocating the output in Python and calling the
        ``bind`` launch (None: it is not). Why: ``tilepick.matmul(a, b)`` on a cached problem
        spent ~7 us of its ~27 us host time allocating the output that torch.matmul, with the
        same cuBLAS kernel, allocates in C++ (H200 host, BENCHMARKS "Session 42")."""
        return None

    # -- derived ------------------------------------------------------------------------------
    def is_applicable(self, problem: GemmProblem, hw: HardwareProfile | None = None) -> bool:
        return self.not_applicable_reason(problem, hw or current()) is None

    def configs(self, problem: GemmProblem, hw: HardwareProfile | None = None) -> list[KernelConfig]:
        """The valid configs of this family for the problem (empty if not applicable)."""
        hw = hw or current()
        if self.not_applicable_reason(problem, hw) is not None:
            return []
        return [c for c in cfg.space(self.family)
                if self.config_invalid_reason(problem, c, hw) is None]

    def check(self, problem: GemmProblem, config: KernelConfig,
              hw: HardwareProfile | None = None) -> None:
        """Raise NotApplicableError naming why ``config`` cannot serve ``problem``."""
        hw = hw or current()
        if config.family != self.family:
            raise NotApplicableError(f"config {config.id} is not of family {self.family}")
        why = self.not_applicable_reason(problem, hw)
        if why is None:
            why = self.config_invalid_reason(problem, config, hw)
        if why is not None:
            raise NotApplicableError(f"{config.id} is not applicable to {problem.key()}: {why}")

    def default_config(self, problem: GemmProblem,
                       hw: HardwareProfile | None = None) -> KernelConfig | None:
        """A reasonable config without a model: the valid one nearest the family's default
        (``default_distance``)."""
        configs = self.configs(problem, hw)
        return min(configs, key=self.default_distance(problem)) if configs else None

    def default_distance(self, problem: GemmProblem):
        """The sort key of ``default_config``: here, nearness to a 128x128x64 tile."""
        def distance(c: KernelConfig):
            return (abs(c.block_m - min(128, c.block_m if problem.m < 128 else 128)),
                    abs(c.block_n - 128), abs(c.block_k - 64), abs(c.num_stages - 3),
                    c.num_warps, c.split_k, c.id)
        return distance
