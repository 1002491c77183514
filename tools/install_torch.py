"""Install the right PyTorch build into the current interpreter, before the package itself.

Why this exists: `pip install torch` with nothing installed picks a CUDA build of several GB on
Linux, even on a machine with no GPU. So the set-up decides first:

* torch already importable (any version the package accepts) -> leave it alone;
* an NVIDIA driver is present (``nvidia-smi`` runs)          -> the default (CUDA) build;
* otherwise                                                   -> the CPU build ``torch==2.13.0``.

For the CPU build on a machine whose package index only has CUDA builds, point pip at a CPU index
with ``ALPHAGOMOKU_TORCH_INDEX`` (e.g. the PyTorch CPU wheel index); ``ALPHAGOMOKU_TORCH_SPEC``
overrides the requirement itself.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

CPU_SPEC = "torch==2.13.0"
GPU_SPEC = "torch>=2.2,<2.15"


def has_nvidia_driver() -> bool:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return False
    try:
        return subprocess.run([exe, "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main() -> int:
    if importlib.util.find_spec("torch") is not None:
        print("install_torch: torch is already installed; keeping it")
        return 0
    spec = os.environ.get("ALPHAGOMOKU_TORCH_SPEC")
    gpu = has_nvidia_driver()
    if spec is None:
        spec = GPU_SPEC if gpu else CPU_SPEC
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", spec]
    index = os.environ.get("ALPHAGOMOKU_TORCH_INDEX")
    if index:
        cmd += ["--extra-index-url", index]
    print(f"install_torch: {'NVIDIA driver found' if gpu else 'no NVIDIA driver'}; "
          f"installing {spec}")
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
