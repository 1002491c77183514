"""The two VCF input planes ("side to move has a VCF", "opponent has one"): the same answers
wherever planes are made (Position, the search's leaves, training batches), checked against the
solver and its plain-Python reference; the model config that records them; and the errors that
keep a network from reading planes it was not trained on."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku.game import BLACK, WHITE, GameConfig, Position, solve_vcf
from alphagomoku.game import vcf, vcf_planes
from alphagomoku.game.constants import NUM_PLANES, RULE_PLANES, VCF_PLANES
from alphagomoku.mcts import Forest, SearchConfig, search
from alphagomoku.mcts.search import fit_to_evaluator
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.evaluator import Evaluator
from alphagomoku.nn.vcf_inputs import without_vcf_planes
from alphagomoku.train.augment import make_batch
from alphagomoku.train.buffer import ReplayBuffer
from tests.reference_vcf import has_vcf
from tests.test_vcf import THREE_MOVES, picture, plausible_game

BIG = 10**6  # solver nodes: every answer on these boards is proved, never "unknown"


def flags(board, cfg, color):
    """(color has a VCF, its opponent has one): the solver called directly, with fresh memory
    and no move ordering, unlike the planes' calls."""
    state = vcf.allocate_state(cfg.area, tt_bits=8)
    b = np.array(board, dtype=np.int8)
    return tuple(
        vcf.solve_with(b, cfg.height, cfg.width, cfg.n_in_row, cfg.rule_id, side, -1, BIG, 0,
                       state)[0] == vcf.WIN
        for side in (color, 3 - color))


