"""Slow, plain-Python rules of gomoku and renju: the oracle the compiled kernels are tested against.

Written from the definitions, not from the kernels: lines are walked point by point, wins are
found by looking at whole runs of stones, and renju's four, straight four and three are found by
trying stones and looking at the fives they make. Nothing here is fast and nothing needs to be.

A board is a flat sequence of EMPTY/BLACK/WHITE, point ``y * width + x``.
"""

from __future__ import annotations

from functools import lru_cache

from alphagomoku.game.constants import BLACK, DRAW, EMPTY, NO_RESULT, WHITE

DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


@lru_cache(maxsize=None)
def line_through(width, height, x, y, dx, dy):
    """Every point of the board on the line through (x, y) along (dx, dy), in order (a tuple)."""
    while 0 <= x - dx < width and 0 <= y - dy < height:
        x, y = x - dx, y - dy
    points = []
    while 0 <= x < width and 0 <= y < height:
        points.append(y * width + x)
        x, y = x + dx, y + dy
    return tuple(points)


@lru_cache(maxsize=None)
def all_lines(width, height):
    """Every full line of the board in the four directions (rows, columns, both diagonals)."""
    lines = []
    for dx, dy in DIRECTIONS:
        seen = set()
        for y in range(height):
            for x in range(width):
                line = line_through(width, height, x, y, dx, dy)
                if line not in seen:
                    seen.add(line)
                    lines.append(line)
    return lines


def runs(board, line, color):
    """The maximal runs of ``color`` on ``line``, each as the list of its points."""
    found, current = [], []
    for p in line:
        if board[p] == color:
            current.append(p)
        else:
            if current:
                found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def run_through(board, width, height, move, dx, dy, color):
    """The maximal run of ``color`` along (dx, dy) that holds ``move`` (empty list if none)."""
    if board[move] != color:
        return []
    line = line_through(width, height, move % width, move // width, dx, dy)
    first = last = line.index(move)
    while first > 0 and board[line[first - 1]] == color:
        first -= 1
    while last + 1 < len(line) and board[line[last + 1]] == color:
        last += 1
    return list(line[first: last + 1])


def wins_with(length, n_in_row, rule, color):
    if rule == "freestyle" or (rule == "renju" and color == WHITE):
        return length >= n_in_row
    return length == n_in_row  # standard, and black under renju


def has_winning_line(board, width, height, n_in_row, rule, color):
    """Whether ``color`` has a winning run anywhere on the board."""
    for line in all_lines(width, height):
        for run in runs(board, line, color):
            if wins_with(len(run), n_in_row, rule, color):
                return True
    return False


def move_wins(board, width, height, n_in_row, rule, move, color):
    """Whether the stone of ``color`` at ``move`` is part of a winning run."""
    return any(
        wins_with(len(run_through(board, width, height, move, dx, dy, color)), n_in_row, rule, color)
        for dx, dy in DIRECTIONS
    )


def result(board, width, height, n_in_row, rule):
    """BLACK or WHITE if that colour has a winning line, DRAW on a full board, else NO_RESULT."""
    for color in (BLACK, WHITE):
        if has_winning_line(board, width, height, n_in_row, rule, color):
            return color
    return DRAW if all(s != EMPTY for s in board) else NO_RESULT


# ---------------------------------------------------------------------------------------------
# Renju, for black. Definitions as the rules state them:
#   five      exactly five black stones in a row;
#   overline  six or more;
#   four      four stones that one more stone turns into a five;
#   straight four  a four that two different points turn into a five;
#   three     stones that one more stone, itself not forbidden, turns into a straight four;
#   forbidden a move that makes no five and makes an overline, two fours or two threes.
# ---------------------------------------------------------------------------------------------


def _fives_made_by(board, width, height, point, dx, dy):
    """The five (as a frozenset of points) that a black stone on the empty ``point`` makes along
    (dx, dy), or None."""
    board[point] = BLACK
    run = run_through(board, width, height, point, dx, dy, BLACK)
    board[point] = EMPTY
    return frozenset(run) if len(run) == 5 else None


def near(width, height, move, dx, dy):
    """The points along (dx, dy) within four steps of ``move``: where any five holding it lies."""
    line = line_through(width, height, move % width, move // width, dx, dy)
    i = line.index(move)
    return line[max(0, i - 4): i + 5]


def fours_along(board, width, height, move, dx, dy):
    """The fours along (dx, dy) that hold the black stone at ``move``: a dict from the four's
    four stones to the points that complete it into a five."""
    fours = {}
    for q in near(width, height, move, dx, dy):
        if board[q] != EMPTY:
            continue
        five = _fives_made_by(board, width, height, q, dx, dy)
        if five is not None and move in five:
            fours.setdefault(five - {q}, set()).add(q)
    return fours


def makes_straight_four(board, width, height, move, added, dx, dy):
    """Whether the black stones at ``move`` and ``added`` lie in one straight four along (dx, dy)."""
    for stones, completions in fours_along(board, width, height, move, dx, dy).items():
        if added in stones and len(completions) >= 2:
            return True
    return False


def has_real_three_along(board, width, height, move, dx, dy, recursive=True):
    """A three along (dx, dy) through the black stone at ``move``: some empty point turns it into
    a straight four and is not itself forbidden (``recursive=False`` skips that last condition,
    which tests use to show that it mattered)."""
    for q in near(width, height, move, dx, dy):
        if board[q] != EMPTY:
            continue
        board[q] = BLACK
        straight = makes_straight_four(board, width, height, move, q, dx, dy)
        board[q] = EMPTY
        if straight and not (recursive and forbidden(board, width, height, q)):
            return True
    return False


def forbidden(board, width, height, move, recursive=True):
    """Renju: whether black may not play the empty point ``move``. ``board`` is a mutable
    sequence; it is restored before returning."""
    board[move] = BLACK
    try:
        lengths = [len(run_through(board, width, height, move, dx, dy, BLACK)) for dx, dy in DIRECTIONS]
        if 5 in lengths:
            return False
        if max(lengths) > 5:
            return True
        fours_per_line = [len(fours_along(board, width, height, move, dx, dy)) for dx, dy in DIRECTIONS]
        if sum(fours_per_line) >= 2:
            return True
        # A line that holds a four is a four, not also a three.
        threes = sum(
            1
            for (dx, dy), fours in zip(DIRECTIONS, fours_per_line)
            if fours == 0 and has_real_three_along(board, width, height, move, dx, dy, recursive)
        )
        return threes >= 2
    finally:
        board[move] = EMPTY


def legal_mask(board, width, height, rule, color):
    """List of booleans: where ``color`` may play."""
    work = list(board)
    out = []
    for p in range(width * height):
        ok = work[p] == EMPTY
        if ok and rule == "renju" and color == BLACK:
            ok = not forbidden(work, width, height, p)
        out.append(ok)
    return out
