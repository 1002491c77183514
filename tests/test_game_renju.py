"""Renju's forbidden points on the textbook diagrams, checked against both the kernel and the
reference rules, and through the Position API.

In each diagram ``*`` marks the point black is about to play. The diagrams are 9x9: the
definitions do not depend on the board size, and a small board keeps them readable.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference_rules as ref
from alphagomoku.game import kernels
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, RENJU, WHITE
from alphagomoku.game.position import IllegalMoveError, Position, parse_board


def diagram(picture):
    """The board of a diagram (``*`` left empty), its width and height, and the marked point."""
    board = parse_board(picture.replace("*", "."))
    marked = np.flatnonzero(parse_board(picture.replace("*", "X")) != board)
    assert len(marked) == 1, "a diagram marks exactly one point with *"
    width = len(picture.strip("\n").splitlines()[0].split())
    return board, width, len(board) // width, int(marked[0])


DOUBLE_THREE = """
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
. . X X * . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# One of the threes is split (X.XX): still a three, its straight-four point is the gap.
DOUBLE_THREE_SPLIT = """
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
. X . X * . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# The row is closed by white on one side: no straight four can come of it, so it is no three.
THREE_AND_CLOSED_THREE = """
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
. O X X * . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# The column runs into the edge: a straight four would need a point off the board.
THREE_AND_THREE_AT_THE_EDGE = """
. . . . X . . . .
. . . . X . . . .
. . X X * . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# A four closed by white on the row, a broken four (XX.XX) on the column.
DOUBLE_FOUR = """
. . . . X . . . .
. . . . X . . . .
. . . . . . . . .
. . . . X . . . .
O X X X * . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# Two fours on one line: X.XXX.X, XX.XX.XX and XXX.X.XXX.
DOUBLE_FOUR_ONE_LINE_A = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
X . X * X . X . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

DOUBLE_FOUR_ONE_LINE_B = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
X X . * X . X X .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

DOUBLE_FOUR_ONE_LINE_C = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
X X X . * . X X X
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

