"""The search's compiled look-ups of immediate wins against the plain-Python rules of
tests/reference_rules.py, on random boards of each rule (edges, overlines and renju's exact five
for black included)."""

from __future__ import annotations

import numpy as np

import reference_rules as ref
from alphagomoku.game.constants import BLACK, EMPTY, NO_MOVE, RULE_NAMES, WHITE
from alphagomoku.mcts import threats


def _winning_points(cells, width, height, n_in_row, rule, color):
    """Every empty point where ``color`` wins at once, in point order: the slow twin."""
    found = []
    for p, stone in enumerate(cells):
        if stone != EMPTY:
            continue
        cells[p] = color
        if ref.move_wins(cells, width, height, n_in_row, rule, p, color):
            found.append(p)
        cells[p] = EMPTY
    return found


def test_scan_wins_finds_the_first_two_winning_points_of_the_slow_rules(rng):
    counts = {0: 0, 1: 0, 2: 0}
    for _ in range(300):
        width = int(rng.integers(5, 16))
        height = width if rng.random() < 0.7 else int(rng.integers(5, 16))
        n_in_row = int(rng.choice([4, 5]))
        rule = str(rng.choice(list(RULE_NAMES)))
        density = rng.uniform(0.1, 0.6)
        u = rng.random(width * height)
        board = np.where(u < density / 2, BLACK, np.where(u < density, WHITE, EMPTY)).astype(np.int8)
        for color in (BLACK, WHITE):
            expected = _winning_points(board.tolist(), width, height, n_in_row, rule, color)
            points = np.full(2, 7, dtype=np.int32)
            count = threats.scan_wins(board, height, width, n_in_row, RULE_NAMES[rule], color,
                                      points)
            assert count == min(2, len(expected))
            assert list(points) == (expected + [NO_MOVE, NO_MOVE])[:2]
            counts[count] += 1
    # Boards with none, one and two or more winning points all came up.
    assert min(counts.values()) >= 20, counts
