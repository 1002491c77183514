"""What a benchmark figure was measured on, stored beside the figure."""

from __future__ import annotations

import os
import platform


def describe() -> dict:
    info = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    try:
        import numba

        info["numba"] = numba.__version__
    except ImportError:  # pragma: no cover - numba is a hard dependency
        pass
    return info
