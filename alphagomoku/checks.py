"""Argument checks shared by the public functions: one wording for one mistake."""

from __future__ import annotations

import numbers


def _is_int(value) -> bool:
    # numpy's integers are Integral too; bool is, to Python, but is never a count or a size here.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def positive_int(name: str, value, *, none_ok: bool = False) -> int | None:
    """``value`` as an int when it is a positive integer (or None, with ``none_ok``); else
    ValueError naming ``name``."""
    if none_ok and value is None:
        return None
    if not _is_int(value) or value < 1:
        wanted = "a positive integer or None" if none_ok else "a positive integer"
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return int(value)


def non_negative_int(name: str, value) -> int:
    """``value`` as an int when it is an integer >= 0; else ValueError naming ``name``."""
    if not _is_int(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)