def positions(cfg, rng, n):
    return [plausible_game(cfg, rng, int(rng.integers(6, cfg.area // 3))) for _ in range(n)]


@pytest.mark.parametrize("rule", ["freestyle", "standard", "renju"])
def test_position_planes_match_the_solver_and_the_reference(rule, rng):
    cfg = GameConfig(width=9, rule=rule)
    seen = set()
    for pos in positions(cfg, rng, 60):
        planes = pos.planes(BIG)
        assert planes.shape == (NUM_PLANES + VCF_PLANES, 9, 9)
        np.testing.assert_array_equal(planes[:NUM_PLANES], pos.planes())
        own, opp = planes[NUM_PLANES], planes[NUM_PLANES + 1]
        assert np.all(own == own[0, 0]) and np.all(opp == opp[0, 0])  # constant planes
        got = (bool(own[0, 0]), bool(opp[0, 0]))
        assert got == flags(pos.board, cfg, pos.to_move)
        assert got == (solve_vcf(pos, BIG).found,
                       solve_vcf(pos, BIG, attacker=3 - pos.to_move).found)
        # The slow reference, bounded to 4 attacker moves: what it finds, the plane shows.
        for flag, attacker in zip(got, (pos.to_move, 3 - pos.to_move)):
            if has_vcf(list(pos.board), 9, 9, 5, rule, attacker, 4):
                assert flag
        seen.add(got)
    assert len(seen) >= 3  # own only, opponent only, neither (both is rarer): a real comparison


def test_a_known_vcf_lights_the_right_plane():
    pos = picture(THREE_MOVES)
    assert pos.to_move == BLACK
    planes = pos.planes(1000)
    assert planes[NUM_PLANES].min() == 1.0
    # Black passes its turn far away: now it is the opponent's VCF.
    pos.play("i1")
    assert pos.to_move == WHITE
    planes = pos.planes(1000)
    assert planes[NUM_PLANES].max() == 0.0 and planes[NUM_PLANES + 1].min() == 1.0
    pos.undo()
    # A budget of one node cannot prove a three-move line: unknown reads as zero.
    assert pos.planes(1)[NUM_PLANES].max() == 0.0


def board_from_planes(planes):
    """The board, side to move and last move the first five planes encode."""
    color = BLACK if planes[3, 0, 0] == 1.0 else WHITE
    board = (planes[0] * color + planes[1] * (3 - color)).astype(np.int8).reshape(-1)
    last = int(np.argmax(planes[2])) if planes[2].any() else -1
    return board, color, last


class Recorder:
    """A uniform evaluator that keeps every batch of planes it is shown."""

    def __init__(self):
        self.planes = []

    def __call__(self, planes, legal):
        self.planes.append(planes.copy())
        n = len(planes)
        priors = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
        return priors.astype(np.float32), np.zeros(n, np.float32)


@pytest.mark.parametrize("rule", ["freestyle", "standard", "renju"])
def test_the_search_leaves_carry_the_same_planes(rule, rng):
    """Every leaf the kernels hand to the network: its VCF planes are the solver's answer for
    the board its other planes show, and its first five planes are what they were without."""
    cfg = GameConfig(width=9, rule=rule)
    forest = Forest(cfg, SearchConfig(num_simulations=40, leaves_per_tree=4,
                                      vcf_plane_budget=BIG), 3, seed=1)
    plain = Forest(cfg, SearchConfig(num_simulations=40, leaves_per_tree=4), 3, seed=1)
    assert forest.planes.shape[1] == NUM_PLANES + VCF_PLANES and plain.planes.shape[1] == NUM_PLANES
    for i, pos in enumerate(positions(cfg, rng, 3)):
        forest.reset(i, pos)
        plain.reset(i, pos)
    seen, plain_seen = Recorder(), Recorder()
    forest.run(seen)
    plain.run(plain_seen)
    leaves = np.concatenate(seen.planes)
    np.testing.assert_array_equal(leaves[:, :NUM_PLANES], np.concatenate(plain_seen.planes))
    lit = 0
    for planes in leaves:
        board, color, _ = board_from_planes(planes)
        want = flags(board, cfg, color)
        assert (planes[NUM_PLANES].min() == 1.0, planes[NUM_PLANES + 1].min() == 1.0) == want
        assert planes[NUM_PLANES].max() == planes[NUM_PLANES].min()
        lit += want[0] + want[1]
    assert len(leaves) > 50 and lit > 0


def buffer_holding(cfg, games) -> ReplayBuffer:
    """A replay buffer holding the positions ``games``, each with a uniform policy target."""
    buffer = ReplayBuffer(cfg, max(len(games), 1))
    for i, pos in enumerate(games):
        buffer.boards[i] = pos.board
        buffer.to_move[i] = pos.to_move
        buffer.last_move[i] = pos.last_move
        buffer.policies[i] = pos.legal_mask() / pos.legal_mask().sum()
    buffer.size = len(games)
    return buffer


def test_training_batches_carry_them_under_every_symmetry(rng):
    cfg = GameConfig(width=9)
    games = positions(cfg, rng, 40)
    buffer = buffer_holding(cfg, games)
    idx = np.arange(len(games))
    plain = make_batch(buffer, idx, None, cfg)
    batch = make_batch(buffer, idx, np.random.default_rng(0), cfg, vcf_budget=BIG)
    assert plain.planes.shape[1] == NUM_PLANES and batch.planes.shape[1] == NUM_PLANES + VCF_PLANES
    for planes, pos in zip(batch.planes, games):
        want = flags(pos.board, cfg, pos.to_move)
        assert (planes[NUM_PLANES].min() == 1.0, planes[NUM_PLANES + 1].min() == 1.0) == want
        assert planes[NUM_PLANES].max() == planes[NUM_PLANES].min()


def test_the_model_config_records_them_and_older_configs_still_load():
    old = ModelConfig.preset("tiny", 9).to_dict()
    assert old["vcf_plane_budget"] == 0
    del old["vcf_plane_budget"]  # a config saved before the field existed
    assert ModelConfig.from_dict(old).num_planes == NUM_PLANES
    cfg = ModelConfig.preset("tiny", 9, vcf_plane_budget=200)
    assert cfg.num_planes == NUM_PLANES + VCF_PLANES and "+vcf200" in cfg.label
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="reads 7 input planes, not 6"):
        ModelConfig(blocks=1, channels=8, num_planes=6, vcf_plane_budget=10)
    with pytest.raises(ValueError, match="reads 5 input planes, not 7"):
        ModelConfig(blocks=1, channels=8, num_planes=7)
    with pytest.raises(ValueError, match="vcf_plane_budget"):
        ModelConfig(blocks=1, channels=8, vcf_plane_budget=-1)
    with pytest.raises(ValueError, match="vcf_plane_budget"):
        SearchConfig(vcf_plane_budget=-5)


def test_a_search_that_writes_other_planes_than_the_network_reads_is_refused():
    cfg = GameConfig(width=9)
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, vcf_plane_budget=50)).eval()
    ev = Evaluator(model, "cpu")
    forest = Forest(cfg, SearchConfig(num_simulations=8), 1)
    forest.reset(0, Position(cfg))
    with pytest.raises(ValueError, match=r"vcf_plane_budget 50 .*SearchConfig\(vcf_plane_budget=50\)"):
        forest.run(ev)
    # The convenience entry points take the network's planes themselves.
    assert fit_to_evaluator(SearchConfig(), ev).vcf_plane_budget == 50
    result = search(picture(THREE_MOVES), ev, SearchConfig(num_simulations=16))
    assert result.visits.sum() == 15
    # A network without the planes is refused planes it cannot read.
    plain = Evaluator(PolicyValueNet(ModelConfig.preset("tiny", 9)).eval(), "cpu")
    forest = Forest(cfg, SearchConfig(num_simulations=8, vcf_plane_budget=50), 1)
    forest.reset(0, Position(cfg))
    with pytest.raises(ValueError, match="trained with vcf_plane_budget 0"):
        forest.run(plain)


def test_the_solver_leaves_the_board_as_it_found_it(rng):
    cfg = GameConfig(width=9, rule="renju")
    state = vcf.allocate_state(cfg.area)
    out = np.zeros((NUM_PLANES + VCF_PLANES, 9, 9), np.float32)
    for pos in positions(cfg, rng, 20):
        before = pos.board.copy()
        vcf_planes.write_vcf_planes(pos.board, 9, 9, 5, cfg.rule_id, pos.to_move,
                                    pos.last_move, 500, state, out)
        np.testing.assert_array_equal(pos.board, before)


def test_a_network_with_vcf_planes_runs_a_forward_pass():
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, vcf_plane_budget=50)).eval()
    pos = picture(THREE_MOVES)
    with torch.no_grad():
        logits, value = model(torch.from_numpy(pos.planes(50)[None]))
    assert logits.shape == (1, 81) and value.shape == (1,)
    with pytest.raises(ValueError, match="network input must have shape"):
        model(torch.from_numpy(pos.planes()[None]))


