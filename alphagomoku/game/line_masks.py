"""Each colour's stones as one bit mask per line of the board, in each of the four directions.

The VCF and VCT solvers read their threats from these: a line with too few stones of a colour
costs one popcount instead of a walk along it, and a five or four through a point is a few bit
operations. Lines are numbered in the order in which a row-major scan meets their first points,
and a point's bit is its distance from its line's first point, so bits grow in the direction of
the solvers' steps (_DX, _DY in :mod:`alphagomoku.game.vcf`). ``masks`` is int64
``(2, 4, area)``: colour index (black 0, white 1), direction, line.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.game.constants import EMPTY
from alphagomoku.numba_config import JIT


@njit(**JIT)
def line_count(h, w, d):
    if d == 0:
        return h
    if d == 1:
        return w
    return h + w - 1


@njit(**JIT)
def line_of(h, w, p, d):
    """(line, bit) of point ``p`` in direction ``d`` (steps _DX, _DY): lines are numbered in the
    order in which a row-major scan meets their first points, and a point's bit is its distance
    from its line's first point."""
    y = p // w
    x = p - y * w
    if d == 0:
        return y, x
    if d == 1:
        return x, y
    if d == 2:
        if x >= y:
            return x - y, y
        return w - 1 + y - x, x
    if x + y < h:
        return x + y, x
    return x + y, h - 1 - y


@njit(**JIT)
def line_start(h, w, d, line):
    """(first point, length) of ``line`` in direction ``d``."""
    if d == 0:
        return line * w, w
    if d == 1:
        return line, h
    if d == 2:
        if line < w:
            return line, min(w - line, h)
        y0 = line - (w - 1)
        return y0 * w, min(h - y0, w)
    if line < h:
        return line * w, min(line + 1, w)
    x0 = line - (h - 1)
    return (h - 1) * w + x0, min(w - x0, h)


@njit(**JIT)
def build_masks(board, h, w, masks):
    """Each colour's stones line by line, as :func:`line_of` numbers lines and bits, over a
    row-major scan that spares line_of's divisions: the solver builds these for every call."""
    for d in range(4):
        for line in range(line_count(h, w, d)):
            masks[0, d, line] = 0
            masks[1, d, line] = 0
    p = 0
    for y in range(h):
        for x in range(w):
            v = board[p]
            p += 1
            if v != EMPTY:
                toggle(masks, h, w, v - 1, y, x)


@njit(**JIT)
def flip_bit(masks, h, w, color, p):
    """Toggle the bits of ``color``'s point ``p`` (the search flips two stones a ply, and back)."""
    y = p // w
    toggle(masks, h, w, color - 1, y, p - y * w)


@njit(**JIT)
def toggle(masks, h, w, c, y, x):
    """Toggle point (x, y)'s bit in each of its four lines of colour index ``c``: line_of's
    numbering written out, without its division."""
    one = np.int64(1)
    masks[c, 0, y] ^= one << x
    masks[c, 1, x] ^= one << y
    if x >= y:
        masks[c, 2, x - y] ^= one << y
    else:
        masks[c, 2, w - 1 + y - x] ^= one << x
    if x + y < h:
        masks[c, 3, x + y] ^= one << x
    else:
        masks[c, 3, x + y] ^= one << (h - 1 - y)


@njit(**JIT)
def popcount(x):
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF
