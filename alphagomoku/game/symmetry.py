"""The board's symmetries, applied to input planes and policy vectors together.

Transform ``k`` (0..7) rotates by ``k % 4`` quarter turns, then mirrors left-right when ``k >= 4``.
A square board has all 8; a rectangular one only those that keep its shape (0, 2, 4, 6).
"""

from __future__ import annotations

import numpy as np

NUM_SYMMETRIES = 8


def valid_symmetries(width: int, height: int) -> tuple[int, ...]:
    return tuple(range(8)) if width == height else (0, 2, 4, 6)


def _check(k: int, width: int, height: int) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 0 <= k < NUM_SYMMETRIES:
        raise ValueError(f"symmetry must be an integer from 0 to 7, got {k!r}")
    if k not in valid_symmetries(width, height):
        raise ValueError(f"symmetry {k} does not map a {width}x{height} board onto itself")


def transform_planes(planes: np.ndarray, k: int) -> np.ndarray:
    """Apply symmetry ``k`` to arrays whose last two axes are (height, width)."""
    _check(k, planes.shape[-1], planes.shape[-2])
    out = np.rot90(planes, k % 4, axes=(-2, -1))
    if k >= 4:
        out = np.flip(out, axis=-1)
    return np.ascontiguousarray(out)


def inverse_planes(planes: np.ndarray, k: int) -> np.ndarray:
    """Undo :func:`transform_planes` with the same ``k``."""
    _check(k, planes.shape[-1], planes.shape[-2])
    out = np.flip(planes, axis=-1) if k >= 4 else planes
    return np.ascontiguousarray(np.rot90(out, -(k % 4), axes=(-2, -1)))


def transform_policy(policy: np.ndarray, k: int, width: int, height: int) -> np.ndarray:
    """Apply symmetry ``k`` to flat policy vectors (last axis height*width)."""
    lead = policy.shape[:-1]
    return transform_planes(policy.reshape(*lead, height, width), k).reshape(*lead, -1)


def inverse_policy(policy: np.ndarray, k: int, width: int, height: int) -> np.ndarray:
    lead = policy.shape[:-1]
    return inverse_planes(policy.reshape(*lead, height, width), k).reshape(*lead, -1)


def index_map(k: int, width: int, height: int) -> np.ndarray:
    """``m`` with ``m[i]`` = where point ``i`` goes under symmetry ``k`` (flat indices)."""
    src = np.arange(width * height).reshape(height, width)
    moved = transform_planes(src, k).reshape(-1)
    out = np.empty(width * height, dtype=np.int64)
    out[moved] = np.arange(width * height)
    return out
