"""Position, GameConfig, coordinates and the ASCII board: the validated public API."""

from __future__ import annotations

import numpy as np
import pytest

from alphagomoku.game import coords
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, EMPTY, NO_MOVE, NO_RESULT, NUM_PLANES, WHITE
from alphagomoku.game.coords import CoordinateError
from alphagomoku.game.position import IllegalMoveError, Position, parse_board, render

# -- GameConfig -----------------------------------------------------------------------------------


def test_config_defaults_and_shapes():
    c = GameConfig()
    assert (c.width, c.height, c.n_in_row, c.rule) == (15, 15, 5, "freestyle")
    assert c.area == 225 and c.square
    r = GameConfig(width=9, height=7, n_in_row=4, rule="standard")
    assert (r.width, r.height, r.area, r.square) == (9, 7, 63, False)
    assert GameConfig.square_board(11, 4, "standard") == GameConfig(width=11, n_in_row=4, rule="standard")
    assert GameConfig(**r.to_dict()) == r
    assert GameConfig(width=5).height == 5 and GameConfig(width=22).area == 484


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"width": 4}, "board width must be an integer from 5 to 22, got 4"),
        ({"width": 23}, "board width must be an integer from 5 to 22, got 23"),
        ({"width": 15.0}, "board width must be an integer"),
        ({"width": "15"}, "board width must be an integer"),
        ({"width": 9, "height": 30}, "board height must be an integer from 5 to 22, got 30"),
        ({"rule": "gomoku"}, "unknown rule 'gomoku': choose one of freestyle, standard, renju"),
        ({"n_in_row": 2}, "n_in_row must be an integer of at least 3, got 2"),
        ({"n_in_row": 5.0}, "n_in_row must be an integer"),
        ({"width": 7, "n_in_row": 8}, "n_in_row=8 cannot fit on a 7x7 board"),
        ({"rule": "renju", "n_in_row": 6}, "renju is defined for five in a row only"),
    ],
)
def test_config_rejects_bad_values_and_says_which(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GameConfig(**kwargs)


# -- coordinates ----------------------------------------------------------------------------------


@pytest.mark.parametrize("width,height", [(5, 5), (15, 15), (22, 22), (9, 6), (6, 13)])
def test_every_point_round_trips_through_every_form(width, height):
    for i in range(width * height):
        x, y = coords.to_xy(i, width, height)
        assert coords.to_index(x, y, width, height) == i
        name = coords.to_name(i, width, height)
        assert coords.from_name(name, width, height) == i
        assert coords.from_name(name.upper(), width, height) == i
        for form in (i, np.int16(i), (x, y), [x, y], f"{x},{y}", f" {x} , {y} ", name):
            assert coords.parse_move(form, width, height) == i


def test_named_points_on_15x15():
    # x is the column from the left, y the row from the top; "h8" counts rows from the bottom.
    assert coords.parse_move("h8", 15, 15) == coords.to_index(7, 7, 15, 15) == 112
    assert coords.parse_move("a15", 15, 15) == 0
    assert coords.parse_move("o15", 15, 15) == 14
    assert coords.parse_move("a1", 15, 15) == 210
    assert coords.parse_move("o1", 15, 15) == 224
    assert coords.to_xy(16, 15, 15) == (1, 1)
    assert coords.to_name(16, 15, 15) == "b14"
    assert coords.parse_move("3,0", 15, 15) == 3


@pytest.mark.parametrize(
    "move, message",
    [
        (225, "index 225 is off the 15x15 board"),
        (-1, "index -1 is off the 15x15 board"),
        ((15, 0), r"point \(15, 0\) is off the 15x15 board"),
        ((0, -1), r"point \(0, -1\) is off the 15x15 board"),
        ("3,15", r"point \(3, 15\) is off the 15x15 board"),
        ("p8", "'p8' is off the 15x15 board"),
        ("h16", "'h16' is off the 15x15 board"),
        ("h0", "'h0' is off the 15x15 board"),
        ("hh", "'hh' is not a point name like 'h8'"),
        ("", "'' is not a point name like 'h8'"),
        ((1.5, 2), r"\(1.5, 2\) is not a point: x and y must be integers"),
        (("a", 1), r"\('a', 1\) is not a point: x and y must be integers"),
        ((1, 2, 3), r"\(1, 2, 3\) is not a move: use an index, \(x, y\), 'x,y' or 'h8'"),
        (3.0, "3.0 is not a move"),
        (None, "None is not a move"),
        (True, "True is not a move"),
    ],
)
def test_bad_coordinates_raise_and_name_the_problem(move, message):
    with pytest.raises(CoordinateError, match=message):
        coords.parse_move(move, 15, 15)


def test_coordinate_helpers_reject_points_off_the_board():
    with pytest.raises(CoordinateError, match="off the 9x7 board"):
        coords.to_xy(63, 9, 7)
    with pytest.raises(CoordinateError, match="off the 9x7 board"):
        coords.to_name(-1, 9, 7)
    with pytest.raises(CoordinateError, match=r"point \(9, 0\) is off the 9x7 board"):
        coords.to_index(9, 0, 9, 7)


# -- playing --------------------------------------------------------------------------------------


def test_moves_alternate_and_every_move_form_is_accepted():
    config = GameConfig()
    pos = Position(config)
    assert (pos.to_move, pos.last_move, pos.winner, pos.is_over) == (BLACK, NO_MOVE, NO_RESULT, False)
    pos.play("h8").play((8, 7)).play("7,8").play(np.int64(0))
    assert pos.moves == [112, 113, 127, 0]
    assert [pos.stone(m) for m in ("h8", "i8", "h7", "a15")] == [BLACK, WHITE, BLACK, WHITE]
    assert pos.to_move == BLACK and pos.last_move == 0
    assert len(pos.legal_moves()) == 221
    assert Position.from_moves(["h8", "i8", "h7", "a15"], config).moves == pos.moves
    assert repr(pos) == f"Position({config}, moves=[h8 i8 h7 a15])"


def line_game(config, start, step, n):
    """Moves in which black lays ``n`` stones from ``start`` by ``step`` (x, y) and white answers
    on the far side of the board, one row or column away from black's line."""
    w, h = config.width, config.height
    moves, white = [], []
    for k in range(n):
        x, y = start[0] + k * step[0], start[1] + k * step[1]
        moves.append((x, y))
    # White's stones: far corner region, spread so they never make a line of their own.
    candidates = [(x, y) for y in range(h) for x in range(w) if (x + 2 * y) % 5 == 0]
    for p in candidates:
        if p not in moves and len(white) < n - 1:
            white.append(p)
    order = []
    for k in range(n):
        order.append(moves[k])
        if k < n - 1:
            order.append(white[k])
    return order


@pytest.mark.parametrize("width,height", [(15, 15), (9, 7), (7, 11)])
def test_a_win_is_found_in_every_direction_from_edges_and_corners(width, height):
    config = GameConfig(width=width, height=height, rule="standard")
    w, h = width, height
    cases = [
        ((0, 0), (1, 0)),                # top row from the top-left corner
        ((w - 5, h - 1), (1, 0)),        # bottom row into the bottom-right corner
        ((w - 1, 0), (0, 1)),            # right column from the top-right corner
        ((0, h - 5), (0, 1)),            # left column into the bottom-left corner
        ((0, 0), (1, 1)),                # main diagonal from the corner
        ((w - 5, h - 5), (1, 1)),        # diagonal into the far corner
        ((0, h - 1), (1, -1)),           # anti-diagonal from the bottom-left corner
        ((w - 5, 4), (1, -1)),           # anti-diagonal into the top-right corner
        ((1, 2), (1, 0)),                # inside the board
    ]
    for start, step in cases:
        moves = line_game(config, start, step, 5)
        pos = Position.from_moves(moves[:-1], config)
        assert not pos.is_over
        pos.play(moves[-1])
        assert (pos.winner, pos.win_reason) == (BLACK, "with 5 in a row"), (start, step)


def overline_position(rule, color):
    """A 9x9 position where ``color`` holds XXX.XX on the top row and is to move."""
    row = [(0, 0), (1, 0), (2, 0), (4, 0), (5, 0)]
    other = [(0, 8), (2, 8), (4, 8), (6, 8), (8, 6), (8, 4)]
    if color == BLACK:
        moves = [m for pair in zip(row, other) for m in pair]
    else:
        moves = [m for pair in zip(other, row) for m in pair] + [other[5]]
    return Position.from_moves(moves, GameConfig(width=9, rule=rule))


def test_overlines_win_as_each_rule_says():
    pos = overline_position("freestyle", BLACK)
    pos.play((3, 0))
    assert pos.winner == BLACK

    pos = overline_position("standard", BLACK)
    pos.play((3, 0))
    assert pos.winner == NO_RESULT  # six is not five: play goes on
    pos.play((7, 7))

    pos = overline_position("renju", BLACK)
    assert pos.is_forbidden((3, 0))
    with pytest.raises(IllegalMoveError, match="d9 is forbidden for black under renju"):
        pos.play((3, 0))

    pos = overline_position("renju", WHITE)
    assert pos.to_move == WHITE
    pos.play((3, 0))
    assert pos.winner == WHITE


# 5x5, five in a row, every line mixed: the 25th stone fills the board with no winner.
FULL_BOARD_DRAW = """
X X O O X
O O X X O
X X O O X
O O X X O
X X O O X
"""


def test_full_board_is_a_draw():
    board = parse_board(FULL_BOARD_DRAW)
    blacks = [int(p) for p in np.flatnonzero(board == BLACK)]
    whites = [int(p) for p in np.flatnonzero(board == WHITE)]
    moves = [m for pair in zip(blacks, whites) for m in pair] + blacks[len(whites):]
    pos = Position.from_moves(moves[:-1], GameConfig(width=5))
    assert not pos.is_over
    pos.play(moves[-1])
    assert (pos.winner, pos.win_reason) == (DRAW, "full board")
    assert len(pos.legal_moves()) == 0


def test_undo_takes_back_exactly_one_move():
    config = GameConfig(width=9)
    moves = line_game(config, (2, 3), (1, 0), 5)
    pos = Position.from_moves(moves, config)
    assert pos.winner == BLACK
    final = pos.board.copy()
    assert pos.undo() == config.width * 3 + 6
    assert (pos.to_move, pos.winner, pos.win_reason, pos.is_over) == (BLACK, NO_RESULT, "", False)
    expected = final.copy()
    expected[config.width * 3 + 6] = EMPTY
    np.testing.assert_array_equal(pos.board, expected)
    while pos.moves:
        pos.undo()
    assert not pos.board.any() and pos.to_move == BLACK
    with pytest.raises(IllegalMoveError, match="there is no move to undo"):
        pos.undo()


def test_copy_is_independent():
    pos = Position.from_moves(["h8", "h9"])
    other = pos.copy()
    other.play("a1")
    assert pos.moves == [112, 97] and pos.stone("a1") == EMPTY and pos.to_move == BLACK
    assert other.stone("a1") == BLACK


@pytest.mark.parametrize(
    "moves, bad, message",
    [
        (["h8"], "h8", "h8 is occupied by black"),
        (["h8", "h9"], (7, 6), "h9 is occupied by white"),
        ([], 225, "index 225 is off the 15x15 board"),
        ([], (15, 3), r"point \(15, 3\) is off the 15x15 board"),
        ([], "z3", "'z3' is off the 15x15 board"),
        ([], "pass", "'pass' is not a point name like 'h8'"),
        ([], 7.5, "7.5 is not a move"),
    ],
)
def test_illegal_moves_raise_and_name_the_problem(moves, bad, message):
    pos = Position.from_moves(moves)
    with pytest.raises(IllegalMoveError, match=message):
        pos.play(bad)
    assert pos.moves == [Position().index(m) for m in moves]  # nothing changed


def test_no_move_after_the_game_is_over():
    config = GameConfig(width=9)
    pos = Position.from_moves(line_game(config, (0, 0), (1, 0), 5), config)
    assert pos.legal_moves().size == 0
    with pytest.raises(IllegalMoveError, match=r"the game is over \(black with 5 in a row\); no move at e5"):
        pos.play("e5")


def test_position_wants_a_game_config():
    with pytest.raises(TypeError, match="config must be a GameConfig, got dict"):
        Position({"width": 9})


def test_planes_are_from_the_side_to_move():
    pos = Position.from_moves(["e5", "d4", "c3"], GameConfig(width=9))
    planes = pos.planes()
    assert planes.shape == (NUM_PLANES, 9, 9) and planes.dtype == np.float32
    e5, d4, c3 = (pos.index(m) for m in ("e5", "d4", "c3"))
    flat = planes.reshape(NUM_PLANES, -1)
    assert pos.to_move == WHITE
    assert set(np.flatnonzero(flat[0])) == {d4}  # own: white
    assert set(np.flatnonzero(flat[1])) == {e5, c3}  # opponent: black
    assert set(np.flatnonzero(flat[2])) == {c3}  # last move
    assert not flat[3].any() and not flat[4].any()
    pos.play("a1")
    assert pos.planes()[3].all()


# -- ASCII board ----------------------------------------------------------------------------------


def test_render_marks_the_last_move_and_labels_rows_and_columns():
    pos = Position.from_moves(["a1", "b1"], GameConfig(width=5))
    text = str(pos)
    lines = text.splitlines()
    assert lines[0].split() == list("abcde")
    assert lines[-1] == "  1 X(O). . ."
    assert lines[1] == "  5 . . . . ."
    corner = Position.from_moves(["e5"], GameConfig(width=5))
    assert str(corner).splitlines()[1] == "  5 . . . .(X)"


@pytest.mark.parametrize("width,height", [(15, 15), (22, 22), (9, 6), (5, 12)])
def test_rendered_boards_parse_back(width, height, rng):
    # 15 and 22 columns put the letters 'o' and 'x' among the labels: they are not stones.
    board = rng.choice(np.array([EMPTY, BLACK, WHITE], dtype=np.int8), size=width * height)
    for last in (NO_MOVE, 0, width - 1, width * height - 1):
        text = render(board, width, height, last)
        np.testing.assert_array_equal(parse_board(text), board)
        np.testing.assert_array_equal(parse_board(text, GameConfig(width=width, height=height)), board)


def test_from_picture_places_the_stones_and_sets_the_side_to_move():
    picture = """
    . X . . . . .
    . . O . . . .
    . . . X . . .
    . . . . . . .
    . . . . . o x
    """
    pos = Position.from_picture(picture)
    assert (pos.width, pos.height) == (7, 5)
    assert pos.to_move == WHITE and len(pos.moves) == 5
    assert [pos.stone(m) for m in ((1, 0), (2, 1), (3, 2), (5, 4), (6, 4))] == [BLACK, WHITE, BLACK, WHITE, BLACK]
    again = Position.from_picture(str(pos), GameConfig(width=7, height=5))
    np.testing.assert_array_equal(again.board, pos.board)


@pytest.mark.parametrize(
    "picture, message",
    [
        ("", "the board picture has no points"),
        ("a b c\n", "the board picture has no points"),
        (". . .\n. .\n. . .", "line 2 of the board picture has 2 points, the first row 3"),
        (". X .\n. # .\n. . .", "line 2 of the board picture has '#': points are X, O, . or +"),
    ],
)
def test_bad_pictures_raise_and_name_the_problem(picture, message):
    with pytest.raises(ValueError, match=message):
        parse_board(picture)


def test_picture_and_config_must_agree():
    with pytest.raises(ValueError, match="picture is 5x5, config says 9x9"):
        parse_board(FULL_BOARD_DRAW, GameConfig(width=9))
    with pytest.raises(ValueError, match="picture is 5x5, config says 7x5"):
        Position.from_picture(FULL_BOARD_DRAW, GameConfig(width=7, height=5))
    with pytest.raises(ValueError, match="picture has 2 black and 0 white stones"):
        Position.from_picture("X X . . .\n" + ". . . . .\n" * 4)
    with pytest.raises(ValueError, match="board width must be an integer from 5 to 22, got 3"):
        Position.from_picture(". . .\n. . .\n. . .")
