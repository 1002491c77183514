"""The network's threat planes: for each empty point, what a stone there would make.

Six planes of ones and zeros, three for the side to move and then three for its opponent:

* **five**: a stone there wins at once (exactly, under the position's rule);
* **four**: a stone there leaves a window of ``n`` points in one line holding ``n - 1`` of that
  side's stones and none of the other's, so one more stone would make ``n`` in a row;
* **three**: in some line, at least two such windows would hold ``n - 2`` of that side's stones
  and none of the other's (an open or split three, roughly).

The five plane is the rule's own verdict. The four and three planes count windows and ignore
overlines and renju's forbidden points: they are hints that a small network would otherwise need
thousands of games to learn to see, and the network learns how much each deserves under each
rule. All six are the same function of the stones wherever the network is fed (the search's
leaves, the trainer, the players), and they turn with the board under its symmetries, since the
four line directions map onto one another.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.game.constants import EMPTY, THREAT_PLANES
from alphagomoku.game.kernels import would_win
from alphagomoku.numba_config import JIT

__all__ = ["THREAT_PLANES", "write_threat_planes"]

# The four line directions as (dy, dx), each walked once from its lines' first points.
_DIRECTIONS = np.array([[0, 1], [1, 0], [1, 1], [1, -1]], dtype=np.int64)


@njit(**JIT)
def _line_starts(h, w, d, starts):
    """The first point of every line in direction ``d`` (those whose step back leaves the
    board); returns how many were written to ``starts``."""
    dy, dx = _DIRECTIONS[d, 0], _DIRECTIONS[d, 1]
    k = 0
    for y in range(h):
        for x in range(w):
            py, px = y - dy, x - dx
            if py < 0 or py >= h or px < 0 or px >= w:
                starts[k] = y * w + x
                k += 1
    return k


@njit(**JIT)
def _mark_side(board, h, w, n, color, fours, threes, line, windows):
    """Mark the empty points for ``color`` (a window is clean when it holds none of the other
    side's stones): bit 1 of ``fours[p]`` where a stone at p leaves n - 1 in a clean window,
    bit 2 where a clean window through p holds n - 1 already (p may complete a five: the
    caller asks the rule), and ``threes[p]`` = 1 where one line has two clean windows through
    p holding n - 2."""
    other = 3 - color
    starts = np.empty(h + w + h + w, dtype=np.int64)
    for d in range(4):
        dy, dx = _DIRECTIONS[d, 0], _DIRECTIONS[d, 1]
        step = dy * w + dx
        count = _line_starts(h, w, d, starts)
        for s in range(count):
            p0 = starts[s]
            y, x = p0 // w, p0 % w
            length = 0
            while 0 <= y < h and 0 <= x < w:
                line[length] = p0 + length * step
                length += 1
                y += dy
                x += dx
            if length < n:
                continue
            for i in range(length):
                windows[i] = 0  # clean windows holding n - 2 of color, through line[i]
            own = 0
            theirs = 0
            for i in range(length):
                v = board[line[i]]
                own += v == color
                theirs += v == other
                if i >= n:
                    u = board[line[i - n]]
                    own -= u == color
                    theirs -= u == other
                if i < n - 1 or theirs > 0 or own < max(n - 3, 1):
                    continue
                # The window line[i - n + 1 .. i] holds only color's stones and empty points.
                for j in range(i - n + 1, i + 1):
                    p = line[j]
                    if board[p] != EMPTY:
                        continue
                    if own == n - 1:
                        fours[p] |= 2
                    elif own == n - 2:
                        fours[p] |= 1
                    else:
                        windows[j] += 1
            for i in range(length):
                if windows[i] >= 2:
                    threes[line[i]] = 1


@njit(**JIT)
def write_threat_planes(board, h, w, n, rule, color, out, first):
    """Fill ``out[first : first + THREAT_PLANES]`` ((planes, h, w), C-contiguous) with the
    threat planes of the position ``board`` for ``color``, to move (see the module)."""
    area = h * w
    flat = out.reshape(out.shape[0], area)
    line = np.empty(max(h, w), dtype=np.int64)
    windows = np.empty(max(h, w), dtype=np.int64)
    fours = np.empty(area, dtype=np.int8)
    threes = np.empty(area, dtype=np.int8)
    for side in range(2):
        c = color if side == 0 else 3 - color
        fours[:] = 0
        threes[:] = 0
        _mark_side(board, h, w, n, c, fours, threes, line, windows)
        base = first + 3 * side
        for p in range(area):
            five = (fours[p] & 2) != 0 and would_win(board, h, w, n, rule, p, c)
            flat[base, p] = 1.0 if five else 0.0
            flat[base + 1, p] = 1.0 if fours[p] & 1 else 0.0
            flat[base + 2, p] = 1.0 if threes[p] else 0.0
