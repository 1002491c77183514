"""The fully convolutional network ("kata"): one set of weights on every board size, its ONNX
export with free height and width, and the rule planes it reads, which must be the same wherever
planes are made (Position, the search's leaves, training batches)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku.game import BLACK, WHITE, GameConfig, Position
from alphagomoku.game import kernels
from alphagomoku.game.constants import NUM_PLANES, RENJU, RULE_PLANES, STANDARD, FREESTYLE
from alphagomoku.game.rule_planes import fill_rule_planes
from alphagomoku.mcts import Forest, SearchConfig
from alphagomoku.mcts.search import fit_to_evaluator
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.evaluator import Evaluator
from alphagomoku.nn.model import AlphaZeroNet, KataNet
from alphagomoku.train.augment import make_batch
from tests.test_nn_backend import model_for
from tests.test_vcf_planes import buffer_holding
from tests.test_vcf import plausible_game


@pytest.fixture(scope="module")
def kata():
    return model_for("tiny", width=15, arch="kata")


def random_inputs(rng, cfg, n, size):
    planes = (rng.random((n, cfg.num_planes, size, size)) < 0.2).astype(np.float32)
    legal = rng.random((n, size * size)) < 0.7
    legal[0] = False  # a row with no legal point
    return planes, legal


def test_the_config_builds_the_shape_it_names():
    az = ModelConfig.preset("tiny", 15)
    kata = ModelConfig.preset("tiny", 15, arch="kata")
    assert isinstance(PolicyValueNet(az), AlphaZeroNet)
    assert isinstance(PolicyValueNet(kata), KataNet) and isinstance(PolicyValueNet(kata), PolicyValueNet)
    assert az.num_planes == NUM_PLANES and kata.num_planes == NUM_PLANES + RULE_PLANES
    assert not az.any_board and az.plays(15) and not az.plays(20)
    assert kata.any_board and all(kata.plays(s) for s in range(9, 23)) and not kata.plays(23)
    assert ModelConfig.from_dict(kata.to_dict()) == kata
    assert "kata" in kata.label
    with pytest.raises(ValueError, match="arch must be one of"):
        ModelConfig(blocks=1, channels=8, arch="transformer")


@pytest.mark.parametrize("preset", ["tiny", "small"])
@pytest.mark.parametrize("vcf", [0, 100])
@pytest.mark.parametrize("pooling, future, bn", [(True, False, True), (False, False, True),
                                                  (True, True, True), (True, False, False)])
def test_parameter_count_matches_torch(preset, vcf, pooling, future, bn):
    cfg = ModelConfig.preset(preset, 15, arch="kata", vcf_plane_budget=vcf, global_pooling=pooling,
                             future_head=future, batch_norm=bn)
    net = PolicyValueNet(cfg)
    assert cfg.num_parameters() == sum(p.numel() for p in net.parameters())
    norms = sum(m.num_features for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d))
    assert cfg.weight_bytes() == 4 * (cfg.num_parameters() + 2 * norms)


def test_without_global_pooling_only_the_value_head_pools(rng):
    from alphagomoku.nn.model import GlobalPoolBlock

    cfg = ModelConfig.preset("small", 15, arch="kata", global_pooling=False)
    net = PolicyValueNet(cfg)
    assert not any(isinstance(m, GlobalPoolBlock) for m in net.modules())
    assert not hasattr(net, "policy_pool_conv") and "nopool" in cfg.label
    pooled = PolicyValueNet(ModelConfig.preset("small", 15, arch="kata"))
    assert any(isinstance(m, GlobalPoolBlock) for m in pooled.modules())
    # Still one set of weights for every size: the value head pools.
    for size in (9, 20):
        priors, values = Evaluator(net, "cpu")(*random_inputs(rng, cfg, 2, size))
        assert priors.shape == (2, size * size) and values.shape == (2,)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    old = ModelConfig.preset("tiny", 15, arch="kata").to_dict()
    del old["global_pooling"]  # a file from before the option: pooled, as it was trained
    assert ModelConfig.from_dict(old).global_pooling
    with pytest.raises(ValueError, match="only in a 'kata' network"):
        ModelConfig.preset("tiny", 15, global_pooling=False)


@pytest.mark.parametrize("arch", ["az", "kata"])
def test_without_batch_norm_an_answer_does_not_depend_on_its_batch(arch, rng):
    """What a mixed run needs: a batch of one variant in training and a position in play are
    read alike, with no statistics of the batch around them."""
    from alphagomoku.nn.model import GlobalPoolBlock, ResidualBlock

    cfg = ModelConfig.preset("small", 15, arch=arch, batch_norm=False)
    net = PolicyValueNet(cfg)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules())
    assert "nobn" in cfg.label and ModelConfig.from_dict(cfg.to_dict()) == cfg
    x = torch.randn(6, cfg.num_planes, 15, 15)
    blocks = [m for m in net.modules() if isinstance(m, (ResidualBlock, GlobalPoolBlock))]
    with torch.no_grad():
        # Each block starts as the identity on non-negative inputs (its last convolution is 0).
        h = torch.relu(torch.randn(2, cfg.channels, 15, 15))
        for block in blocks:
            torch.testing.assert_close(block(h), h)
        for block in blocks:  # trained weights, as far as this test is concerned
            torch.nn.init.normal_(block.conv2[0].weight, std=0.05)
        net.train()
        whole, one = net(x)[0], net(x[2:3])[0]
        net.eval()
        played = net(x)[0]
    torch.testing.assert_close(whole[2:3], one, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(whole, played)
    with_bn = PolicyValueNet(ModelConfig.preset("small", 15, arch=arch))
    with torch.no_grad():
        with_bn.train()
        assert not torch.allclose(with_bn(x)[0][2:3], with_bn(x[2:3])[0], atol=1e-3)
    old = ModelConfig.preset("tiny", 15, arch=arch).to_dict()
    del old["batch_norm"]  # a file from before the option: batch norm, as it was trained
    assert ModelConfig.from_dict(old).batch_norm
    with pytest.raises(ValueError, match="batch_norm must be true or false"):
        ModelConfig(blocks=1, channels=8, batch_norm=0)


def test_a_network_without_batch_norm_exports_to_onnx(rng):
    pytest.importorskip("onnxruntime")
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    net = PolicyValueNet(ModelConfig.preset("tiny", 15, arch="kata", batch_norm=False)).eval()
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.1)
    for size in (9, 20):
        planes, legal = random_inputs(rng, net.config, 3, size)
        p1, v1 = OnnxEvaluator(net)(planes, legal)
        p2, v2 = Evaluator(net, "cpu")(planes, legal)
        np.testing.assert_allclose(p1, p2, atol=1e-5)
        np.testing.assert_allclose(v1, v2, atol=1e-5)


def test_one_set_of_weights_plays_every_board_from_9_to_22(kata, rng):
    evaluator = Evaluator(kata, "cpu")
    for size in range(9, 23):
        planes, legal = random_inputs(rng, kata.config, 3, size)
        priors, values = evaluator(planes, legal)
        assert priors.shape == (3, size * size) and values.shape == (3,)
        assert np.all(priors[~legal] == 0.0)
        np.testing.assert_allclose(priors[1:].sum(axis=1), 1.0, atol=1e-5)
        assert priors[0].sum() == 0.0
        assert np.all(np.abs(values) <= 1.0)
    with pytest.raises(ValueError, match="H and W from 5 to 22"):
        evaluator(*random_inputs(rng, kata.config, 2, 23))


def test_the_network_sees_the_board_size(kata, rng):
    """Global pooling's size-scaled mean: the same stones in the corner of a 9x9 and of a 19x19
    board are valued differently (a dense head would not run on both at all)."""
    small = np.zeros((1, kata.config.num_planes, 9, 9), dtype=np.float32)
    large = np.zeros((1, kata.config.num_planes, 19, 19), dtype=np.float32)
    small[0, 0, 1, 1] = large[0, 0, 1, 1] = 1.0
    with torch.no_grad():
        v_small = kata(torch.from_numpy(small))[1]
        v_large = kata(torch.from_numpy(large))[1]
    assert abs(float(v_small) - float(v_large)) > 1e-4


def test_onnx_export_runs_every_size_and_agrees_with_torch(kata, rng):
    pytest.importorskip("onnxruntime")
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    onnx, torch_eval = OnnxEvaluator(kata), Evaluator(kata, "cpu")
    for size in (9, 15, 20, 22):
        planes, legal = random_inputs(rng, kata.config, 4, size)
        p1, v1 = onnx(planes, legal)
        p2, v2 = torch_eval(planes, legal)
        np.testing.assert_allclose(p1, p2, atol=1e-5)
        np.testing.assert_allclose(v1, v2, atol=1e-5)


def test_the_onnx_file_plays_every_size(kata, rng, tmp_path):
    pytest.importorskip("onnxruntime")
    from alphagomoku.nn.onnx_file import read_onnx_file, write_onnx_file

    network = read_onnx_file(write_onnx_file(kata, tmp_path / "kata.onnx"))
    assert network.config == kata.config
    for size in (9, 20):
        planes, legal = random_inputs(rng, kata.config, 2, size)
        np.testing.assert_allclose(network(planes, legal)[0], Evaluator(kata, "cpu")(planes, legal)[0],
                                   atol=1e-5)


def test_the_auxiliary_heads_share_the_trunk(kata, rng):
    planes, _ = random_inputs(rng, kata.config, 3, 11)
    x = torch.from_numpy(planes)
    with torch.no_grad():
        logits, values, future = kata(x, all_heads=True)
        own, value = kata(x)
    assert logits.shape == (3, 3, 121) and values.shape == (3, 2) and future is None
    torch.testing.assert_close(logits[:, 0], own)
    torch.testing.assert_close(values[:, 0], value)



def test_the_future_head_answers_a_point_each_on_every_board(rng, tmp_path):
    """One value from -1 to 1 a point, on each board size; play and the ONNX file do not read
    it (the file of such a network answers as its torch evaluator)."""
    from alphagomoku.nn.onnx_file import read_onnx_file, write_onnx_file

    torch.manual_seed(3)
    net = PolicyValueNet(ModelConfig.preset("tiny", 9, arch="kata", future_head=True)).eval()
    for size in (9, 20):
        planes, legal = random_inputs(rng, net.config, 2, size)
        with torch.no_grad():
            logits, values, future = net(torch.from_numpy(planes), all_heads=True)
        assert future.shape == (2, size * size) and future.abs().max() <= 1
        network = read_onnx_file(write_onnx_file(net, tmp_path / "f.onnx"))
        np.testing.assert_allclose(network(planes, legal)[0],
                                   Evaluator(net, "cpu")(planes, legal)[0], atol=1e-5)

# -- the rule planes ---------------------------------------------------------------------------

RULE_PLANE_OF = {"freestyle": (0.0, 0.0), "standard": (1.0, 0.0), "renju": (0.0, 1.0)}


@pytest.mark.parametrize("rule", ["freestyle", "standard", "renju"])
def test_position_planes_end_with_the_rule(rule, rng):
    cfg = GameConfig(width=9, rule=rule)
    pos = plausible_game(cfg, rng, 12)
    planes = pos.planes(rule_planes=True)
    assert planes.shape == (NUM_PLANES + RULE_PLANES, 9, 9)
    np.testing.assert_array_equal(planes[:NUM_PLANES], pos.planes())
    for k, want in enumerate(RULE_PLANE_OF[rule]):
        assert np.all(planes[NUM_PLANES + k] == want)
    with_vcf = pos.planes(vcf_budget=100, rule_planes=True)
    np.testing.assert_array_equal(with_vcf[-RULE_PLANES:], planes[-RULE_PLANES:])
    np.testing.assert_array_equal(with_vcf[:NUM_PLANES + 2], pos.planes(vcf_budget=100))


def test_fill_rule_planes_overwrites_what_was_there():
    planes = np.full((2, NUM_PLANES + RULE_PLANES, 5, 5), 7.0, dtype=np.float32)
    fill_rule_planes(planes, FREESTYLE)
    assert np.all(planes[:, -RULE_PLANES:] == 0.0) and np.all(planes[:, :NUM_PLANES] == 7.0)
    fill_rule_planes(planes, RENJU)
    assert np.all(planes[:, -1] == 1.0) and np.all(planes[:, -2] == 0.0)
    fill_rule_planes(planes, STANDARD)
    assert np.all(planes[:, -2] == 1.0) and np.all(planes[:, -1] == 0.0)


def test_renju_planes_tell_the_colours_apart(rng):
    """Renju is not symmetric in colour: a position and its colour-swapped twin (the same stones,
    the other side to move) must not look the same to the network."""
    cfg = GameConfig(width=9, rule="renju")
    pos = plausible_game(cfg, rng, 10)
    twin = Position(cfg)
    twin.board[:] = np.where(pos.board == BLACK, WHITE, np.where(pos.board == WHITE, BLACK, 0))
    twin.to_move = 3 - pos.to_move
    a, b = pos.planes(rule_planes=True), twin.planes(rule_planes=True)
    np.testing.assert_array_equal(a[0], b[0])  # own stones are the same stones ...
    assert not np.array_equal(a, b)             # ... but not the side to move


class Recorder:
    """A uniform evaluator that keeps every batch of planes it is shown, and says it reads the
    rule planes, as a kata network's evaluator does."""

    def __init__(self, config):
        self.config = config
        self.planes = []

    def __call__(self, planes, legal):
        self.planes.append(planes.copy())
        priors = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
        return priors.astype(np.float32), np.zeros(len(planes), np.float32)


