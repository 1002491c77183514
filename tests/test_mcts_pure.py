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
