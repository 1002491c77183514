"""What ``INFO max_memory`` leaves the searches.

Most of the engine's memory is spent before its first search: Python, torch, ONNX Runtime,
the compiled kernels and the network: about 200 MB on ONNX Runtime, 360 MB with torch. What a
game adds, the search trees and the cache of network answers, is what the engine can size, so
it gives them the limit less what the process holds once its player is ready, less a margin.
"""

from __future__ import annotations

import os
import sys

# Kept free under the limit: a move's own arrays (leaf planes, the solvers' tables) and the
# allocator's slack are not in the trees' and cache's estimates.
MARGIN_SHARE = 0.1


def resident_bytes() -> int | None:
    """This process's resident memory (Linux), its peak (macOS), or None where neither can be
    read (Windows)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def search_memory(max_memory: int, held: int | None) -> int:
    """The bytes the searches may take under ``max_memory`` when the process already holds
    ``held`` (None: unknown, counted as nothing); 0 when nothing is left."""
    return max(0, int(max_memory * (1.0 - MARGIN_SHARE)) - (held or 0))


def megabytes(n: int) -> str:
    return f"{n / 2**20:.0f} MB"
