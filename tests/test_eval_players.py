"""The players that search (pure MCTS, uniform PUCT, network + MCTS), in the arena and behind the
engine: tactics found by the search itself, leaves batched, time budgets kept and used, bad
weights reported."""

from __future__ import annotations

import time

import pytest

from alphagomoku.eval.arena import run_arena
from alphagomoku.eval.players import (
    BUDGET_SHARE,
    FIRST_CHUNK,
    MAX_STEP_S,
    PLAYER_EVAL_CACHE,
    NetworkPlayer,
    PureMCTSPlayer,
    TacticalPlayer,
    UniformMCTSPlayer,
    fill_budget,
)
from alphagomoku.eval.specs import DEFAULT_MODEL, make_player, search_settings
from alphagomoku.game import GameConfig, Position
from test_engine import EngineSession, board_command, parse_move

GAME9 = GameConfig(width=9)

# Black (to move) has four in row 4 (b5..e5) open at a5 and f5; white has four in column 8
# (i1..i4), open at i5: black must win at a5 or f5.
WIN = Position.from_moves(["b5", "i1", "c5", "i2", "d5", "i3", "e5", "i4"], GAME9)
# White (to move) must block black's four on the main diagonal (a9..d6) at e5.
BLOCK = Position.from_moves(["a9", "a1", "b8", "c1", "c7", "g1", "d6"], GAME9)


@pytest.fixture(scope="module")
def tiny_model_path(tmp_path_factory):
    import torch

    from alphagomoku.nn import PolicyValueNet, save_model
    from alphagomoku.nn.config import ModelConfig

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("model") / "tiny9.pt"
    save_model(path, PolicyValueNet(ModelConfig.preset("tiny", width=9)))
    return path


@pytest.mark.parametrize("player", [PureMCTSPlayer(300, seed=1), UniformMCTSPlayer(200)],
                         ids=["pure", "uniform"])
def test_search_players_find_the_win_and_the_block(player):
    player.reset(GAME9)
    assert WIN.name(player.choose(WIN.copy())) in ("a5", "f5")
    assert BLOCK.name(player.choose(BLOCK.copy())) == "e5"


def test_pure_mcts_keeps_to_its_time_budget_and_uses_most_of_it():
    player = PureMCTSPlayer(1_000_000, seed=2)
    player.reset(GameConfig(width=15))
    pos = Position.from_moves(["h8", "h9"], GameConfig(width=15))
    t0 = time.perf_counter()
    move = player.choose(pos, time_left_s=0.3)
    spent = time.perf_counter() - t0
    assert 0.2 < spent < 0.5
    assert pos.legal_mask()[move]


class SteppedClock:
    """Time moves only while a fake search runs: ``cost(done)`` seconds per simulation, where
    ``done`` is the simulations the search had before the step (a growing tree is slower)."""

    def __init__(self, cost):
        self.now = 0.0
        self.cost = cost
        self.steps = []
        self.done = 0

    def __call__(self):
        return self.now

    def step(self, n, more):
        self.done = self.done + n if more else n
        took = n * self.cost(self.done)
        self.steps.append((n, more, took))
        self.now += took
        return self.done


def test_fill_budget_continues_one_search_until_most_of_the_budget_is_spent():
    clock = SteppedClock(lambda done: 1e-5 * (1.0 + done / 20_000))  # slows down as it grows
    result = fill_budget(clock.step, 10_000_000, 1.0, clock=clock)
    assert clock.steps[0][:2] == (FIRST_CHUNK, False)
    assert all(more for _, more, _ in clock.steps[1:])  # one search, never started over
    assert result == clock.done == sum(n for n, _, _ in clock.steps)
    assert BUDGET_SHARE - 0.01 <= clock.now <= BUDGET_SHARE + 0.01
    # A step overruns its plan only by the slowdown since the step before (steep here).
    assert max(took for _, _, took in clock.steps) <= 1.2 * MAX_STEP_S


