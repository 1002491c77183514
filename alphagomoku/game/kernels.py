"""Compiled game kernels on a flat int8 board.

Conventions every kernel shares:

* ``board``: int8 array of shape (h * w,), point ``y * w + x`` (x is the column, as in Gomocup);
  values EMPTY, BLACK, WHITE.
* Kernels trust their arguments; ``alphagomoku.game.position`` validates before calling them.
* A kernel that "tries" a stone puts it down and always takes it back before returning.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.game.constants import BLACK, EMPTY, FREESTYLE, RENJU, STANDARD, WHITE
from alphagomoku.numba_config import JIT

# The four line directions as (dx, dy); the other four are their negatives.
_DX = np.array([1, 0, 1, 1], dtype=np.int64)
_DY = np.array([0, 1, 1, -1], dtype=np.int64)

# How deep the renju three-check recursion may go before a three is taken as real. Real games
# never come near it; it only bounds the work on contrived positions.
_RENJU_MAX_DEPTH = 8


@njit(**JIT)
def run_length(board, h, w, x, y, dx, dy, color):
    """Stones of ``color`` in a row starting one step from (x, y) in direction (dx, dy)."""
    n = 0
    x += dx
    y += dy
    while 0 <= x < w and 0 <= y < h and board[y * w + x] == color:
        n += 1
        x += dx
        y += dy
    return n


@njit(**JIT)
def _steps(h, w, x, y, d):
    """Direction ``d`` at (x, y) on the flat board: the index step, and how many steps fit on the
    board forward and backward. Walking flat indices within these bounds needs no 2-D checks."""
    if d == 0:
        return 1, w - 1 - x, x
    if d == 1:
        return w, h - 1 - y, y
    if d == 2:
        return w + 1, min(w - 1 - x, h - 1 - y), min(x, y)
    return 1 - w, min(w - 1 - x, y), min(x, h - 1 - y)


@njit(**JIT)
def _line_length_xy(board, h, w, move, x, y, d, color):
    step, forward, backward = _steps(h, w, x, y, d)
    n = 1
    p = move
    for _ in range(forward):
        p += step
        if board[p] != color:
            break
        n += 1
    p = move
    for _ in range(backward):
        p -= step
        if board[p] != color:
            break
        n += 1
    return n


@njit(**JIT)
def line_length(board, h, w, move, d, color):
    """Length of the line of ``color`` through ``move`` in direction ``d`` (stone at move counted)."""
    return _line_length_xy(board, h, w, move, move % w, move // w, d, color)


@njit(**JIT)
def is_winning_line(length, n_in_row, rule, color):
    if rule == FREESTYLE:
        return length >= n_in_row
    if rule == STANDARD:
        return length == n_in_row
    # Renju: black needs exactly five, white five or more.
    if color == BLACK:
        return length == n_in_row
    return length >= n_in_row


@njit(**JIT)
def wins_at(board, h, w, n_in_row, rule, move, color):
    """True when the stone of ``color`` already at ``move`` completes a winning line."""
    x = move % w
    y = move // w
    for d in range(4):
        if is_winning_line(_line_length_xy(board, h, w, move, x, y, d, color), n_in_row, rule, color):
            return True
    return False


@njit(**JIT)
def would_win(board, h, w, n_in_row, rule, move, color):
    """True when playing ``color`` at the empty point ``move`` wins at once."""
    board[move] = color
    r = wins_at(board, h, w, n_in_row, rule, move, color)
    board[move] = EMPTY
    return r


# ---------------------------------------------------------------------------------------------
# Renju: black's forbidden points.
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _black_at(board, h, w, x, y):
    return 0 <= x < w and 0 <= y < h and board[y * w + x] == BLACK


@njit(**JIT)
def _empty_at(board, h, w, x, y):
    return 0 <= x < w and 0 <= y < h and board[y * w + x] == EMPTY


@njit(**JIT)
def _fours_in_direction(board, h, w, move, d):
    """Number of fours through the black stone at ``move`` along direction ``d``.

    A four is a line that one more black stone turns into exactly five. The five-making points
    are collected along the line; the two ends of a straight four (.XXXX.) are one four, two
    five-making points of any other shape (X.XXX.X, XX.XX.XX, XXX.X.XXX) are two.
    """
    if _blacks_near(board, h, w, move, d, 4) < 3:
        return 0  # a four holds three more black stones within four points of `move`
    x0 = move % w
    y0 = move // w
    dx = _DX[d]
    dy = _DY[d]
    first = 99
    count = 0
    for k in range(-4, 5):
        if k == 0:
            continue
        x = x0 + k * dx
        y = y0 + k * dy
        if not _empty_at(board, h, w, x, y):
            continue
        p = y * w + x
        board[p] = BLACK
        lo = run_length(board, h, w, x, y, -dx, -dy, BLACK)
        hi = run_length(board, h, w, x, y, dx, dy, BLACK)
        board[p] = EMPTY
        # The five must be exactly five and must contain the new stone at `move`.
        if lo + hi + 1 == 5 and -lo <= -k <= hi:
            if count == 0:
                first = k
            elif count == 1 and k - first == 5:
                # Both ends of one straight four: already counted once.
                continue
            count += 1
    return count


@njit(**JIT)
def _makes_straight_four(board, h, w, move, k, d):
    """With black stones at ``move`` and at offset ``k`` from it along ``d``: is there a straight
    four (.XXXX.) holding both, whose two completing moves each give exactly five?"""
    x0 = move % w
    y0 = move // w
    dx = _DX[d]
    dy = _DY[d]
    lo = min(0, k)
    hi = max(0, k)
    # Windows of four consecutive points [s, s + 3] that hold offsets 0 and k.
    for s in range(hi - 3, lo + 1):
        ok = True
        for j in range(4):
            if not _black_at(board, h, w, x0 + (s + j) * dx, y0 + (s + j) * dy):
                ok = False
                break
        if not ok:
            continue
        # Both ends empty, and no black stone beyond either end (completing would overline).
        if (
            _empty_at(board, h, w, x0 + (s - 1) * dx, y0 + (s - 1) * dy)
            and _empty_at(board, h, w, x0 + (s + 4) * dx, y0 + (s + 4) * dy)
            and not _black_at(board, h, w, x0 + (s - 2) * dx, y0 + (s - 2) * dy)
            and not _black_at(board, h, w, x0 + (s + 5) * dx, y0 + (s + 5) * dy)
        ):
            return True
    return False


@njit(**JIT)
def _decided_without_threes(board, h, w, move):
    """With black at ``move``: 0 = not forbidden (a five), 1 = forbidden (overline or double
    four), 2 = undecided (count the threes). Bit d of the second value: a four along d."""
    five = False
    overline = False
    for d in range(4):
        n = line_length(board, h, w, move, d, BLACK)
        if n == 5:
            five = True
        elif n > 5:
            overline = True
    if five:
        return 0, 0
    if overline:
        return 1, 0
    fours = 0
    four_bits = 0
    for d in range(4):
        f = _fours_in_direction(board, h, w, move, d)
        if f > 0:
            four_bits |= 1 << d
        fours += f
    if fours >= 2:
        return 1, four_bits
    return 2, four_bits


@njit(**JIT)
def _blacks_near(board, h, w, move, d, reach):
    """Black stones within ``reach`` points of ``move`` along direction ``d``, its own not
    counted."""
    x = move % w
    y = move // w
    step, forward, backward = _steps(h, w, x, y, d)
    n = 0
    p = move
    for _ in range(min(forward, reach)):
        p += step
        if board[p] == BLACK:
            n += 1
    p = move
    for _ in range(min(backward, reach)):
        p -= step
        if board[p] == BLACK:
            n += 1
    return n


@njit(**JIT)
def _crowded(board, h, w, move):
    """False when black at ``move`` cannot be forbidden, from counting black stones within four
    points of it along each line: a three or a four through ``move`` needs at least two others
    there, two fours on one line or an overline at least four, so a point with fewer than two
    such lines and no line of four is never forbidden. Spares the full test almost everywhere."""
    busy = 0
    for d in range(4):
        n = _blacks_near(board, h, w, move, d, 4)
        if n >= 4:
            return True
        if n >= 2:
            busy += 1
    return busy >= 2


@njit(**JIT)
def _crowded_into(board, h, w, busy):
    """:func:`_crowded` for every point of the board at once: ``busy[p] >= 2`` exactly where it
    is True. Each line is walked once with a sliding count of the black stones within four
    points, instead of eight reads per line per point: black's legal points under renju need
    the test at every empty point of every leaf."""
    for p in range(h * w):
        busy[p] = 0
    for d in range(4):
        # The lines of direction d start on the board's left column (rows: that is all of
        # them), top row (columns, and diagonals from there) or bottom row (anti-diagonals).
        starts = h if d == 0 else w if d == 1 else h + w - 1
        for s in range(starts):
            if d == 0:
                x, y = 0, s
            elif d == 1:
                x, y = s, 0
            elif d == 2:
                x, y = (s, 0) if s < w else (0, s - w + 1)
            else:
                x, y = (0, s) if s < h else (s - h + 1, h - 1)
            step, forward, _ = _steps(h, w, x, y, d)
            length = forward + 1
            first = y * w + x
            near = 0  # black stones from i - 4 to i + 4, i's own included
            for k in range(min(4, length)):
                if board[first + k * step] == BLACK:
                    near += 1
            for i in range(length):
                if i + 4 < length and board[first + (i + 4) * step] == BLACK:
                    near += 1
                if i >= 5 and board[first + (i - 5) * step] == BLACK:
                    near -= 1
                p = first + i * step
                others = near - 1 if board[p] == BLACK else near
                if others >= 4:
                    busy[p] += 2
                elif others >= 2:
                    busy[p] += 1


@njit(**JIT)
def _next_straight_four_point(board, h, w, move, d, k):
    """The first offset k' >= k along d whose empty point makes a straight four with the black
    stone at ``move``; 5 when there is none."""
    if _blacks_near(board, h, w, move, d, 3) < 2:
        return 5  # a straight four holds two more black stones within three points of `move`
    x0 = move % w
    y0 = move // w
    while k <= 4:
        if k != 0:
            x = x0 + k * _DX[d]
            y = y0 + k * _DY[d]
            if _empty_at(board, h, w, x, y):
                p = y * w + x
                board[p] = BLACK
                straight = _makes_straight_four(board, h, w, move, k, d)
                board[p] = EMPTY
                if straight:
                    return k
        k += 1
    return 5


@njit(**JIT)
def is_forbidden(board, h, w, move):
    """Renju: is the empty point ``move`` forbidden for black (overline, double four, double
    three)? A move that makes exactly five is never forbidden.

    A three counts only if its straight-four point is itself not forbidden, which is a recursive
    definition. It runs here on an explicit stack rather than by recursion, because Numba's
    on-disk cache cannot hold recursive functions. Frame i examines point ``moves[i]`` with a
    black stone on it and on every point of the frames below it.
    """
    if not _crowded(board, h, w, move):
        return False
    size = _RENJU_MAX_DEPTH + 1
    moves = np.empty(size, dtype=np.int64)
    dirs = np.empty(size, dtype=np.int64)      # direction being scanned for a three
    offs = np.empty(size, dtype=np.int64)      # offset of the candidate point in that direction
    threes = np.empty(size, dtype=np.int64)    # directions found to hold a real three
    fourbits = np.empty(size, dtype=np.int64)  # directions holding a four (not counted as threes)
    top = 0
    moves[0] = move
    entering = True
    child_result = False
    while True:
        m = moves[top]
        if entering:
            verdict = 0
            bits = 0
            if _crowded(board, h, w, m):
                board[m] = BLACK
                verdict, bits = _decided_without_threes(board, h, w, m)
            if verdict != 2:
                child_result = verdict == 1
                board[m] = EMPTY
                if top == 0:
                    return child_result
                top -= 1
                entering = False
                continue
            fourbits[top] = bits
            threes[top] = 0
            dirs[top] = 0
            offs[top] = -4
        else:
            # Back from a child that examined the straight-four point at offs[top].
            if not child_result:
                threes[top] += 1
                dirs[top] += 1
                offs[top] = -4
            else:
                offs[top] += 1
        # Scan for the next candidate three; push a frame for its point when it needs checking.
        pushed = False
        while threes[top] < 2 and dirs[top] < 4:
            d = dirs[top]
            if (fourbits[top] >> d) & 1:
                dirs[top] += 1
                offs[top] = -4
                continue
            k = _next_straight_four_point(board, h, w, m, d, offs[top])
            if k > 4:
                dirs[top] += 1
                offs[top] = -4
                continue
            offs[top] = k
            if top + 1 >= size:
                # Depth cap: take the three as real.
                threes[top] += 1
                dirs[top] += 1
                offs[top] = -4
                continue
            x = m % w + k * _DX[d]
            y = m // w + k * _DY[d]
            top += 1
            moves[top] = y * w + x
            pushed = True
            break
        if pushed:
            entering = True
            continue
        child_result = threes[top] >= 2
        board[m] = EMPTY
        if top == 0:
            return child_result
        top -= 1
        entering = False


@njit(**JIT)
def legal_mask_into(board, h, w, rule, color, out):
    """out[i] = the side ``color`` may play at point i. Returns the number of legal points."""
    n = 0
    check = rule == RENJU and color == BLACK
    busy = np.empty(h * w if check else 0, dtype=np.int8)
    if check:
        _crowded_into(board, h, w, busy)
    for i in range(h * w):
        ok = board[i] == EMPTY
        if ok and check and busy[i] >= 2:
            ok = not is_forbidden(board, h, w, i)
        out[i] = ok
        if ok:
            n += 1
    return n


@njit(**JIT)
def has_legal_move(board, h, w, rule, color):
    """Whether the side ``color`` has any legal point (False only on a full board, or under renju
    when every empty point is forbidden for black). Stops at the first legal point it finds."""
    check = rule == RENJU and color == BLACK
    for i in range(h * w):
        if board[i] == EMPTY and not (check and is_forbidden(board, h, w, i)):
            return True
    return False


@njit(**JIT)
def encode_planes_into(board, h, w, rule, color, last_move, out):
    """Write the network's input planes for the side ``color`` to move into ``out`` (5, h, w).

    Planes: own stones, opponent stones, last move, all ones when black is to move, black's
    forbidden points (renju with black to move; zero otherwise).
    """
    other = WHITE if color == BLACK else BLACK
    black_to_move = 1.0 if color == BLACK else 0.0
    forbid = rule == RENJU and color == BLACK
    busy = np.empty(h * w if forbid else 0, dtype=np.int8)
    if forbid:
        _crowded_into(board, h, w, busy)
    for i in range(h * w):
        y = i // w
        x = i - y * w
        s = board[i]
        out[0, y, x] = 1.0 if s == color else 0.0
        out[1, y, x] = 1.0 if s == other else 0.0
        out[2, y, x] = 0.0
        out[3, y, x] = black_to_move
        out[4, y, x] = 1.0 if (forbid and s == EMPTY and busy[i] >= 2
                               and is_forbidden(board, h, w, i)) else 0.0
    if last_move >= 0:
        out[2, last_move // w, last_move % w] = 1.0


@njit(**JIT)
def _playout(board, h, w, n_in_row, rule, state, empties, n_empty, color):
    """Random legal moves for ``color`` and its opponent, drawn from ``empties[:n_empty]`` (the
    empty points, in any order; overwritten), until a win or no move is left. Returns BLACK,
    WHITE or 0 for a draw."""
    while n_empty > 0:
        # Draw among empty points; under renju, black's forbidden draws are set aside (to the end
        # of the live range) for this turn only, since they may become playable later.
        avail = n_empty
        while True:
            if avail == 0:
                return 0  # black has no legal move left: no one can win
            j = random_below(state, avail)
            move = empties[j]
            if rule == RENJU and color == BLACK and is_forbidden(board, h, w, move):
                empties[j] = empties[avail - 1]
                empties[avail - 1] = move
                avail -= 1
                continue
            break
        empties[j] = empties[n_empty - 1]
        n_empty -= 1
        board[move] = color
        if wins_at(board, h, w, n_in_row, rule, move, color):
            return color
        color = WHITE if color == BLACK else BLACK
    return 0


@njit(**JIT)
def random_game(board, h, w, n_in_row, rule, state):
    """Play uniformly random legal moves from ``board`` (black to move if the stone counts are
    equal) until someone wins or the board is full. Returns BLACK, WHITE or 0 for a draw.

    ``state`` is a uint64[1] xorshift state, passed in so runs are reproducible per caller.
    The board is left as the game ended.
    """
    size = h * w
    empties = np.empty(size, dtype=np.int64)
    n_empty = 0
    stones = 0
    for i in range(size):
        if board[i] == EMPTY:
            empties[n_empty] = i
            n_empty += 1
        else:
            stones += 1
    color = BLACK if stones % 2 == 0 else WHITE
    return _playout(board, h, w, n_in_row, rule, state, empties, n_empty, color)


@njit(**JIT)
def random_games(n_games, h, w, n_in_row, rule, state):
    """Play ``n_games`` random games from the empty board; return int64[3] counts indexed by
    result (0 draw, BLACK, WHITE). Same draws as calling :func:`random_game` on an empty board
    ``n_games`` times with the same ``state``, without a Python call or an allocation per game."""
    size = h * w
    counts = np.zeros(3, dtype=np.int64)
    board = np.zeros(size, dtype=np.int8)
    empties = np.arange(size)
    for _ in range(n_games):
        # Start every game from the same point order as random_game, so both draw alike.
        for i in range(size):
            empties[i] = i
            board[i] = EMPTY
        counts[_playout(board, h, w, n_in_row, rule, state, empties, size, BLACK)] += 1
    return counts


@njit(**JIT)
def xorshift(state):
    """xorshift64*: a small, fast generator whose state the caller owns (uint64[1], not zero:
    a zero state stays zero)."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(2685821657736338717)


@njit(**JIT)
def random_below(state, n):
    """A uniform draw from 0..n-1 (n < 2**32): the high 32 bits of a xorshift draw scaled by n,
    which spares a 64-bit division; the bias, below n / 2**32, is far under anything measurable."""
    return np.int64(((xorshift(state) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))
