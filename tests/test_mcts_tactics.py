"""Known answers: fours completed and blocked, forced wins and losses proved, tic-tac-toe."""

import functools

import numpy as np
import pytest

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import BLACK, WHITE
from alphagomoku.mcts import (
    SEARCH_LEAVES,
    SOLVED_LOSS,
    Forest,
    SearchConfig,
    search,
    search_config,
    select_move,
    uniform_evaluator,
)

NINE = GameConfig(width=9)


def _index(x, y, width=9):
    return y * width + x


def test_completes_its_own_four():
    pos = Position.from_picture("""
        . . . . . . . . .
        . . . . . . . . .
        . O X X X X . . .
        . . . . . . . . .
        . . . O . O . . .
        . . . . . . . . .
        . . . . O . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, NINE)
    assert pos.to_move == BLACK
    result = search(pos, uniform_evaluator, SearchConfig(num_simulations=50))
    assert result.best_move == _index(6, 2)
    assert result.visits[_index(6, 2)] == 49  # a solved root spends every visit on its win
    assert result.root_value == 1.0


def test_blocks_the_opponents_four():
    pos = Position.from_picture("""
        . . . . . . . . .
        . . . . . . . . .
        . O X X X X . . .
        . . . . . . . . .
        . . . O . . . . .
        . . . . . . . . .
        . . . . O . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, NINE)
    assert pos.to_move == WHITE
    result = search(pos, uniform_evaluator, SearchConfig(num_simulations=60))
    assert result.best_move == _index(6, 2)
    assert result.visits.sum() == result.visits[_index(6, 2)] == 59  # the only move searched
    assert -1.0 < result.root_value < 1.0