@pytest.mark.parametrize("rule", ["standard", "renju"])
def test_the_search_leaves_carry_the_rule(rule, rng):
    cfg = GameConfig(width=9, rule=rule)
    model = ModelConfig.preset("tiny", 9, arch="kata")
    seen = Recorder(model)
    search = fit_to_evaluator(SearchConfig(num_simulations=30, leaves_per_tree=4), seen)
    assert search.rule_planes
    forest = Forest(cfg, search, 2, seed=3)
    plain = Forest(cfg, SearchConfig(num_simulations=30, leaves_per_tree=4), 2, seed=3)
    for i in range(2):
        pos = plausible_game(cfg, rng, 8)
        forest.reset(i, pos)
        plain.reset(i, pos)
    plain_seen = Recorder(None)
    forest.run(seen)
    plain.run(plain_seen)
    leaves = np.concatenate(seen.planes)
    assert leaves.shape[1] == NUM_PLANES + RULE_PLANES and len(leaves) > 20
    np.testing.assert_array_equal(leaves[:, :NUM_PLANES], np.concatenate(plain_seen.planes))
    for k, want in enumerate(RULE_PLANE_OF[rule]):
        assert np.all(leaves[:, NUM_PLANES + k] == want)


def test_a_search_that_omits_the_rule_is_refused():
    forest = Forest(GameConfig(width=9), SearchConfig(num_simulations=4), 1)
    forest.reset(0, Position(GameConfig(width=9)))
    with pytest.raises(ValueError, match="rule_planes True but this search writes False"):
        forest.check_evaluator(Recorder(ModelConfig.preset("tiny", 9, arch="kata")))


