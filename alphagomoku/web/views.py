"""What the page draws besides the stones, worked out here so it follows the project's rules:
the winning line, renju's forbidden points, the win-rate curve and the moves that lost most."""

from __future__ import annotations

from alphagomoku.game import BLACK, Position
from alphagomoku.game.constants import RENJU

# A move is marked as a mistake when its side's win rate fell by at least this much, and at
# most this many moves are marked (the largest losses).
MISTAKE_DROP = 0.10
MOST_MISTAKES = 5

_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


def winning_line(position: Position) -> list[int]:
    """The points of the winner's line through the last move (empty unless a line won)."""
    if position.winner not in (1, 2) or not position.moves:
        return []
    last = position.last_move
    colour = int(position.board[last])
    if colour != position.winner:
        return []
    w, h = position.width, position.height
    x0, y0 = last % w, last // w
    for dx, dy in _DIRECTIONS:
        line = [last]
        for sign in (1, -1):
            x, y = x0 + sign * dx, y0 + sign * dy
            while 0 <= x < w and 0 <= y < h and position.board[y * w + x] == colour:
                line.append(y * w + x)
                x, y = x + sign * dx, y + sign * dy
        if len(line) >= position.config.n_in_row:
            return sorted(line)
    return []


def forbidden_points(position: Position) -> list[int]:
    """Renju: the empty points black may not play now (empty when white is to move)."""
    if position.config.rule_id != RENJU or position.to_move != BLACK or position.is_over:
        return []
    return [i for i in range(position.config.area)
            if position.board[i] == 0 and position.is_forbidden(i)]


def black_win_rate(ply: int, value: float) -> float:
    """Black's win rate after ``ply`` moves, from a value for the side to move then."""
    mover_rate = (value + 1.0) / 2.0
    return mover_rate if ply % 2 == 0 else 1.0 - mover_rate


def mistakes(values: dict[int, float], moves: list[int], position_name) -> list[dict]:
    """The moves after which their side's win rate fell most (at least MISTAKE_DROP), largest
    first. ``values``: the value for the side to move after each number of moves analysed so
    far; a move needs the positions before and after it."""
    found = []
    for ply in range(1, len(moves) + 1):
        if ply - 1 not in values or ply not in values:
            continue
        before = black_win_rate(ply - 1, values[ply - 1])
        after = black_win_rate(ply, values[ply])
        mover_black = (ply - 1) % 2 == 0
        drop = (before - after) if mover_black else (after - before)
        if drop >= MISTAKE_DROP:
            found.append({"ply": ply, "move": position_name(moves[ply - 1]),
                          "loss": round(drop, 4)})
    found.sort(key=lambda m: -m["loss"])
    return found[:MOST_MISTAKES]
