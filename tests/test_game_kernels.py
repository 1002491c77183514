"""The compiled game kernels against the plain-Python rules of tests/reference_rules.py.

Boards are random (several densities, square and rectangular, 5x5 to 15x15) and games are
random to the end, so edge and corner lines, overlines and broken fours come up by themselves;
counters assert that they did, so no test passes on boards that never exercised its rule.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference_rules as ref
from alphagomoku.game import kernels
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, DRAW, EMPTY, NO_MOVE, NO_RESULT, NUM_PLANES, WHITE
from alphagomoku.game.position import Position, render

RULES = ("freestyle", "standard", "renju")
OTHER = {BLACK: WHITE, WHITE: BLACK}


def random_board(rng, width, height, black, white):
    """Each point black with probability ``black``, white with ``white``, else empty.

    The board is a view into a larger array whose points on both sides hold stones of one
    colour, so that a kernel reading past either end of the board miscounts and fails the test
    (Numba does not check bounds)."""
    u = rng.random(width * height)
    board = np.where(u < black, BLACK, np.where(u < black + white, WHITE, EMPTY))
    n = width * height
    padded = np.full(3 * n, BLACK if rng.random() < 0.5 else WHITE, dtype=np.int8)
    padded[n: 2 * n] = board
    return padded[n: 2 * n]


def longest_run(cells, width, height, move, color):
    return max(len(ref.run_through(cells, width, height, move, dx, dy, color)) for dx, dy in ref.DIRECTIONS)


def random_boards(rng, count, sizes=range(5, 14), black=(0.05, 0.55), white=0.9):
    """Random boards of mixed shapes, with a black density drawn from the range ``black`` and
    a white density from 0 to ``white`` less the black one: from sparse to nearly full."""
    for _ in range(count):
        width = int(rng.choice(sizes))
        height = width if rng.random() < 0.7 else int(rng.choice(sizes))
        black_share = rng.uniform(*black)
        white_share = rng.uniform(0.0, white - black_share)
        yield width, height, random_board(rng, width, height, black_share, white_share)


# -- lines and wins -------------------------------------------------------------------------------


def test_run_and_line_length_match_the_runs_on_the_board(rng):
    checked = 0
    for width, height, board in random_boards(rng, 60):
        cells = board.tolist()
        for p in np.flatnonzero(board):
            color = int(board[p])
            x, y = int(p) % width, int(p) // width
            for d, (dx, dy) in enumerate(ref.DIRECTIONS):
                run = ref.run_through(cells, width, height, int(p), dx, dy, color)
                i = run.index(p)
                assert kernels.line_length(board, height, width, p, d, color) == len(run)
                assert kernels.run_length(board, height, width, x, y, dx, dy, color) == len(run) - 1 - i
                assert kernels.run_length(board, height, width, x, y, -dx, -dy, color) == i
                checked += 1
    assert checked > 8_000


@pytest.mark.parametrize("rule", RULES)
def test_wins_at_and_would_win_match_the_reference(rule, rng):
    wins = overline_only = 0
    for width, height, board in random_boards(rng, 60):
        n_choices = [5] if rule == "renju" else [k for k in (3, 4, 5, 6) if k <= max(width, height)]
        n_in_row = int(rng.choice(n_choices))
        rule_id = GameConfig(width=width, height=height, n_in_row=n_in_row, rule=rule).rule_id
        cells = board.tolist()
        for p in range(width * height):
            for color in (BLACK, WHITE):
                if board[p] == color:
                    expected = ref.move_wins(cells, width, height, n_in_row, rule, p, color)
                    assert kernels.wins_at(board, height, width, n_in_row, rule_id, p, color) == expected
                elif board[p] == EMPTY:
                    cells[p] = color
                    expected = ref.move_wins(cells, width, height, n_in_row, rule, p, color)
                    lengths = [len(ref.run_through(cells, width, height, p, dx, dy, color)) for dx, dy in ref.DIRECTIONS]
                    cells[p] = EMPTY
                    assert kernels.would_win(board, height, width, n_in_row, rule_id, p, color) == expected
                    assert board[p] == EMPTY  # the tried stone is taken back
                    wins += expected
                    overline_only += max(lengths) > n_in_row and n_in_row not in lengths
    assert wins > 200
    assert overline_only > 50  # moves whose only long line is an overline: the rules differ there


# -- renju forbidden points -----------------------------------------------------------------------


def test_is_forbidden_matches_the_reference_on_dense_boards(rng):
    points = forbidden = three_point_mattered = 0
    # Black-heavy boards, where black's lines meet often enough to forbid points.
    for width, height, board in random_boards(rng, 250, sizes=range(7, 14), black=(0.15, 0.5), white=0.7):
        cells = board.tolist()
        for p in np.flatnonzero(board == EMPTY):
            expected = ref.forbidden(cells, width, height, int(p))
            assert kernels.is_forbidden(board, height, width, p) == expected, render(board, width, height, p)
            points += 1
            forbidden += expected
            three_point_mattered += expected != ref.forbidden(cells, width, height, int(p), recursive=False)
        assert cells == board.tolist()  # neither side left a stone behind
    assert points > 6000
    assert forbidden > 500
    # Points decided by a three whose straight-four point is itself forbidden: the recursion ran.
    assert three_point_mattered > 20


def test_the_whole_board_crowding_pass_matches_the_point_by_point_test(rng):
    """legal_mask_into skips is_forbidden where _crowded_into says no forbidden pattern fits:
    it must say so exactly where _crowded does, on every board shape the network plays
    (the diagonals' starts are where a mistake would hide)."""
    crowded = 0
    for width, height, board in random_boards(rng, 200, sizes=range(5, 23), black=(0.05, 0.5),
                                              white=0.6):
        busy = np.full(width * height, 99, dtype=np.int8)  # stale values must go
        kernels._crowded_into(board, height, width, busy)
        expected = [kernels._crowded(board, height, width, p) for p in range(width * height)]
        assert (busy >= 2).tolist() == expected, (width, height)
        crowded += sum(expected)
    assert crowded > 1000


def test_renju_legal_mask_forbids_exactly_the_forbidden_points_on_dense_boards(rng):
    renju = GameConfig(rule="renju").rule_id
    forbidden = 0
    for width, height, board in random_boards(rng, 60, sizes=range(9, 23), black=(0.15, 0.45),
                                              white=0.7):
        out = np.zeros(width * height, dtype=np.bool_)
        kernels.legal_mask_into(board, height, width, renju, BLACK, out)
        expected = [board[p] == EMPTY and not kernels.is_forbidden(board, height, width, p)
                    for p in range(width * height)]
        assert out.tolist() == expected
        forbidden += int(np.sum(board == EMPTY)) - sum(expected)
    assert forbidden > 100


@pytest.mark.parametrize("rule", RULES)
def test_legal_mask_and_has_legal_move_match_the_reference(rule, rng):
    rule_id = GameConfig(rule=rule).rule_id
    for width, height, board in random_boards(rng, 40, sizes=range(5, 12)):
        for color in (BLACK, WHITE):
            out = np.zeros(width * height, dtype=np.bool_)
            n = kernels.legal_mask_into(board, height, width, rule_id, color, out)
            expected = ref.legal_mask(board.tolist(), width, height, rule, color)
            assert out.tolist() == expected
            assert n == sum(expected)
            assert kernels.has_legal_move(board, height, width, rule_id, color) == any(expected)


@pytest.mark.parametrize("rule", RULES)
def test_encode_planes_into_writes_the_five_planes(rule, rng):
    rule_id = GameConfig(rule=rule).rule_id
    for width, height, board in random_boards(rng, 30, sizes=range(5, 12)):
        stones = np.flatnonzero(board)
        last = int(rng.choice(stones)) if len(stones) else NO_MOVE
        for color in (BLACK, WHITE):
            out = np.full((NUM_PLANES, height, width), 7.0, dtype=np.float32)  # stale values
            kernels.encode_planes_into(board, height, width, rule_id, color, last, out)
            grid = board.reshape(height, width)
            np.testing.assert_array_equal(out[0], grid == color)
            np.testing.assert_array_equal(out[1], grid == OTHER[color])
            expected_last = np.zeros(width * height)
            if last != NO_MOVE:
                expected_last[last] = 1
            np.testing.assert_array_equal(out[2].reshape(-1), expected_last)
            np.testing.assert_array_equal(out[3], np.full((height, width), color == BLACK))
            forbidden = [
                rule == "renju" and color == BLACK and board[p] == EMPTY and not legal
                for p, legal in enumerate(ref.legal_mask(board.tolist(), width, height, rule, BLACK))
            ]
            np.testing.assert_array_equal(out[4].reshape(-1), forbidden)


# -- whole games ----------------------------------------------------------------------------------

GAME_SHAPES = [
    # (width, height, n_in_row, games per rule)
    (7, 7, 5, 300),
    (9, 9, 5, 200),
    (11, 11, 5, 120),
    (15, 15, 5, 40),
    (10, 7, 5, 150),
    (9, 9, 4, 200),
    (6, 8, 3, 200),
]
GAME_CASES = [(rule, *shape) for rule in RULES for shape in GAME_SHAPES if rule != "renju" or shape[2] == 5]


@pytest.mark.parametrize("rule,width,height,n_in_row,games", GAME_CASES)
def test_random_games_through_position_match_the_reference(rule, width, height, n_in_row, games, rng):
    """Random games played through Position: after every move the result agrees with the
    reference, and at the end with a scan of the whole board. Under renju the legal points are
    compared with the reference on black's turns, on every turn of the first game and on a
    sample of turns after that (the reference is slow)."""
    config = GameConfig(width=width, height=height, n_in_row=n_in_row, rule=rule)
    overline_moves = forbidden_seen = 0
    for game in range(games):
        pos = Position(config)
        while not pos.is_over:
            legal = pos.legal_mask()
            if rule != "renju" or pos.to_move == WHITE:
                assert legal.tolist() == (pos.board == EMPTY).tolist()  # every empty point
            elif game == 0 or rng.random() < 0.04:
                expected = ref.legal_mask(pos.board.tolist(), width, height, rule, BLACK)
                assert legal.tolist() == expected
                forbidden_seen += int(np.sum((pos.board == EMPTY) & ~legal))
            else:
                assert not np.any(legal & (pos.board != EMPTY))
            move = int(rng.choice(np.flatnonzero(legal)))
            color = pos.to_move
            pos.play(move)
            cells = pos.board.tolist()
            overline_moves += longest_run(cells, width, height, move, color) > n_in_row
            if ref.move_wins(cells, width, height, n_in_row, rule, move, color):
                assert pos.winner == color
            elif EMPTY not in cells:
                assert pos.winner == DRAW
            elif pos.winner == DRAW:
                assert pos.win_reason == "black has no legal move"
                assert not any(ref.legal_mask(cells, width, height, rule, BLACK))
            else:
                assert pos.winner == NO_RESULT
        final = ref.result(pos.board.tolist(), width, height, n_in_row, rule)
        assert final == pos.winner or pos.win_reason == "black has no legal move"
    if rule == "renju":
        assert forbidden_seen > 20  # the compared masks held forbidden points
    else:
        assert overline_moves > 0  # overlines were made (and won only where the rule says)


# -- random playouts ------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES)
def test_random_game_ends_as_the_rules_say(rule, rng):
    config = GameConfig(width=9, rule=rule)
    h, w = config.height, config.width
    state = np.array([12345], dtype=np.uint64)
    results = set()
    for game in range(150):
        # Half the games start from a position a few random moves in.
        pos = Position(config)
        for _ in range(int(rng.integers(0, 12)) if game % 2 else 0):
            pos.play(int(rng.choice(pos.legal_moves())))
        if pos.is_over:
            continue
        board = pos.board.copy()
        result = kernels.random_game(board, h, w, 5, config.rule_id, state)
        results.add(result)
        assert np.all(board[pos.board != EMPTY] == pos.board[pos.board != EMPTY])  # nothing moved
        blacks, whites = int(np.sum(board == BLACK)), int(np.sum(board == WHITE))
        cells = board.tolist()
        if result == DRAW:
            if rule != "renju":
                assert EMPTY not in cells
            assert ref.result(cells, w, h, 5, rule) in (DRAW, NO_RESULT)
            assert not any(ref.legal_mask(cells, w, h, rule, BLACK if blacks == whites else WHITE))
        else:
            assert ref.result(cells, w, h, 5, rule) == result
            assert blacks - whites == (1 if result == BLACK else 0)  # the winner moved last
    assert results >= {BLACK, WHITE}


@pytest.mark.parametrize("rule", RULES)
def test_random_games_plays_the_same_games_as_random_game(rule):
    rule_id = GameConfig(rule=rule).rule_id
    state = np.array([99], dtype=np.uint64)
    counts = kernels.random_games(200, 9, 9, 5, rule_id, state)

    again = np.array([99], dtype=np.uint64)
    expected = np.zeros(3, dtype=np.int64)
    for _ in range(200):
        expected[kernels.random_game(np.zeros(81, dtype=np.int8), 9, 9, 5, rule_id, again)] += 1
    assert counts.tolist() == expected.tolist()
    assert state[0] == again[0]
    assert counts[BLACK] > 40 and counts[WHITE] > 40


def test_random_games_depend_on_the_seed_only():
    def play(seed):
        return kernels.random_games(300, 7, 7, 4, 0, np.array([seed], dtype=np.uint64)).tolist()

    assert play(5) == play(5)
    assert play(5) != play(6)


def test_random_below_is_uniform():
    state = np.array([2024], dtype=np.uint64)
    for n in (1, 2, 7, 225, 484):
        draws = np.array([kernels.random_below(state, n) for _ in range(20 * n + 2000)])
        assert draws.min() >= 0 and draws.max() < n
        counts = np.bincount(draws, minlength=n)
        expected = len(draws) / n
        # A chi-square far above its n - 1 degrees of freedom would mean a skewed draw.
        chi2 = float(np.sum((counts - expected) ** 2 / expected))
        assert chi2 < n - 1 + 6 * np.sqrt(2 * max(n - 1, 1))