def test_training_batches_carry_the_rule(rng):
    cfg = GameConfig(width=9, rule="renju")
    games = [plausible_game(cfg, rng, int(rng.integers(4, 20))) for _ in range(20)]
    buffer = buffer_holding(cfg, games)
    batch = make_batch(buffer, np.arange(len(games)), None, cfg, rule_planes=True)
    for planes, pos in zip(batch.planes, games):
        np.testing.assert_array_equal(planes, pos.planes(rule_planes=True))


def test_the_forbidden_plane_matches_the_rule_kernels(rng):
    """On random renju positions, black to move: the plane marks exactly the empty points the
    rule kernels forbid (and nothing with white to move, or under another rule)."""
    lit = 0
    for rule in ("renju", "freestyle"):
        cfg = GameConfig(width=11, rule=rule)
        for _ in range(30):
            pos = plausible_game(cfg, rng, int(rng.integers(8, 40)))
            plane = pos.planes(rule_planes=True)[4].reshape(-1)
            want = np.array([pos.to_move == BLACK and rule == "renju" and pos.board[i] == 0
                             and kernels.is_forbidden(pos.board, 11, 11, i)
                             for i in range(cfg.area)], dtype=np.float32)
            np.testing.assert_array_equal(plane, want)
            lit += int(want.sum())
    assert lit > 0   # some positions had forbidden points


