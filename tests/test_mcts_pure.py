"""The rollout baseline: tactics, strength against random play, reproducibility."""

import numpy as np
import pytest

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import BLACK, WHITE
from alphagomoku.mcts import PureMCTS

NINE = GameConfig(width=9)
FOUR = """
    . . . . . . . . .
    . . . . . . . . .
    . O X X X X . . .
    . . . . . . . . .
    . . . O . . . . .
    . . . . . . . . .
    . . . . O . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


@pytest.mark.parametrize("uniform_prior", [False, True])
def test_blocks_a_four_and_completes_one(uniform_prior):
    pos = Position.from_picture(FOUR, NINE)
    assert pos.to_move == WHITE
    player = PureMCTS(NINE, 200, seed=3, uniform_prior=uniform_prior)
    assert player.best_move(pos) == 2 * 9 + 6
    pos.play((0, 8))  # white ignores the four
    assert player.best_move(pos) == 2 * 9 + 6
    assert player.root_value() == 1.0


@pytest.mark.parametrize("uniform_prior", [False, True])
def test_beats_a_random_player(uniform_prior):
    game = GameConfig(width=6, n_in_row=4)
    rng = np.random.default_rng(0)
    wins = 0
    for g in range(6):
        player = PureMCTS(game, 150, seed=g, uniform_prior=uniform_prior)
        pos = Position(game)
        mcts_color = BLACK if g % 2 == 0 else WHITE
        while not pos.is_over:
            if pos.to_move == mcts_color:
                pos.play(player.best_move(pos))
            else:
                pos.play(int(rng.choice(pos.legal_moves())))
        wins += pos.winner == mcts_color
    assert wins >= 5


def test_search_counts_every_playout_and_is_seeded():
    game = GameConfig(width=7, n_in_row=4)
    pos = Position.from_moves([24, 25], game)
    first = PureMCTS(game, 300, seed=7).search(pos)
    again = PureMCTS(game, 300, seed=7).search(pos)
    other = PureMCTS(game, 300, seed=8).search(pos)
    assert first.sum() == 299 and first[24] == first[25] == 0
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)  # the playouts differ with the seed


def test_rejects_bad_playouts():
    with pytest.raises(ValueError, match="playouts"):
        PureMCTS(NINE, 0)


@pytest.mark.parametrize("uniform_prior", [False, True])
def test_a_search_continued_in_steps_equals_one_search_of_the_sum(uniform_prior):
    game = GameConfig(width=7, n_in_row=4)
    pos = Position.from_moves([24, 25], game)
    whole = PureMCTS(game, 400, seed=5, uniform_prior=uniform_prior).search(pos, 300)
    steps = PureMCTS(game, 400, seed=5, uniform_prior=uniform_prior)
    steps.search(pos, 20)
    steps.search(pos, 80, continue_=True)
    assert steps.done == 100
    visits = steps.search(pos.copy(), 200, continue_=True)
    assert steps.done == 300
    np.testing.assert_array_equal(visits, whole)


def test_a_fresh_search_with_a_seed_matches_a_new_searcher():
    game = GameConfig(width=7, n_in_row=4)
    pos = Position.from_moves([24], game)
    reused = PureMCTS(game, 200, seed=1)
    reused.search(Position(game))  # moves its random stream on
    fresh = PureMCTS(game, 200, seed=9).search(pos)
    np.testing.assert_array_equal(reused.search(pos, seed=9), fresh)


def test_continuing_needs_the_same_position_and_room_in_the_tree():
    game = GameConfig(width=7, n_in_row=4)
    pos = Position.from_moves([24], game)
    player = PureMCTS(game, 100, seed=1)
    with pytest.raises(ValueError, match="position of the last search"):
        player.search(pos, 10, continue_=True)  # nothing searched yet
    player.search(pos, 60)
    with pytest.raises(ValueError, match="position of the last search"):
        player.search(Position.from_moves([24, 25], game), 10, continue_=True)
    with pytest.raises(ValueError, match=r"60 \+ 50 playouts would pass this search's limit of 100"):
        player.search(pos, 50, continue_=True)
    with pytest.raises(ValueError, match="seed"):
        player.search(pos, 10, continue_=True, seed=3)
    with pytest.raises(ValueError, match="playouts"):
        player.search(pos, 0, continue_=True)
    assert player.done == 60  # the refused calls left the tree as it was
    player.search(pos, 40, continue_=True)
    assert player.done == 100