FOUR_THREE = """
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
O X X X * . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

OVERLINE = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. X X X * X X . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# A five on the row and an overline on the column at once: the five wins.
FIVE_AND_OVERLINE = """
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
. . . . X . . . .
X X X X * . . . .
. . . . X . . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
"""

# A five on the row and two fours (column, diagonal) at once: the five wins.
FIVE_AND_DOUBLE_FOUR = """
. . . . . . . . .
. . . . X . . . .
. . . . X . . . .
. . . . X . . . .
X X X X * . . . .
. . . . . X . . .
. . . . . . X . .
. . . . . . . X .
. . . . . . . . .
"""

# The row (XX.X) looks like a three, but its only straight-four point, the gap, would make an
# overline of six on its column and is forbidden: the row is no three, the column is the only
# one, and black may play.
FAKE_THREE = """
. . . . . . . . .
. . . X . . . . .
. . . X . . . . .
. . . X . . . . .
. X X . * . . . .
. . . X X . . . .
. . . X X . . . .
. . . . . . . . .
. . . . . . . . .
"""

# The same with the top stone of the gap's column gone: the gap now makes a five, so it is not
# forbidden, the row is a real three and the point a double three.
FAKE_THREE_MADE_REAL = """
. . . . . . . . .
. . . . . . . . .
. . . X . . . . .
. . . X . . . . .
. X X . * . . . .
. . . X X . . . .
. . . X X . . . .
. . . . . . . . .
. . . . . . . . .
"""

# The row's straight fours would all overline (X..XXX..X): no three, so no double three.
THREE_THAT_WOULD_OVERLINE = """
. . . . . . . . .
. . . . . . . . .
. . . . . X . . .
. . . . . X . . .
X . . X X * . . X
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# Without the far stone on the right the row is a three again: double three.
THREE_THAT_WOULD_OVERLINE_REMOVED = """
. . . . . . . . .
. . . . . . . . .
. . . . . X . . .
. . . . . X . . .
X . . X X * . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

# A four-three-three at d4: a four on the row, a three on the column and, on the anti-diagonal,
# the split three d4 . f6 g7 whose only four point is the gap e5. That three is real because
# e5 is not forbidden, and e5 is not forbidden because the four points of its own two threes
# (d5 and d6) are double fours. So d4 makes two threes and is forbidden (a four does not excuse
# a double three): the recursion decides it three levels down.
DEEP_THREE = """
. . . . . . . . .
. . . . . . . . .
. . X . . . X . .
. . . . . X . . .
. X X . . . . . .
. . . * X X X . .
. . . X . . . . .
. . . X . . . . .
. . . . . . . . .
"""

# Found by a random search and pared down; decided four levels down. d8 makes a column three
# (real) and a diagonal three whose only four point f6 would make a four and two threes. One of
# those, the column three of f6, is real only if its four point f8 is allowed; f8 has a four and
# two apparent threes, one of which dies because its four point d6 is a double four. So f8 is
# allowed, f6 forbidden, d8's diagonal three not real, and d8 allowed. A search that stopped two
# levels down and took the threes there as real would forbid d8.
DEEP_THREE_10X10 = """
. . . . . . . . . .
. . . X . X X . . .
. . . * . . . X . .
. . . X X X X . . .
. . . . . . . . . .
. . . . . . X . X .
. . . . . . . . . .
. . . . . . . . . .
. . . . . . . . . .
. . . . . . . . . .
"""

DIAGRAMS = {
    "double three": (DOUBLE_THREE, True),
    "double three, one split": (DOUBLE_THREE_SPLIT, True),
    "three and a closed three": (THREE_AND_CLOSED_THREE, False),
    "three and a three at the edge": (THREE_AND_THREE_AT_THE_EDGE, False),
    "double four": (DOUBLE_FOUR, True),
    "double four on one line X.XXX.X": (DOUBLE_FOUR_ONE_LINE_A, True),
    "double four on one line XX.XX.XX": (DOUBLE_FOUR_ONE_LINE_B, True),
    "double four on one line XXX.X.XXX": (DOUBLE_FOUR_ONE_LINE_C, True),
    "four-three": (FOUR_THREE, False),
    "overline": (OVERLINE, True),
    "five and overline": (FIVE_AND_OVERLINE, False),
    "five and double four": (FIVE_AND_DOUBLE_FOUR, False),
    "three whose four point is forbidden": (FAKE_THREE, False),
    "the same three made real": (FAKE_THREE_MADE_REAL, True),
    "three that would overline": (THREE_THAT_WOULD_OVERLINE, False),
    "the same without the far stone": (THREE_THAT_WOULD_OVERLINE_REMOVED, True),
    "four-three-three decided three levels down": (DEEP_THREE, True),
    "three decided four levels down": (DEEP_THREE_10X10, False),
}


@pytest.mark.parametrize("name", DIAGRAMS)
def test_diagram_forbidden_point(name):
    picture, expected = DIAGRAMS[name]
    board, width, height, point = diagram(picture)
    assert bool(kernels.is_forbidden(board, height, width, point)) == expected
    assert ref.forbidden(board.tolist(), width, height, point) == expected
    before = board.copy()
    mask = np.zeros(width * height, dtype=np.bool_)
    kernels.legal_mask_into(board, height, width, RENJU, BLACK, mask)
    assert mask[point] == (not expected)
    kernels.legal_mask_into(board, height, width, RENJU, WHITE, mask)
    assert mask[point]  # white has no forbidden points
    np.testing.assert_array_equal(board, before)


@pytest.mark.parametrize("name", ["five and overline", "five and double four"])
def test_a_five_wins_for_black_whatever_else_it_makes(name):
    board, width, height, point = diagram(DIAGRAMS[name][0])
    assert kernels.would_win(board, height, width, 5, RENJU, point, BLACK)


def test_overline_wins_for_white_under_renju_but_never_for_black():
    board, width, height, point = diagram(OVERLINE)
    assert not kernels.would_win(board, height, width, 5, RENJU, point, BLACK)
    as_white = np.where(board == BLACK, WHITE, board).astype(np.int8)
    assert kernels.would_win(as_white, height, width, 5, RENJU, point, WHITE)
    assert not kernels.is_forbidden(as_white, height, width, point)  # white stones never count


# The double three of DOUBLE_THREE on 15x15 at h8, reached by moves, white playing the corners.
DOUBLE_THREE_MOVES = ["f8", "a1", "g8", "o1", "h10", "a15", "h9", "o15"]


def test_position_refuses_a_forbidden_move_and_says_why():
    pos = Position.from_moves(DOUBLE_THREE_MOVES, GameConfig(rule="renju"))
    h8 = pos.index("h8")
    assert pos.to_move == BLACK
    assert pos.is_forbidden("h8")
    assert h8 not in pos.legal_moves()
    assert pos.planes()[4].reshape(-1)[h8] == 1
    with pytest.raises(IllegalMoveError, match="h8 is forbidden for black under renju"):
        pos.play("h8")
    assert len(pos.moves) == 8  # nothing was played
    pos.play("b2")
    assert h8 in pos.legal_moves()  # white may take the point
    pos.play("h8")
    assert pos.stone("h8") == WHITE


@pytest.mark.parametrize("rule", ["freestyle", "standard"])
def test_other_rules_forbid_nothing(rule):
    pos = Position.from_moves(DOUBLE_THREE_MOVES, GameConfig(rule=rule))
    assert not pos.is_forbidden("h8")
    assert pos.planes()[4].sum() == 0
    pos.play("h8")
    assert pos.stone("h8") == BLACK


# FIVE_AND_OVERLINE with as many white stones as black ones, away from black's lines.
FIVE_AND_OVERLINE_BLACK_TO_MOVE = """
O . . . . . . . O
. . . . X . . . .
. . . . X . . . O
. . . . X . . . .
X X X X * . . . O
. . . . X . . . .
. . . . X . . . O
. . . . . . . . .
O . O . . . O . O
"""


def test_black_five_with_an_overline_elsewhere_wins_through_position():
    _, _, _, point = diagram(FIVE_AND_OVERLINE_BLACK_TO_MOVE)
    picture = FIVE_AND_OVERLINE_BLACK_TO_MOVE.replace("*", ".")
    pos = Position.from_picture(picture, GameConfig(width=9, rule="renju"))
    assert pos.to_move == BLACK and not pos.is_forbidden(point)
    pos.play(point)
    assert pos.winner == BLACK


# Every empty point but one forbidden for black once white fills e1: row 5 is XXX.XXX.
NO_MOVE_FOR_BLACK = """
X X X . X X X
O O X O O O O
O X O X X O X
X X X O O O X
X O X O . O O
"""


def test_renju_game_is_drawn_when_black_has_no_legal_move():
    pos = Position.from_picture(NO_MOVE_FOR_BLACK, GameConfig(width=7, height=5, rule="renju"))
    assert pos.to_move == WHITE and not pos.is_over
    pos.play("e1")
    assert pos.winner == DRAW
    assert pos.win_reason == "black has no legal move"
    assert len(pos.legal_moves()) == 0
    assert not ref.legal_mask(pos.board.tolist(), 7, 5, "renju", BLACK)[3]
    pos.undo()
    assert not pos.is_over
