"""The threat planes against a slow twin written from their definition, on random positions of
every rule and on hand-built ones; and how they turn with the board."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import reference_rules as ref

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import (BLACK, EMPTY, NUM_PLANES, RULE_NAMES, RULE_PLANES, VCF_PLANES,
                                        WHITE)
from alphagomoku.game.symmetry import transform_planes, valid_symmetries
from alphagomoku.game.threat_planes import THREAT_PLANES, write_threat_planes
from alphagomoku.mcts import Forest, SearchConfig, search
from alphagomoku.mcts.search import fit_to_evaluator
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.evaluator import Evaluator
from alphagomoku.train.augment import make_batch
from alphagomoku.train.teacher import check_pair
from test_game_kernels import random_board
from test_vcf_planes import Recorder, board_from_planes, buffer_holding, positions


def slow_threat_planes(cells, width, height, n, rule, color):
    """The six planes point by point: every window of ``n`` points on every line through each
    empty point, and the rule's verdict on a stone there for the five plane."""
    out = np.zeros((THREAT_PLANES, height, width), np.float32)
    for side, c in enumerate((color, 3 - color)):
        for p in range(width * height):
            if cells[p] != EMPTY:
                continue
            four = three = False
            for dx, dy in ref.DIRECTIONS:
                line = ref.line_through(width, height, p % width, p // width, dx, dy)
                at = line.index(p)
                clean_twos = 0
                for start in range(max(0, at - n + 1), min(at, len(line) - n) + 1):
                    window = [cells[q] for q in line[start:start + n]]
                    if 3 - c in window:
                        continue
                    own = window.count(c)
                    four |= own == n - 2 and n - 2 >= 1
                    clean_twos += own == n - 3 and n - 3 >= 1
                three |= clean_twos >= 2
            trial = list(cells)
            trial[p] = c
            five = ref.move_wins(trial, width, height, n, rule, p, c)
            y, x = divmod(p, width)
            out[3 * side:3 * side + 3, y, x] = (five, four, three)
    return out


def fast(board, width, height, n, rule, color):
    out = np.full((THREAT_PLANES + 3, height, width), 7.0, np.float32)
    write_threat_planes(board, height, width, n, RULE_NAMES[rule], color, out, 2)
    assert (out[:2] == 7.0).all() and (out[2 + THREAT_PLANES:] == 7.0).all()
    return out[2:2 + THREAT_PLANES]


@pytest.mark.parametrize("rule", sorted(RULE_NAMES))
def test_threat_planes_match_the_slow_twin_on_random_positions(rng, rule):
    checked = 0
    for _ in range(40):
        width = int(rng.integers(5, 12))
        height = width if rng.random() < 0.7 else int(rng.integers(5, 12))
        n = int(rng.choice([4, 5, 5, 5]))
        black = rng.uniform(0.05, 0.35)
        board = random_board(rng, width, height, black, rng.uniform(0.0, 0.35))
        color = BLACK if rng.random() < 0.5 else WHITE
        want = slow_threat_planes(board.tolist(), width, height, n, rule, color)
        np.testing.assert_array_equal(fast(board, width, height, n, rule, color), want)
        checked += int(want.sum())
    assert checked > 100  # the positions held threats to find, not only empty planes


def diagram(rows):
    board = np.zeros(len(rows) * len(rows[0]), np.int8)
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            board[y * len(row) + x] = {".": EMPTY, "X": BLACK, "O": WHITE}[ch]
    return board, len(rows[0]), len(rows)


def test_a_four_and_a_three_on_a_hand_built_board():
    board, w, h = diagram([
        ".........",
        ".XXXX....",
        ".........",
        "...OO....",
        ".........",
        ".........",
    ])
    planes = fast(board, w, h, 5, "freestyle", WHITE)
    # White to move: its own planes first. Black's four makes fives at both ends.
    assert planes[3, 1, 0] == 1 and planes[3, 1, 5] == 1 and planes[3].sum() == 2
    assert planes[0].sum() == 0  # white has no five
    # White's two stones: a stone beside them makes three (two clean windows hold it).
    assert planes[2, 3, 2] == 1 and planes[2, 3, 5] == 1
    # A stone two points from them makes a split three too, one farther only a broken shape.
    assert planes[2, 3, 1] == 1 and planes[2, 3, 7] == 0


def test_an_overline_is_no_five_under_standard_nor_for_black_under_renju():
    board, w, h = diagram(["XXXX.X...", ".........", ".........", ".........", "........."])
    assert fast(board, w, h, 5, "freestyle", BLACK)[0, 0, 4] == 1
    assert fast(board, w, h, 5, "standard", BLACK)[0, 0, 4] == 0
    assert fast(board, w, h, 5, "renju", BLACK)[0, 0, 4] == 0
    white = np.where(board == BLACK, WHITE, board).astype(np.int8)
    assert fast(white, w, h, 5, "renju", WHITE)[0, 0, 4] == 1


def test_the_planes_turn_with_the_board(rng):
    for _ in range(10):
        size = int(rng.integers(6, 12))
        board = random_board(rng, size, size, 0.2, 0.2)
        planes = fast(board, size, size, 5, "freestyle", BLACK)
        stones = board.reshape(1, size, size).astype(np.float32)
        for k in valid_symmetries(size, size):
            turned = transform_planes(stones[None], k)[0, 0].astype(np.int8).ravel()
            np.testing.assert_array_equal(
                fast(turned, size, size, 5, "freestyle", BLACK),
                transform_planes(planes[None], k)[0])


# -- wherever planes are made ---------------------------------------------------------------------


def threats_of(board, cfg, color):
    return fast(np.asarray(board, np.int8), cfg.width, cfg.height, cfg.n_in_row, cfg.rule, color)


@pytest.mark.parametrize("rule", sorted(RULE_NAMES))
def test_position_search_leaves_and_training_batches_carry_the_same_planes(rule, rng):
    """The planes follow the VCF planes and come before the rule planes, in Position's, in the
    search's leaves and in the trainer's batches under every symmetry."""
    cfg = GameConfig(width=9, rule=rule)
    games = positions(cfg, rng, 30)
    first = NUM_PLANES + VCF_PLANES
    for pos in games[:10]:
        planes = pos.planes(50, rule_planes=True, threat_planes=True)
        assert planes.shape[0] == first + THREAT_PLANES + RULE_PLANES
        np.testing.assert_array_equal(planes[:first], pos.planes(50))
        np.testing.assert_array_equal(planes[first:first + THREAT_PLANES],
                                      threats_of(pos.board, cfg, pos.to_move))
        np.testing.assert_array_equal(planes[first + THREAT_PLANES:],
                                      pos.planes(rule_planes=True)[NUM_PLANES:])

    forest = Forest(cfg, SearchConfig(num_simulations=30, leaves_per_tree=4, vcf_plane_budget=50,
                                      threat_planes=True), 3, seed=1)
    for i, pos in enumerate(games[:3]):
        forest.reset(i, pos)
    seen = Recorder()
    forest.run(seen)
    leaves = np.concatenate(seen.planes)
    assert leaves.shape[1] == first + THREAT_PLANES and len(leaves) > 20
    for planes in leaves:
        board, color, _ = board_from_planes(planes)
        np.testing.assert_array_equal(planes[first:], threats_of(board, cfg, color))

    buffer = buffer_holding(cfg, games)
    batch = make_batch(buffer, np.arange(len(games)), np.random.default_rng(0), cfg,
                       vcf_budget=50, threat_planes=True)
    lit = 0
    for planes in batch.planes:
        board, color, _ = board_from_planes(planes)
        np.testing.assert_array_equal(planes[first:], threats_of(board, cfg, color))
        lit += int(planes[first:].sum())
    assert lit > 0


def test_the_model_config_records_them_and_a_mismatched_search_or_teacher_is_refused():
    old = ModelConfig.preset("tiny", 9, vcf_plane_budget=50).to_dict()
    del old["threat_planes"]  # a config saved before the field existed
    assert ModelConfig.from_dict(old).num_planes == NUM_PLANES + VCF_PLANES
    cfg = ModelConfig.preset("tiny", 9, vcf_plane_budget=50, threat_planes=True)
    assert cfg.num_planes == NUM_PLANES + VCF_PLANES + THREAT_PLANES and "+threats" in cfg.label
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    kata = ModelConfig.preset("tiny", 9, arch="kata", threat_planes=True)
    assert kata.num_planes == NUM_PLANES + THREAT_PLANES + RULE_PLANES
    with pytest.raises(ValueError, match="threat planes reads 11 input planes, not 7"):
        ModelConfig(blocks=1, channels=8, num_planes=7, threat_planes=True)
    with pytest.raises(ValueError, match="threat_planes must be true or false"):
        ModelConfig(blocks=1, channels=8, threat_planes=1)

    game = GameConfig(width=9)
    ev = Evaluator(PolicyValueNet(cfg).eval(), "cpu")
    forest = Forest(game, SearchConfig(num_simulations=8, vcf_plane_budget=50), 1)
    forest.reset(0, Position(game))
    with pytest.raises(ValueError, match=r"threat_planes True .*SearchConfig\(threat_planes=True\)"):
        forest.run(ev)
    assert fit_to_evaluator(SearchConfig(), ev).threat_planes
    result = search(Position.from_moves(["e5", "d4", "e4"], game), ev, SearchConfig(num_simulations=9))
    assert result.visits.sum() == 8
    with pytest.raises(ValueError, match="threat planes"):
        check_pair(ModelConfig.preset("tiny", 9, vcf_plane_budget=50), cfg)


def test_a_network_with_threat_planes_answers_through_onnx_as_through_torch(tmp_path, rng):
    from alphagomoku.nn.onnx_file import read_onnx_file, write_onnx_file

    torch.manual_seed(0)
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, vcf_plane_budget=50, arch="kata",
                                              threat_planes=True)).eval()
    write_onnx_file(model, tmp_path / "m.onnx")
    onnx = read_onnx_file(tmp_path / "m.onnx")
    assert onnx.config.threat_planes
    game = GameConfig(width=9, rule="renju")
    games = positions(game, rng, 6)
    planes = np.stack([p.planes(50, rule_planes=True, threat_planes=True) for p in games])
    legal = np.stack([p.legal_mask() for p in games])
    want_p, want_v = Evaluator(model, "cpu")(planes, legal)
    got_p, got_v = onnx(planes, legal)
    np.testing.assert_allclose(got_p, want_p, atol=1e-5)
    np.testing.assert_allclose(got_v, want_v, atol=1e-5)