def test_black_never_plays_a_forbidden_point_under_renju(kata, rng):
    """The forbidden-point plane and the legal mask: the network's policy puts no weight on a
    point renju forbids to black, on positions where some are forbidden."""
    cfg = GameConfig(width=9, rule="renju")
    evaluator = Evaluator(PolicyValueNet(ModelConfig.preset("tiny", 9, arch="kata")).eval(), "cpu")
    # A double three for black at the centre (e5): two open twos crossing there.
    pos = Position.from_moves(["c5", "a1", "d5", "a9", "e3", "i1", "e4", "i9"], cfg)
    assert pos.to_move == BLACK and pos.is_forbidden("e5")
    planes = pos.planes(rule_planes=True)[None]
    legal = pos.legal_mask()[None]
    assert planes[0, 4].sum() > 0   # the forbidden plane marks it
    priors, _ = evaluator(planes, legal)
    assert priors[0, pos.index("e5")] == 0.0
    np.testing.assert_allclose(priors.sum(), 1.0, atol=1e-5)
    assert kernels.is_forbidden(pos.board, 9, 9, pos.index("e5"))


# -- the players and the engine on every board and rule ------------------------------------------

class FavouriteNet(KataNet):
    """A kata network whose policy all but insists on one point: a player built on it plays that
    point whenever it is legal, so a forbidden one shows whether the rule's mask holds."""

    favourite = 40  # e5 on 9x9

    def forward(self, x, all_heads=False):
        logits, values = super().forward(x, all_heads)
        bump = torch.zeros_like(logits)
        bump[..., self.favourite] = 50.0
        return logits + bump, values


