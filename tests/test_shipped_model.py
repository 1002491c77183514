"""The shipped model (alphagomoku/assets/default.pt) on probe positions: where its prior looks
after a quiet opening, and three tactics it must get right with a short search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from alphagomoku.game import GameConfig, Position
from alphagomoku.mcts import search, search_config
from alphagomoku.nn import Evaluator
from alphagomoku.nn.io import load_model

MODEL = Path(__file__).resolve().parents[1] / "alphagomoku" / "assets" / "default.pt"
GAME = GameConfig(width=15)
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


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(load_model(MODEL, device="cpu"), "cpu")


def chebyshev(a: int, b: int) -> int:
    return max(abs(a % 15 - b % 15), abs(a // 15 - b // 15))


def test_quiet_opening_prior_stays_near_the_stones(evaluator):
    pos = Position.from_moves(["g8", "f8", "j9", "f7"], GAME)
    planes = pos.planes(evaluator.config.vcf_plane_budget)  # the inputs it was trained on
    priors, _ = evaluator(planes[None], pos.legal_mask()[None])
    top = int(np.argmax(priors[0]))
    stones = np.flatnonzero(pos.board)
    assert min(chebyshev(top, int(s)) for s in stones) <= 2, pos.name(top)
    # Not the near-uniform prior of an untrained network (uniform: log 221 = 5.40 nats).
    p = priors[0][priors[0] > 0]
    assert -(p * np.log(p)).sum() < 5.0


@pytest.mark.parametrize("picture, good", [
    (BLOCK_OPEN_THREE, BLOCKS),
    (FOUR_THREE, {FOUR_THREE_MOVE}),
    (ANSWER_FOUR, {ANSWER_FOUR_MOVE}),
], ids=["block-open-three", "make-four-three", "answer-four"])
def test_short_search_plays_the_tactic(evaluator, picture, good):
    pos = Position.from_picture(picture, GAME)
    assert pos.to_move == 1  # black
    result = search(pos, evaluator, search_config(num_simulations=SHORT_SEARCH), seed=0)
    assert pos.name(result.best_move) in good, (pos.name(result.best_move), good)


def test_the_shipped_onnx_file_is_the_shipped_weights():
    """The engine plays default.onnx (nn/onnx_file.py); it must be default.pt exported, with
    its config. After a new default.pt: python -m alphagomoku.nn.onnx_file
    alphagomoku/assets/default.pt alphagomoku/assets/default.onnx"""
    from alphagomoku.nn.onnx_file import read_onnx_file

    model = load_model(MODEL)
    network = read_onnx_file(MODEL.with_suffix(".onnx"))
    assert network.config == model.config
    rng = np.random.default_rng(0)
    cfg = model.config
    planes = (rng.random((16, cfg.num_planes, cfg.height, cfg.width)) < 0.2).astype(np.float32)
    legal = rng.random((16, cfg.area)) < 0.8
    want_p, want_v = Evaluator(model, "cpu")(planes, legal)
    got_p, got_v = network(planes, legal)
    np.testing.assert_allclose(got_p, want_p, atol=1e-5)
    np.testing.assert_allclose(got_v, want_v, atol=1e-5)
