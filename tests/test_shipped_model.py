"""The shipped models (alphagomoku/assets) on probe positions: where the prior looks after a
quiet opening, and three tactics a short search must get right. The shipped network on each
Gomocup setting; the cpu-hour one on its 15x15 freestyle board."""

from __future__ import annotations

import numpy as np
import pytest

from alphagomoku.eval.specs import CPU_HOUR_MODEL, DEFAULT_MODEL
from alphagomoku.game import GameConfig, Position
from alphagomoku.mcts import search, search_config
from alphagomoku.nn import Evaluator
from alphagomoku.nn.io import load_model

SHORT_SEARCH = 200  # simulations: "a short search"

# Each probe: an ASCII board (X black, O white; black has as many stones as white, so black is
# to move), and the moves that pass.
BLOCK_OPEN_THREE = """
  a b c d e f g h i j k l m n o
15 . . . . . . . . . . . . . . .
14 . . . . . . . . . . . . . . .
13 . . . . . . . . . . . . . . .
12 . . . . . . . . . . . . . . .
11 . . . . . . . . . . . . . . .
10 . . . . . . O O O . . . . . .
 9 . . . . . . . . . . . . . . .
 8 . . . . . . . X . . . . . . .
 7 . . . . . . . . X . . . . . .
 6 . . . . . . . . . . . . . . .
 5 . . . . . . . . . . . . . X .
 4 . . . . . . . . . . . . . . .
 3 . . . . . . . . . . . . . . .
 2 . . . . . . . . . . . . . . .
 1 . . . . . . . . . . . . . . .
"""
# White's open three g10-h10-i10 with two empty points at each end: black must take f10 or j10.
# A point further out (e10, k10) lets white make an open four on the other side.
BLOCKS = {"f10", "j10"}

FOUR_THREE = """
  a b c d e f g h i j k l m n o
15 O . . . . . . . . . . . . . O
14 . . . . . . . . . . . . . . .
13 . . . . . . . . . . . . . . .
12 . . . . . . . . . . . . . . .
11 . . . . . . . . . . . . . . .
10 . . . . . X X . . . . . . . .
 9 . . . . . . . X . . . . . . .
 8 . . . . . . . X . . . . . . .
 7 . . . . . . . X . . . . . . .
 6 . . . . . . . O . . . . . . .
 5 . . . . . . . . . . . . . . .
 4 . . . . . . . . . . . . . . .
 3 . . . . . . . . . . . . . . .
 2 . . . . . . . . . . . . . . .
 1 O . . . . . . . . . . . . . O
"""
# h10 makes a four (h7-h10, h6 blocked, h11 to come) and the open three f10-g10-h10 at once.
FOUR_THREE_MOVE = "h10"

ANSWER_FOUR = """
  a b c d e f g h i j k l m n o
15 . . . . . . . . . . . . . . .
14 . . . . . . . . . . . . . . .
13 . . . . . . . . . . . . . . .
12 . . . . . . . . . . . . . . .
11 . . . . . . . . . . . . . . .
10 . . . . . X O O O O . . . . .
 9 . . . . . . . X . . . . . . .
 8 . . . . . . . X X . . . . . .
 7 . . . . . . . . . . . . . . .
 6 . . . . . . . . . . . . . . .
 5 . . . . . . . . . . . . . . .
 4 . . . . . . . . . . . . . . .
 3 . . . . . . . . . . . . . . .
 2 . . . . . . . . . . . . . . .
 1 . . . . . . . . . . . . . . .
"""
ANSWER_FOUR_MOVE = "k10"


# (model, game) pairs: the shipped network on the four settings Gomocup plays, the cpu-hour one
# on its board.
SETTINGS = [
    (DEFAULT_MODEL, GameConfig(width=15)),
    (DEFAULT_MODEL, GameConfig(width=20)),
    (DEFAULT_MODEL, GameConfig(width=15, rule="standard")),
    (DEFAULT_MODEL, GameConfig(width=15, rule="renju")),
    (CPU_HOUR_MODEL, GameConfig(width=15)),
]
SETTING_IDS = [f"{m.stem}-{g.width}-{g.rule}" for m, g in SETTINGS]