def test_black_never_plays_a_forbidden_point_even_when_the_network_wants_it():
    from alphagomoku.eval.players import NetworkPlayer

    net = FavouriteNet(ModelConfig.preset("tiny", 9, arch="kata")).eval()
    moves = ["c5", "a1", "d5", "a9", "e3", "i1", "e4", "i9"]   # e5: a double three for black
    for rule, allowed in (("freestyle", True), ("renju", False)):
        game = GameConfig(width=9, rule=rule)
        player = NetworkPlayer(net, simulations=16, device="cpu")
        player.reset(game)
        pos = Position.from_moves(moves, game)
        assert pos.is_forbidden("e5") is not allowed
        move = player.choose(pos)
        assert (move == pos.index("e5")) is allowed, rule
        assert pos.legal_mask()[move]


@pytest.fixture(scope="module")
def kata_file(tmp_path_factory):
    from alphagomoku.nn.io import save_model

    path = tmp_path_factory.mktemp("kata") / "kata.pt"
    save_model(path, PolicyValueNet(ModelConfig.preset("tiny", 15, arch="kata")))
    return str(path)


def test_one_network_player_plays_every_board_and_rule(kata_file):
    from alphagomoku.eval.specs import check_player_spec, make_player

    player = make_player(f"net:{kata_file}:8", device="cpu")
    for size, rule in ((9, "freestyle"), (15, "standard"), (15, "renju"), (20, "freestyle")):
        game = GameConfig(width=size, rule=rule)
        check_player_spec(f"net:{kata_file}:8", game)
        player.reset(game)
        pos = Position.from_moves(["h8" if size >= 15 else "e5"], game)
        assert pos.legal_mask()[player.choose(pos)]


def test_the_engine_plays_start_20_and_every_rule_with_the_network(kata_file):
    from tests.test_engine import EngineSession, parse_move

    with EngineSession("--checkpoint", kata_file, "--simulations", "8", timeout=120) as eng:
        assert eng.ask("START 20") == "OK"
        assert any("every board from 5x5 to 22x22" in m and "rule" in m for m in eng.messages), \
            eng.messages
        assert any("player: net:" in m for m in eng.messages)
        x, y = parse_move(eng.ask("BEGIN"))
        assert 0 <= x < 20 and 0 <= y < 20
        for bits in (1, 4):
            eng.send(f"INFO rule {bits}")
            assert eng.ask("START 15") == "OK"
            x, y = parse_move(eng.ask("TURN 7,7"))
            assert (x, y) != (7, 7) and 0 <= x < 15 and 0 <= y < 15
        assert not any("pure MCTS" in m for m in eng.messages)
        # Renju, the engine black (as many stones as the opponent) with a double three at
        # (7,7): its answer is any point but that one.
        game = GameConfig(width=15, rule="renju")
        mine, theirs = ["f8", "g8", "h6", "h7"], ["a1", "a15", "o1", "o15"]
        pos = Position.from_moves([m for pair in zip(mine, theirs) for m in pair], game)
        assert pos.is_forbidden("h8")
        board = [f"{pos.index(m) % 15},{pos.index(m) // 15},{who}"
                 for stones, who in ((mine, 1), (theirs, 2)) for m in stones]
        for _ in range(3):
            x, y = parse_move(eng.ask("BOARD", *board, "DONE"))
            assert pos.legal_mask()[y * 15 + x] and not pos.is_forbidden((x, y))


def test_a_memory_limit_is_kept_on_the_board_being_played():
    """A kata network trained on 15x15 playing 20x20: the cache is sized for 20x20's larger
    entries, not the board it was trained on."""
    from alphagomoku.eval.players import NetworkPlayer
    from alphagomoku.nn.cache import entry_bytes

    player = NetworkPlayer(PolicyValueNet(ModelConfig.preset("tiny", 15, arch="kata")).eval(),
                           time_per_move=0.1, device="cpu")
    player.memory_bytes = 40 * 2**20   # half of it holds fewer answers than the cache's default
    sizes = {}
    for size in (15, 20):
        player.reset(GameConfig(width=size))
        sizes[size] = player.cache_capacity()
        assert sizes[size] == 20 * 2**20 // entry_bytes(size * size, player.model.config.num_planes)
    assert 0 < sizes[20] < sizes[15] < player.eval_cache
