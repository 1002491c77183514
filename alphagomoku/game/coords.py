"""Coordinates: the three ways a point is named.

====================  ====================  =========================================
form                  example (15x15)       meaning
====================  ====================  =========================================
flat index            112                   ``y * width + x``; what kernels and the
                                            network's policy use
``(x, y)``            ``(7, 7)``            Gomocup protocol: x the column, y the row,
                                            both 0-based, y = 0 the top row
``h8``                ``"h8"``              letter = column (``a`` = x 0), number =
                                            row counted from the bottom (1-based)
====================  ====================  =========================================

So on 15x15 ``a15`` is ``(0, 0)`` = index 0 (top left) and ``a1`` is ``(0, 14)`` = index 210.
"""

from __future__ import annotations

import re

import numpy as np

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_NAME = re.compile(r"^\s*([a-zA-Z])\s*(\d{1,2})\s*$")
_PAIR = re.compile(r"^\s*(-?\d+)\s*[, ]\s*(-?\d+)\s*$")


class CoordinateError(ValueError):
    """A move that does not name a point of the board."""


def to_index(x: int, y: int, width: int, height: int) -> int:
    if not (0 <= x < width and 0 <= y < height):
        raise CoordinateError(f"point ({x}, {y}) is off the {width}x{height} board")
    return y * width + x


def to_xy(index: int, width: int, height: int) -> tuple[int, int]:
    if not 0 <= index < width * height:
        raise CoordinateError(f"index {index} is off the {width}x{height} board")
    return index % width, index // width


def to_name(index: int, width: int, height: int) -> str:
    x, y = to_xy(index, width, height)
    return f"{_LETTERS[x]}{height - y}"


def from_name(name: str, width: int, height: int) -> int:
    m = _NAME.match(name)
    if not m:
        raise CoordinateError(f"{name!r} is not a point name like 'h8'")
    x = _LETTERS.index(m.group(1).lower())
    row = int(m.group(2))
    if not (0 <= x < width and 1 <= row <= height):
        raise CoordinateError(f"{name!r} is off the {width}x{height} board")
    return (height - row) * width + x


def _is_integer(v) -> bool:
    """A Python or numpy integer, not a bool (True is no point of the board)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def parse_move(move, width: int, height: int) -> int:
    """Any accepted form -> flat index: an int, an ``(x, y)`` pair, ``"x,y"`` or ``"h8"``."""
    if isinstance(move, bool):
        raise CoordinateError(f"{move!r} is not a move")
    if _is_integer(move):
        idx = int(move)
        if not 0 <= idx < width * height:
            raise CoordinateError(f"index {idx} is off the {width}x{height} board")
        return idx
    if isinstance(move, (tuple, list)) and len(move) == 2:
        x, y = move
        if not all(_is_integer(v) for v in move):
            raise CoordinateError(f"{move!r} is not a point: x and y must be integers")
        return to_index(int(x), int(y), width, height)
    if isinstance(move, str):
        m = _PAIR.match(move)
        if m:
            return to_index(int(m.group(1)), int(m.group(2)), width, height)
        return from_name(move, width, height)
    raise CoordinateError(f"{move!r} is not a move: use an index, (x, y), 'x,y' or 'h8'")