def test_fill_budget_stops_at_the_limit_and_makes_its_first_step_on_a_tiny_budget():
    clock = SteppedClock(lambda done: 1e-3)
    assert fill_budget(clock.step, 50, 10.0, clock=clock) == 50
    assert sum(n for n, _, _ in clock.steps) == 50 and clock.now < 1.0
    clock = SteppedClock(lambda done: 1e-3)
    assert fill_budget(clock.step, 10_000, 0.0, clock=clock) == FIRST_CHUNK
    assert [s[:2] for s in clock.steps] == [(FIRST_CHUNK, False)]
    with pytest.raises(ValueError, match="positive"):
        fill_budget(clock.step, 0, 1.0)


def test_uniform_player_opens_somewhere_new_with_each_seed():
    # Uniform priors and zero values give it no reason to prefer any point of an empty board;
    # it must not fall back on the first point in board order (the top-left corner).
    game = GameConfig(width=9)
    firsts = set()
    for seed in range(6):
        player = UniformMCTSPlayer(40, seed=seed)
        player.reset(game)
        firsts.add(player.choose(Position(game)))
    assert len(firsts) >= 4 and 0 not in firsts


@pytest.mark.parametrize("time_per_move", [None, 30.0], ids=["untimed", "timed"])
def test_network_player_batches_its_leaves(tiny_model_path, time_per_move):
    # 32 simulations: one batch for the root, then batches of 8 (the timed search stops at the
    # simulation cap long before its time). No reset(): it only warms up, with more batches.
    player = NetworkPlayer(tiny_model_path, simulations=32, time_per_move=time_per_move,
                           device="cpu")
    inner = player.evaluator
    batches = []

    def counting(planes, legal):
        batches.append(len(planes))
        return inner(planes, legal)

    player.evaluator = counting
    pos = Position.from_moves(["e5"], GAME9)
    assert pos.legal_mask()[player.choose(pos)]
    assert max(batches) == 8 and len(batches) <= 32 // 8 + 4


def test_network_player_plays_and_keeps_to_its_time(tiny_model_path):
    player = make_player(f"net:{tiny_model_path}:32", device="cpu")
    assert isinstance(player, NetworkPlayer) and player.name.endswith(":32")
    player.reset(GAME9)
    pos = Position.from_moves(["e5"], GAME9)
    assert pos.legal_mask()[player.choose(pos)]
    timed = NetworkPlayer(tiny_model_path, time_per_move=0.25, device="cpu")
    timed.reset(GAME9)
    t0 = time.perf_counter()
    assert pos.legal_mask()[timed.choose(pos)]
    assert time.perf_counter() - t0 < 0.5
    with pytest.raises(ValueError, match="plays 9x9 boards; this game is 15x15"):
        player.reset(GameConfig(width=15))


def test_a_timed_search_goes_on_with_its_tree_when_given_more_time(tiny_model_path):
    player = NetworkPlayer(tiny_model_path, time_per_move=0.2, device="cpu")
    player.reset(GAME9)
    pos = Position.from_moves(["e5"], GAME9)
    player.choose(pos)
    first = int(player.last_visits.sum())
    move = player.think_more(pos, 0.1)
    assert pos.legal_mask()[move] and int(player.last_visits.sum()) > first
    # Only the position its last search was of: another one, or an untimed search, says None.
    assert player.think_more(Position.from_moves(["e5", "e4"], GAME9), 0.1) is None
    capped = NetworkPlayer(tiny_model_path, simulations=16, time_per_move=30.0, device="cpu")
    capped.choose(pos)
    assert capped.last_visits.sum() == 16 - 1 and capped.think_more(pos, 0.1) is None  # full
    player.time_per_move = None
    player.simulations = 16
    player.choose(pos)
    assert player.think_more(pos, 0.1) is None


def test_a_network_from_a_file_runs_on_onnx_runtime_and_a_model_object_on_torch(tiny_model_path):
    from alphagomoku.nn.inference_backend import onnx_problem
    from alphagomoku.nn.evaluator import Evaluator

    from_file = NetworkPlayer(tiny_model_path, device="cpu", simulations=16)
    expected = "Evaluator" if onnx_problem() else "OnnxEvaluator"
    assert type(from_file.evaluator).__name__ == expected
    # A model object's weights may change between games under its caller: torch reads them live.
    live = NetworkPlayer(from_file.model, device="cpu", simulations=16)
    assert type(live.evaluator) is Evaluator
    assert type(NetworkPlayer(tiny_model_path, device="cpu", backend="torch").evaluator) \
        is Evaluator
    # The two runtimes give one network's answers: the same move from the same search.
    for player in (from_file, live):
        player.reset(GAME9)
    assert from_file.choose(BLOCK) == live.choose(BLOCK)


