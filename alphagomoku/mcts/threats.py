"""Compiled look-ups of immediate wins: where a side completes its line with one stone.

The search uses them to solve nodes at birth. If the side to move can win at once the node is a
win; if the opponent could win at two points it is a loss; if at one point, that point is the
only move worth playing (a forced block). Searching every empty point at every node would cost
more than the rest of the search, so a node only looks where a win can have appeared: a point
becomes winning for a side only when that side's own last stone lies on the winning line, and
every earlier winning point was already seen at an ancestor (which is then solved and never
searched past). The root, which has no ancestor, scans the whole board once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.game import kernels as game
from alphagomoku.game.constants import EMPTY, NO_MOVE
from alphagomoku.numba_config import JIT

_DX = np.array([1, 0, 1, 1], dtype=np.int64)
_DY = np.array([0, 1, 1, -1], dtype=np.int64)


@njit(**JIT)
def add_point(points, count, p):
    """Append ``p`` to ``points[:count]`` unless already there; ``points`` holds two at most."""
    for i in range(count):
        if points[i] == p:
            return count
    if count < 2:
        points[count] = p
        count += 1
    return count


@njit(**JIT)
def wins_through(board, h, w, n_in_row, rule, move, color, points, count):
    """Add to ``points`` the empty points on the four lines through ``move`` (a stone of
    ``color``) where ``color`` would win at once; stops at two. Returns the new count."""
    x0 = move % w
    y0 = move // w
    reach = n_in_row - 1
    for d in range(4):
        dx = _DX[d]
        dy = _DY[d]
        # A winning point on this line needs n-1 stones of the colour within reach of `move`.
        own = 0
        for k in range(-reach, reach + 1):
            x = x0 + k * dx
            y = y0 + k * dy
            if 0 <= x < w and 0 <= y < h and board[y * w + x] == color:
                own += 1
        if own < n_in_row - 1:
            continue
        for k in range(-reach, reach + 1):
            x = x0 + k * dx
            y = y0 + k * dy
            if k == 0 or not (0 <= x < w and 0 <= y < h):
                continue
            p = y * w + x
            if board[p] == EMPTY and game.would_win(board, h, w, n_in_row, rule, p, color):
                count = add_point(points, count, p)
                if count == 2:
                    return count
    return count


@njit(**JIT)
def _touches(board, h, w, p, color):
    """Whether a stone of ``color`` is next to ``p`` (the eight neighbours)."""
    x0 = p % w
    y0 = p // w
    for y in range(max(0, y0 - 1), min(h, y0 + 2)):
        for x in range(max(0, x0 - 1), min(w, x0 + 2)):
            if board[y * w + x] == color:
                return True
    return False


@njit(**JIT)
def scan_wins(board, h, w, n_in_row, rule, color, points):
    """Whole-board scan: up to two points where ``color`` wins at once. Returns the count and
    pads ``points`` with NO_MOVE. A winning line of two or more stones holds a neighbour of its
    new stone, so only empty points touching ``color`` are tried (most of the board is not)."""
    points[0] = NO_MOVE
    points[1] = NO_MOVE
    count = 0
    for p in range(h * w):
        if board[p] == EMPTY and _touches(board, h, w, p, color) \
                and game.would_win(board, h, w, n_in_row, rule, p, color):
            count = add_point(points, count, p)
            if count == 2:
                break
    return count