def test_wins_rather_than_blocks_when_both_sides_have_a_four():
    pos = Position.from_picture("""
        . . . . . . . . .
        X O O O O . . . .
        . . . . . . . . .
        O X X X X . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, NINE)
    assert pos.to_move == BLACK
    result = search(pos, uniform_evaluator, SearchConfig(num_simulations=30))
    assert result.best_move == _index(5, 3)
    assert result.root_value == 1.0


@pytest.mark.parametrize("changes", [{}, {"fpu_reduction": 0.0}, {"leaves_per_tree": 8},
                                     {"root_fpu_reduction": 0.0}])
def test_finds_the_only_winning_move_and_proves_the_win(changes):
    # Black's three becomes an open four (a sure win) only by extending to the right.
    pos = Position.from_picture("""
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . O . X X X . . .
        . . . . . . . . .
        . . . . . . . . .
        . O . . . . . . O
        . . . . . . . . .
    """, NINE)
    cfg = SearchConfig(num_simulations=300, **changes)
    result = search(pos, lambda planes, legal: uniform_evaluator(planes, legal), cfg)
    assert result.best_move == _index(6, 4)
    assert result.root_value == 1.0


_FOURS = {
    "completes": ("""
        . . . . . . . . .
        . . . . . . . . .
        . O X X X X . . .
        . . . . . . . . .
        . . . O . O . . .
        . . . . . . . . .
        . . . . O . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, _index(6, 2)),
    "blocks": ("""
        . . . . . . . . .
        . . . . . . . . .
        . O X X X X . . .
        . . . . . . . . .
        . . . O . . . . .
        . . . . . . . . .
        . . . . O . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, _index(6, 2)),
}


@pytest.mark.parametrize("name", sorted(_FOURS))
def test_the_default_single_search_batches_its_leaves_and_keeps_the_known_answers(name):
    picture, answer = _FOURS[name]
    batches = []

    def counting(planes, legal):
        batches.append(len(planes))
        return uniform_evaluator(planes, legal)

    result = search(Position.from_picture(picture, NINE), counting)  # search_config(): 8 leaves
    assert search_config().leaves_per_tree == SEARCH_LEAVES == 8
    assert result.best_move == answer
    assert result.visits[answer] >= 0.95 * result.visits.sum()
    # Hundreds of simulations in about a hundred calls (a gather ends early on a collision);
    # a root that wins at once is solved by its first evaluation and needs no other.
    assert len(batches) <= 800 // SEARCH_LEAVES + 30
    if name == "blocks":
        assert max(batches) == SEARCH_LEAVES


def key_point_evaluator(key: int):
    """Uniform priors; the side to move is +0.6 when it holds ``key``, -0.6 when its opponent
    does, 0 otherwise: one point decides, and only the values say which."""

    def evaluate(planes, legal):
        n = len(planes)
        flat = planes.reshape(n, planes.shape[1], -1)
        values = 0.6 * (flat[:, 0, key] - flat[:, 1, key])
        priors, _ = uniform_evaluator(planes, legal)
        return priors, values.astype(np.float32)

    return evaluate


@pytest.mark.parametrize("leaves", [1, 8])
def test_visits_concentrate_on_the_move_the_values_favour_with_leaves_in_flight(leaves):
    # With virtual loss, 8 leaves in flight spread the search a little; the most valuable move
    # must still draw most of the visits. (Uniform priors try moves in board order, so the key
    # point is near the top, where the search finds it early.)
    key = _index(3, 1)
    pos = Position.from_moves(["e5", "d4"], NINE)
    cfg = SearchConfig(num_simulations=400, leaves_per_tree=leaves)
    result = search(pos, key_point_evaluator(key), cfg)
    assert result.best_move == key
    assert result.visits[key] > 0.6 * result.visits.sum()
    assert result.root_value > 0.3


def test_a_lost_position_is_proved_lost():
    # White threatens five at two points: whatever black blocks, white wins.
    pos = Position.from_picture("""
        . . . . . . . . .
        . . . . . . . . .
        . . O O O O . . .
        . . . . . . . . .
        . . . X . X . . .
        . . . . . . . . .
        . . . X . X . . .
        . . . . . . . . .
        . . . . . . . . .
    """, NINE)
    assert pos.to_move == BLACK
    forest = Forest(NINE, SearchConfig(num_simulations=40), 1)
    forest.reset(0, pos)
    forest.run(uniform_evaluator)
    assert forest.root_status(0) == SOLVED_LOSS and forest.root_value(0) == -1.0


_BLOCK_IS_DOUBLE_THREE = """
    O . . . . . . . .
    . O . . . . . . .
    . . O . X . . . .
    . . . O X . . . .
    . . X X . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


def test_renju_black_loses_when_its_only_block_is_forbidden():
    game = GameConfig(width=9, rule="renju")
    pos = Position.from_picture(_BLOCK_IS_DOUBLE_THREE, game)
    block = _index(4, 4)
    assert pos.to_move == BLACK and pos.is_forbidden(block)  # a double three for black
    forest = Forest(game, SearchConfig(num_simulations=30), 1)
    forest.reset(0, pos)
    forest.run(uniform_evaluator)
    assert forest.visit_counts(0)[block] == 0
    assert forest.root_status(0) == SOLVED_LOSS and forest.root_value(0) == -1.0
    # The same shape under freestyle: the block is legal, and the search finds it.
    free = Position.from_picture(_BLOCK_IS_DOUBLE_THREE, NINE)
    result = search(free, uniform_evaluator, SearchConfig(num_simulations=30))
    assert result.best_move == block


def test_search_result_policy_is_the_visit_distribution():
    pos = Position(GameConfig(width=7, n_in_row=4))
    result = search(pos, uniform_evaluator, SearchConfig(num_simulations=64, fpu_reduction=0.0))
    assert result.visits.dtype == np.int32 and result.visits.shape == (49,)
    assert result.visits.sum() == 63  # the root's own evaluation is the 64th visit
    np.testing.assert_allclose(result.policy, result.visits / 63, rtol=1e-6)


# -- tic-tac-toe on 3x3 (below GameConfig's minimum size, so on the bare kernels) ---------------

_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _winner(board):
    for a, b, c in _LINES:
        if board[a] and board[a] == board[b] == board[c]:
            return board[a]
    return 0


@functools.lru_cache(maxsize=None)
def _minimax(board: tuple, color: int) -> int:
    """Exact value for ``color`` to move: 1 win, 0 draw, -1 loss (the slow reference)."""
    if _winner(board):
        return -1
    if all(board):
        return 0
    return max(-_minimax(board[:m] + (color,) + board[m + 1:], 3 - color)
               for m in range(9) if not board[m])


def _move_value(board: tuple, color: int, m: int) -> int:
    return -_minimax(board[:m] + (color,) + board[m + 1:], 3 - color)


def test_tic_tac_toe_random_positions_are_played_perfectly():
    forest = Forest.on_board(3, 3, 3, "freestyle", SearchConfig(num_simulations=300), 1)
    rng = np.random.default_rng(1)
    tried = 0
    while tried < 120:
        board = [0] * 9
        color = BLACK
        for _ in range(rng.integers(0, 8)):
            m = int(rng.choice([p for p in range(9) if not board[p]]))
            board[m] = color
            color = 3 - color
        if _winner(board) or all(board):
            continue
        tried += 1
        forest.reset_board(0, np.array(board, dtype=np.int8), color)
        forest.run(uniform_evaluator)
        move = int(np.argmax(forest.visit_counts(0)))
        best = _minimax(tuple(board), color)
        assert _move_value(tuple(board), color, move) == best, (board, color, move)
        if best != 0:
            assert forest.root_value(0) == best  # wins and losses are proved, not estimated


@pytest.mark.parametrize("leaves_per_tree", [1, 3])
def test_tic_tac_toe_self_play_always_draws(leaves_per_tree):
    cfg = SearchConfig(num_simulations=200, leaves_per_tree=leaves_per_tree)
    rng = np.random.default_rng(leaves_per_tree)
    for game_index in range(4):
        forest = Forest.on_board(3, 3, 3, "freestyle", cfg, 1, seed=game_index)
        board = np.zeros(9, dtype=np.int8)
        color = BLACK
        forest.reset_board(0, board, color)
        while True:
            forest.run(uniform_evaluator)
            move = select_move(forest.visit_counts(0), 0.0, rng)
            board[move] = color
            assert not _winner(list(board)), f"someone won tic-tac-toe: {board}"
            if board.all():
                break
            forest.advance(0, move)
            color = 3 - color