def test_players_of_one_process_share_the_network_of_an_unchanged_file(tiny_model_path, tmp_path):
    """A match's worker builds new players for every game; reading the same file again gives
    the network already read, and a rewritten file is read anew."""
    import os
    import shutil

    path = tmp_path / "net.pt"
    shutil.copy(tiny_model_path, path)
    first = NetworkPlayer(path, device="cpu", simulations=16)
    again = NetworkPlayer(path, device="cpu", simulations=16)
    assert again.model is first.model and again.evaluator is first.evaluator
    for player in (first, again):
        player.reset(GAME9)
    assert first.choose(BLOCK) == again.choose(BLOCK)
    assert NetworkPlayer(path, device="cpu", backend="torch").evaluator is not first.evaluator
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert NetworkPlayer(path, device="cpu", simulations=16).evaluator is not first.evaluator


def test_network_player_rejects_a_bad_weights_file(tmp_path):
    from alphagomoku.nn import CheckpointError

    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a model")
    with pytest.raises(CheckpointError):
        NetworkPlayer(bad, device="cpu")


def test_arena_network_against_pure_mcts_in_workers(tiny_model_path):
    result = run_arena(f"net:{tiny_model_path}:16", "pure:50", 2, GAME9, workers=1,
                       device="cpu", progress=False)
    assert len(result.records) == 2 and sum(result.counts()) == 2
    assert result.records[0].black.startswith("net:")


# -- the engine with searching players ----------------------------------------------------------------
def test_engine_move_time_stays_within_timeout_turn():
    with EngineSession("--player", "pure:1000000", "--no-tactics") as eng:
        assert eng.ask("START 15") == "OK"
        eng.send("INFO timeout_turn 1000")
        pos = Position(GameConfig(width=15))
        replies = []
        for mine in ["h8", "j10", "f6", "k4"]:
            pos.play(mine)
            x, y = pos.index(mine) % 15, pos.index(mine) // 15
            t0 = time.perf_counter()
            answer = eng.ask(f"TURN {x},{y}", timeout=5)
            replies.append(time.perf_counter() - t0)
            pos.play(parse_move(answer))
        assert max(replies) < 1.0, replies
        # It used most of its 0.79 s budget on the first move, which no search can prove won
        # or lost; later ones may end early, once a proved win has used up the playout cap.
        assert replies[0] > 0.5, replies


def test_engine_search_alone_finds_win_and_block():
    win = [(x, y, f) for x, y, f in [(1, 4, 1), (8, 8, 2), (2, 4, 1), (8, 7, 2), (3, 4, 1),
                                      (8, 6, 2), (4, 4, 1), (8, 5, 2)]]
    block = [(0, 0, 2), (0, 8, 1), (1, 1, 2), (2, 8, 1), (2, 2, 2), (6, 8, 1), (3, 3, 2)]
    with EngineSession("--player", "pure:400", "--no-tactics") as eng:
        eng.ask("START 9")
        assert parse_move(eng.ask(*board_command(win))) in {(0, 4), (5, 4)}
        assert parse_move(eng.ask(*board_command(block))) == (4, 4)


def test_engine_without_checkpoint_uses_the_shipped_model_or_says_pure_mcts():
    with EngineSession() as eng:
        assert eng.ask("START 9") == "OK"
        parse_move(eng.ask("BEGIN"))
        text = " ".join(eng.messages)
        if DEFAULT_MODEL.is_file():
            assert "player: net:" in text
        else:
            assert "playing pure MCTS" in text and str(DEFAULT_MODEL) in text


