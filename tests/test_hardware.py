"""Which GPU profile the CPU-side tools use, and that asking costs no torch import where the OS
shows no GPU driver (torch's import was ~1.4 s of a ~3 s ``tilepick predict``)."""

import os
import subprocess
import sys

from tilepick import hardware


def test_no_driver_nodes_means_no_gpu(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(hardware, "GPU_DEVICE_NODES", ("/nonexistent/nvidiactl",))
    assert hardware.no_gpu_driver()
    monkeypatch.setattr(hardware, "GPU_DEVICE_NODES", (os.devnull,))   # a node that exists
    assert not hardware.no_gpu_driver()
    monkeypatch.setattr(sys, "platform", "win32")   # no such rule there: torch is asked
    monkeypatch.setattr(hardware, "GPU_DEVICE_NODES", ("/nonexistent/nvidiactl",))
    assert not hardware.no_gpu_driver()


def test_the_default_profile_comes_without_importing_torch():
    code = ("import sys\n"
            "from tilepick import hardware\n"
            "hardware.GPU_DEVICE_NODES = ('/nonexistent/nvidiactl',)\n"
            "sys.platform = 'linux'\n"
            "p = hardware.current()\n"
            "print(p.arch, 'torch' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("TILEPICK_ARCH", "TRITON_INTERPRET")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [hardware.DEFAULT_ARCH, "False"]


def test_arch_label_maps_known_gpus_and_keeps_unknown_names():
    """Rows of an unknown GPU must stay apart from every known arch, not fall into the default."""
    assert hardware.arch_label("NVIDIA H200") == "h200"
    assert hardware.arch_label("NVIDIA H100 80GB HBM3") == "h100"
    assert hardware.arch_label("NVIDIA A100-SXM4-80GB") == "NVIDIA A100-SXM4-80GB"
