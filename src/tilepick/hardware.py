"""GPU profiles: what validity rules, features and analytic estimates need to know of a chip.

Read from the device when there is one; taken from the table when there is not (CPU-only
machines predict for a named arch). The arch key (``h100``, ``h200``) names model folders
and dataset folders.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class HardwareProfile:
    name: str
    arch: str
    sm_count: int
    l2_bytes: int
    smem_per_block: int       # opt-in maximum dynamic shared memory per block, bytes
    smem_per_sm: int
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255
    mem_bw_gbps: float = 0.0  # datasheet lead; measured ceilings belong in BENCHMARKS.md
    peak_tflops: dict = field(default_factory=dict)  # dense, per input dtype value
    capability: tuple = (9, 0)

    @property
    def has_tma(self) -> bool:
        return self.capability >= (9, 0)

    def to_dict(self) -> dict:
        return {"name": self.name, "arch": self.arch, "sm_count": self.sm_count,
                "l2_bytes": self.l2_bytes, "smem_per_block": self.smem_per_block,
                "mem_bw_gbps": self.mem_bw_gbps, "capability": list(self.capability)}


_HOPPER_PEAKS = {"bf16": 989.0, "fp16": 989.0, "fp8e4m3": 1979.0, "fp32": 67.0, "tf32": 494.0}

PROFILES: dict[str, HardwareProfile] = {
    "h100": HardwareProfile(
        name="NVIDIA H100 80GB HBM3", arch="h100", sm_count=132, l2_bytes=50 * 1024 * 1024,
        smem_per_block=232448, smem_per_sm=233472, mem_bw_gbps=3350.0,
        peak_tflops=dict(_HOPPER_PEAKS)),
    "h200": HardwareProfile(
        name="NVIDIA H200", arch="h200", sm_count=132, l2_bytes=60 * 1024 * 1024,
        smem_per_block=232448, smem_per_sm=233472, mem_bw_gbps=4800.0,
        peak_tflops=dict(_HOPPER_PEAKS)),
}

DEFAULT_ARCH = "h200"  # the arch our datasets and models are measured on


def arch_from_name(name: str) -> str | None:
    n = name.lower()
    if "h200" in n:
        return "h200"
    if "h100" in n:
        return "h100"
    return None


def arch_label(name: str) -> str:
    """The arch a GPU name stands for, or the name itself where no profile knows it: how rows
    of several machines are told apart (an unknown GPU stays distinct instead of matching)."""
    return arch_from_name(name) or name


def profile(arch: str) -> HardwareProfile:
    try:
        return PROFILES[arch]
    except KeyError:
        raise ValueError(f"unknown arch {arch!r}: known {sorted(PROFILES)}") from None


_current: HardwareProfile | None = None

#: device nodes of a GPU driver on Linux: NVIDIA's, WSL2's (CUDA goes through it) and ROCm's
GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", "/dev/kfd")


def no_gpu_driver() -> bool:
    """True where the OS shows no GPU driver at all (Linux without any of GPU_DEVICE_NODES):
    torch could see no CUDA device there, and importing it only to be told so took ~1.4 of a
    CPU-only ``tilepick predict``'s ~3 s (session 45). Other systems: False (ask torch)."""
    return sys.platform.startswith("linux") and not any(map(os.path.exists, GPU_DEVICE_NODES))


def current() -> HardwareProfile:
    """The profile of the visible GPU, or of ``TILEPICK_ARCH`` / the default arch without one."""
    global _current
    if _current is not None:
        return _current
    env = os.environ.get("TILEPICK_ARCH")
    prof = None
    from tilepick.runtime import interpreting

    if not env and not interpreting() and ("torch" in sys.modules or not no_gpu_driver()):
        try:
            import torch

            if torch.cuda.is_available():
                p = torch.cuda.get_device_properties(torch.cuda.current_device())
                arch = arch_from_name(p.name) or f"sm{p.major}{p.minor}"
                base = PROFILES.get(arch, PROFILES[DEFAULT_ARCH])
                prof = replace(
                    base, name=p.name, arch=arch, sm_count=p.multi_processor_count,
                    l2_bytes=getattr(p, "L2_cache_size", base.l2_bytes),
                    smem_per_block=getattr(p, "shared_memory_per_block_optin", base.smem_per_block),
                    capability=(p.major, p.minor))
        except Exception:  # no driver, broken install: fall back to the table
            prof = None
    if prof is None:
        prof = profile(env or DEFAULT_ARCH)
    _current = prof
    return prof