def test_engine_with_a_checkpoint(tiny_model_path, tmp_path):
    from alphagomoku.nn.inference_backend import onnx_problem

    with EngineSession("--checkpoint", str(tiny_model_path), "--device", "cpu") as eng:
        assert eng.ask("START 15").startswith("ERROR") and "9x9" in eng.answers[-1]
        assert eng.ask("START 9") == "OK"
        runtime = "torch (cpu)" if onnx_problem() else "ONNX Runtime (cpu, fp32)"
        assert f"MESSAGE network on {runtime}" in eng.messages
        eng.send("INFO timeout_turn 300")
        x, y = parse_move(eng.ask("BEGIN"))
        assert 0 <= x < 9 and 0 <= y < 9
    with EngineSession("--checkpoint", str(tiny_model_path), "--device", "cpu",
                       "--inference-backend", "torch") as eng:
        assert eng.ask("START 9") == "OK"
        assert "MESSAGE network on torch (cpu)" in eng.messages
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00" * 10)
    with EngineSession("--checkpoint", str(bad)) as eng:
        answer = eng.ask("START 9")
        assert answer.startswith("ERROR cannot set up the player: CheckpointError")
        assert eng.ask("ABOUT").startswith("name=")


def test_board_fallback_plays_the_network_on_its_board_and_the_fallback_elsewhere(tiny_model_path):
    from alphagomoku.eval.players import BoardFallbackPlayer, NetworkPlayer, RandomPlayer

    net = NetworkPlayer(tiny_model_path, simulations=8, device="cpu")
    player = BoardFallbackPlayer(net, RandomPlayer(seed=1))
    size = net.model.config.width
    player.reset(GameConfig(width=size))
    assert player.active is net and player.name == net.name
    other = GameConfig(width=size + 2)
    player.reset(other)
    assert player.active is player.fallback and player.name == "random"
    assert Position(other).legal_mask()[player.choose(Position(other))]


def _replay_with(player, evaluator, plies: int) -> list[int]:
    """The moves ``player`` chooses for both sides from e5, after a reset()."""
    player.evaluator = evaluator
    player.reset(GAME9)
    pos = Position.from_moves(["e5"], GAME9)
    for _ in range(plies):
        pos.play(player.choose(pos))
    return pos.moves


def test_network_player_evaluates_a_position_once_a_game_and_plays_the_same(tiny_model_path):
    """Each move's search starts a new tree; the evaluation cache answers what the searches
    before it evaluated, and reset() empties it (the weights may have changed)."""
    from test_nn_cache import CountingNet

    plain, cached = CountingNet(), CountingNet()
    without = _replay_with(NetworkPlayer(tiny_model_path, simulations=64, device="cpu",
                                         eval_cache=0), plain, 8)
    player = NetworkPlayer(tiny_model_path, simulations=64, device="cpu")
    assert player.eval_cache == PLAYER_EVAL_CACHE
    assert _replay_with(player, cached, 8) == without
    assert len(set(cached.seen)) == len(cached.seen) < 0.8 * len(plain.seen)
    once = len(cached.seen)
    assert _replay_with(player, cached, 8) == without
    assert len(cached.seen) == 2 * once  # a new game: nothing kept from the last one


@pytest.mark.parametrize("size", [-1, 1.5, True])
def test_network_player_refuses_an_eval_cache_that_cannot_work(tiny_model_path, size):
    with pytest.raises(ValueError, match="eval_cache"):
        NetworkPlayer(tiny_model_path, device="cpu", eval_cache=size)


def test_a_memory_limit_is_shared_by_the_cache_and_the_timed_tree(tiny_model_path):
    from alphagomoku.eval.players import MAX_TIMED_SIMULATIONS, MIN_TREE_NODES, limit_memory
    from alphagomoku.mcts.tree import node_bytes
    from alphagomoku.nn.cache import entry_bytes

    area = GAME9.area
    player = NetworkPlayer(tiny_model_path, time_per_move=30.0, device="cpu")
    entry = entry_bytes(area, player.model.config.num_planes)
    wrapped = TacticalPlayer(player, vcf=False, vct=False)
    # Half for the cache, the rest for a tree of 1,500 nodes.
    cached = 1500 * node_bytes(area) // entry
    limit = 1500 * node_bytes(area) + cached * entry
    limit_memory(wrapped, limit)
    assert player.memory_bytes == limit
    wrapped.reset(GAME9)
    assert player.cache_capacity() == cached
    pos = Position.from_moves(["e5"], GAME9)
    t0 = time.perf_counter()
    assert pos.legal_mask()[wrapped.choose(pos)]
    assert time.perf_counter() - t0 < 10  # the tree's cap ended the search, not the 30 s
    assert player.last_visits.sum() == 1500 - 1
    assert player.cache.capacity == cached and 0 < len(player.cache) <= cached
    limit_memory(wrapped, 0)  # nothing left: the smallest tree worth searching, and no cache
    wrapped.choose(pos)
    assert player.last_visits.sum() == MIN_TREE_NODES - 1 and player.cache_capacity() == 0
    # Without a cache the tree takes it all.
    limit_memory(wrapped, 1200 * node_bytes(area))
    player.eval_cache = 0
    wrapped.choose(pos)
    assert player.last_visits.sum() == 1200 - 1 and player.cache_capacity() == 0
    # Room to spare: the whole cache, and the tree up to the most simulations.
    player.eval_cache = PLAYER_EVAL_CACHE
    limit_memory(wrapped, 10**12)
    assert player.cache_capacity() == PLAYER_EVAL_CACHE
    assert player._limit(1.0, area) == MAX_TIMED_SIMULATIONS
    limit_memory(wrapped, None)
    assert player.cache_capacity() == PLAYER_EVAL_CACHE
    assert player._limit(1.0, area) == MAX_TIMED_SIMULATIONS