_evaluators: dict = {}


def evaluator_for(model):
    if model not in _evaluators:
        _evaluators[model] = Evaluator(load_model(model, device="cpu"), "cpu")
    return _evaluators[model]


def on_board(picture: str, game: GameConfig) -> Position:
    """The 15x15 picture on ``game``'s board, its stones on the same named points (the extra
    rows above, the extra columns to the right)."""
    rows = [line.split()[1:] for line in picture.strip().splitlines()[1:]]
    extra = game.width - len(rows)
    grid = [["."] * game.width for _ in range(extra)] + [r + ["."] * extra for r in rows]
    text = "\n".join(" ".join(r) for r in grid)
    return Position.from_picture(text, game)


def chebyshev(a: int, b: int, width: int) -> int:
    return max(abs(a % width - b % width), abs(a // width - b // width))


@pytest.mark.parametrize("model, game", SETTINGS, ids=SETTING_IDS)
def test_quiet_opening_prior_stays_near_the_stones(model, game):
    evaluator = evaluator_for(model)
    pos = Position.from_moves(["g8", "f8", "j9", "f7"], game)
    planes = pos.planes(evaluator.config.vcf_plane_budget, evaluator.config.rule_planes)
    priors, _ = evaluator(planes[None], pos.legal_mask()[None])
    top = int(np.argmax(priors[0]))
    stones = np.flatnonzero(pos.board)
    assert min(chebyshev(top, int(s), game.width) for s in stones) <= 2, pos.name(top)
    # Not the near-uniform prior of an untrained network: 0.4 nats below the uniform (5.40 nats
    # over 221 points on 15x15).
    p = priors[0][priors[0] > 0]
    assert -(p * np.log(p)).sum() < np.log(len(p)) - 0.4


@pytest.mark.parametrize("model, game", SETTINGS, ids=SETTING_IDS)
@pytest.mark.parametrize("picture, good", [
    (BLOCK_OPEN_THREE, BLOCKS),
    (FOUR_THREE, {FOUR_THREE_MOVE}),
    (ANSWER_FOUR, {ANSWER_FOUR_MOVE}),
], ids=["block-open-three", "make-four-three", "answer-four"])
def test_short_search_plays_the_tactic(model, game, picture, good):
    # Each good move is legal for black under every rule here (a four-three is no foul in renju).
    pos = on_board(picture, game)
    assert pos.to_move == 1  # black
    result = search(pos, evaluator_for(model), search_config(num_simulations=SHORT_SEARCH), seed=0)
    assert pos.name(result.best_move) in good, (pos.name(result.best_move), good)


@pytest.mark.parametrize("model", [DEFAULT_MODEL, CPU_HOUR_MODEL], ids=lambda m: m.stem)
def test_each_shipped_onnx_file_is_its_weights(model):
    """The engine plays the ONNX file (nn/onnx_file.py); it must be the weights exported, with
    their config. After new weights: python -m alphagomoku.nn.onnx_file
    alphagomoku/assets/default.pt alphagomoku/assets/default.onnx"""
    from alphagomoku.nn.onnx_file import read_onnx_file

    weights = load_model(model)
    network = read_onnx_file(model.with_suffix(".onnx"))
    assert network.config == weights.config
    rng = np.random.default_rng(0)
    cfg = weights.config
    planes = (rng.random((16, cfg.num_planes, cfg.height, cfg.width)) < 0.2).astype(np.float32)
    legal = rng.random((16, cfg.area)) < 0.8
    want_p, want_v = Evaluator(weights, "cpu")(planes, legal)
    got_p, got_v = network(planes, legal)
    np.testing.assert_allclose(got_p, want_p, atol=1e-5)
    np.testing.assert_allclose(got_v, want_v, atol=1e-5)