@pytest.mark.parametrize("arch", ["az", "kata"])
def test_a_planes_network_cut_to_run_without_the_solver_answers_as_with_both_planes_zero(rng, arch):
    """The VCF planes cut out of the first layer; a kata network keeps its rule planes, which
    come after them."""
    torch.manual_seed(3)
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, vcf_plane_budget=50, arch=arch)).eval()
    with torch.no_grad():  # weights the planes visibly move, as a trained network's do
        model.stem[0].weight[:, NUM_PLANES:] += 1.0
    cut = without_vcf_planes(model)
    rules = RULE_PLANES if arch == "kata" else 0
    assert cut.config.vcf_plane_budget == 0 and cut.config.num_planes == NUM_PLANES + rules
    cfg = GameConfig(width=9, rule="standard")
    found = [pos.planes(BIG, rule_planes=bool(rules)) for pos in positions(cfg, rng, 40)]
    planes = np.stack([p for p in found if p[NUM_PLANES:NUM_PLANES + VCF_PLANES].any()][:8])
    assert len(planes) > 0  # some positions do light a plane, so the cut is tested where it matters
    blind = planes.copy()
    blind[:, NUM_PLANES:NUM_PLANES + VCF_PLANES] = 0
    without = np.delete(planes, [NUM_PLANES, NUM_PLANES + 1], axis=1)
    with torch.no_grad():
        want_p, want_v = model(torch.from_numpy(blind))
        got_p, got_v = cut(torch.from_numpy(without))
        lit_p, _ = model(torch.from_numpy(planes))
    torch.testing.assert_close(got_p, want_p)
    torch.testing.assert_close(got_v, want_v)
    assert not torch.allclose(lit_p, want_p)  # the planes were read: cutting them changes answers
    with pytest.raises(ValueError, match="reads no VCF planes"):
        without_vcf_planes(cut)


@pytest.mark.parametrize("rule", ["freestyle"])
def test_a_defender_stone_never_makes_a_vcf(rule, rng):
    """What the search's spared solver calls rest on (mcts.tree.OPP_NO_VCF): where a side has
    no VCF, it has none after any stone of its opponent, under freestyle rules. (Not under
    standard rules: an extra defender stone can make the defender's five an overline.)"""
    cfg = GameConfig(width=9, rule=rule)
    state = vcf.allocate_state(cfg.area)
    checked = 0
    for pos in positions(cfg, rng, 12):
        for attacker in (1, 2):
            board = pos.board.copy()
            won, _, _ = vcf.solve_with(board, 9, 9, 5, cfg.rule_id, attacker, -1, BIG, 0, state)
            if won != vcf.NONE:
                continue
            for m in np.flatnonzero(board == 0):
                board[m] = 3 - attacker
                after, _, _ = vcf.solve_with(board, 9, 9, 5, cfg.rule_id, attacker, -1, BIG, 0,
                                             state)
                board[m] = 0
                assert after != vcf.WIN, (pos.moves, attacker, int(m))
                checked += 1
    assert checked > 500