def test_a_memory_limit_bounds_the_pure_mcts_tree():
    from alphagomoku.eval.players import limit_memory
    from alphagomoku.mcts.tree import node_bytes

    player = PureMCTSPlayer(playouts=10**6, time_per_move=30.0)
    limit_memory(player, 2000 * node_bytes(GAME9.area))
    player.reset(GAME9)
    pos = Position.from_moves(["e5"], GAME9)
    t0 = time.perf_counter()
    assert pos.legal_mask()[player.choose(pos)]
    assert time.perf_counter() - t0 < 10
    assert player._mcts.playouts == 2000


# -- search settings -----------------------------------------------------------------------------
def test_search_settings_take_each_field_in_its_type():
    got = search_settings(["c_puct=2", "leaves_per_tree=4", "vcf_root_budget=none",
                           " fpu_reduction = 0.1 "])
    assert got == {"c_puct": 2.0, "leaves_per_tree": 4, "vcf_root_budget": None,
                   "fpu_reduction": 0.1}
    assert isinstance(got["c_puct"], float) and isinstance(got["leaves_per_tree"], int)
    assert search_settings([]) == {}


@pytest.mark.parametrize("items, spec, words", [
    (["c_puct"], None, "write KEY=VALUE"),
    (["cpuct=2"], None, "no setting named 'cpuct'"),
    (["num_simulations=50"], None, "set by the player spec or the network"),
    (["vcf_plane_budget=100"], None, "set by the player spec or the network"),
    (["leaves_per_tree=two"], None, "leaves_per_tree takes int"),
    (["c_puct=-1"], None, "c_puct must be in (0.0, inf)"),
    (["dirichlet_eps=1.5"], None, "dirichlet_eps must be in [0.0, 1.0]"),
    (["root_rule=gumbel"], None, "belongs to self-play's Gumbel root"),
    (["c_puct=2"], "pure:100", "for network players, not 'pure:100'"),
    (["c_puct=2"], "vct:random", "for network players, not 'vct:random'"),
])
def test_search_settings_refuse_what_no_network_player_can_take(items, spec, words):
    with pytest.raises(ValueError) as e:
        search_settings(items, spec)
    assert words in str(e.value)


def test_a_network_player_searches_with_its_settings_and_the_match_names_them(tiny_model_path):
    spec = f"vct:net:{tiny_model_path}:16"
    player = make_player(spec, device="cpu", search={"c_puct": 3.0, "fpu_reduction": 0.0})
    config = player.inner.search_config
    assert (config.c_puct, config.fpu_reduction) == (3.0, 0.0)
    assert config.vct_leaf_budget > 0  # the solvers' settings are added to the given ones
    assert make_player(spec, device="cpu").inner.search_config.c_puct == 1.25
    with pytest.raises(ValueError, match="for network players"):
        make_player("pure:10", search={"c_puct": 3.0})

    result = run_arena(spec, spec, 2, GAME9, workers=0, search_a={"c_puct": 3.0}, progress=False)
    assert result.player_a == f"{spec} [c_puct=3.0]" and result.player_b == spec
    names = {result.records[0].black, result.records[0].white}
    assert names == {f"{spec} [c_puct=3.0]", spec}
