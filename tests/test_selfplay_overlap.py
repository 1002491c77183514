"""Overlapped batches: a worker's games in groups, one batch in flight per group.

The overlapped loop must play the same games as the plain one (one group) for the same seeds,
whatever the search; the stand-in device must show the overlap in the time spent waiting for
it; the evaluation cache must answer through submit/collect as it does when called.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from alphagomoku.game import GameConfig
from alphagomoku.mcts import SearchConfig
from alphagomoku.nn import ModelConfig
from alphagomoku.nn.cache import EvaluationCache
from alphagomoku.nn.inflight import Ready, can_overlap, submit
from alphagomoku.nn.simulated import SimulatedDevice, parse_simulated_device, refuse_in_training
from alphagomoku.selfplay.game_loop import SelfPlaySettings, play_games
from alphagomoku.selfplay.openings import OpeningSettings

GAME = GameConfig(width=9)


def device(vcf: int = 0, launch_ms: float = 0.0, per_us: float = 0.0) -> SimulatedDevice:
    return SimulatedDevice(ModelConfig.preset("tiny", GAME.width, vcf_plane_budget=vcf),
                           launch_ms, per_us)


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert np.array_equal(x.moves, y.moves)
        assert np.array_equal(x.policies, y.policies)
        assert np.array_equal(x.root_values, y.root_values)
        assert np.array_equal(x.move_values, y.move_values)
        assert np.array_equal(x.full_search, y.full_search)
        assert (x.result, x.opening, x.resigned, x.vcf_ended) == \
            (y.result, y.opening, y.resigned, y.vcf_ended)


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
@pytest.mark.parametrize("cache", [0, 4096])
@pytest.mark.parametrize("vcf", [0, 100])
def test_overlapped_groups_play_the_same_games_as_the_plain_loop(rule, cache, vcf):
    search = SearchConfig(num_simulations=12, root_rule=rule, gumbel_m=6,
                          dirichlet_eps=0.25 if rule == "puct" else 0.0, vcf_plane_budget=vcf)
    base = dict(games_at_once=6, eval_cache=cache, openings=OpeningSettings(share=0.5),
                full_search_share=0.5, fast_simulations=4, vcf_end_budget=200)
    plain, plain_stats = play_games(device(vcf), GAME, search, SelfPlaySettings(**base), 9,
                                    seed=7)
    assert plain_stats["groups"] == 1
    for groups in (2, 3):
        records, stats = play_games(device(vcf), GAME, search,
                                    SelfPlaySettings(**base, groups=groups), 9, seed=7)
        assert stats["groups"] == groups
        _same(plain, records)
        # Each group sends its own batches: more, smaller calls for the same evaluations.
        assert stats["steps"] > plain_stats["steps"]
        if not cache:
            assert stats["evaluations"] == plain_stats["evaluations"]


def test_groups_with_a_plain_callable_play_the_same_games():
    search = SearchConfig(num_simulations=10, root_rule="gumbel", gumbel_m=4)
    ev = device()

    def plain(planes, legal):  # no submit: answered at once
        return ev.answer(planes, legal)

    plain.config = ev.config
    assert not can_overlap(plain) and can_overlap(ev)
    a, _ = play_games(plain, GAME, search, SelfPlaySettings(games_at_once=4, groups=2), 6, seed=2)
    b, _ = play_games(ev, GAME, search, SelfPlaySettings(games_at_once=4), 6, seed=2)
    _same(a, b)


def test_more_groups_than_games_are_as_many_groups_as_games():
    search = SearchConfig(num_simulations=6, root_rule="gumbel", gumbel_m=4)
    _, stats = play_games(device(), GAME, search, SelfPlaySettings(games_at_once=2, groups=4), 2,
                          seed=0)
    assert stats["groups"] == 2


def test_staggered_games_start_their_first_searches_a_round_apart():
    search = SearchConfig(num_simulations=8, root_rule="gumbel", gumbel_m=4)
    ev = device()
    sizes = []

    def recording(planes, legal):
        sizes.append(len(planes))
        return ev.answer(planes, legal)

    recording.config = ev.config
    settings = SelfPlaySettings(games_at_once=6, eval_cache=0, stagger=3)
    staggered, _ = play_games(recording, GAME, search, settings, 6, seed=4)
    # Slots 0 and 3 start in round 0, 1 and 4 join in round 1, 2 and 5 in round 2.
    assert sizes[:3] == [2, 4, 6]
    sizes.clear()
    play_games(recording, GAME, search, dataclasses.replace(settings, stagger=0), 6, seed=4)
    assert sizes[0] == 6
    # None staggers over the search's length; the games are whole either way.
    sizes.clear()
    default, _ = play_games(recording, GAME, search, dataclasses.replace(settings, stagger=None),
                            6, seed=4)
    assert sizes[:2] == [1, 2] and len(default) == len(staggered) == 6
    with pytest.raises(ValueError, match="stagger"):
        SelfPlaySettings(stagger=-1)


class _Worked:
    """The stand-in device behind a fixed CPU-side cost per position, paid when a batch is
    submitted (a stand-in for the tree work and planes of those positions), that counts the
    time the loop spends waiting for answers. Sleeping makes the work independent of this
    machine's speed."""

    def __init__(self, device, per_position_s):
        self.device, self.per_position, self.config = device, per_position_s, device.config
        self.overlaps = True
        self.waited = 0.0

    def submit(self, planes, legal):
        time.sleep(self.per_position * len(planes))
        return _Waited(self.device.submit(planes, legal), self)

    def __call__(self, planes, legal):
        return self.submit(planes, legal).result()


class _Waited:
    def __init__(self, handle, owner):
        self.handle, self.owner = handle, owner

    def result(self):
        t0 = time.perf_counter()
        try:
            return self.handle.result()
        finally:
            self.owner.waited += time.perf_counter() - t0


def test_two_groups_wait_far_less_for_a_launch_bound_device():
    # 8 games: a full step's "tree work" is 8 x 8 ms and its call 20 ms. One group waits out
    # each call after its work; with two, one group's 32 ms of work runs while the other's
    # 20 ms call is on the device, so its answer is there when asked for (batches of one to
    # three positions, as games start and end, still wait a little: half the waiting is left
    # here). The waiting is what is bounded tightly: a loaded machine stretches the work, which
    # only shortens the waits, where the wall time's ratio drifts towards 1
    # (scripts/benchmark.py selfplay --simulated-device measures the wall time).
    game = GameConfig(width=7, n_in_row=4)
    search = SearchConfig(num_simulations=4, root_rule="gumbel", gumbel_m=4)
    cfg = ModelConfig.preset("tiny", game.width)
    play_games(SimulatedDevice(cfg, 0, 0), game, search, SelfPlaySettings(games_at_once=8,
               groups=2), 1, seed=1)  # compiled before the clock starts
    waited, busy, wall = {}, {}, {}
    for groups in (1, 2):
        dev = SimulatedDevice(cfg, 20.0, 0.0)
        worked = _Worked(dev, 0.008)
        t0 = time.perf_counter()
        play_games(worked, game, search,
                   SelfPlaySettings(games_at_once=8, groups=groups, eval_cache=0), 8, seed=1)
        wall[groups] = time.perf_counter() - t0
        waited[groups] = worked.waited
        busy[groups] = dev.busy_seconds
    # Two groups make more calls (as long each), yet wait less than one group.
    assert busy[2] > 1.3 * busy[1]
    assert waited[1] > 0.8 * busy[1], waited
    assert waited[2] < 0.75 * waited[1], waited
    # The coarse bound on the wall time: the second of waiting saved is several times what the
    # search's own CPU time (about 0.2 s here) can grow by on a loaded machine.
    assert wall[2] < wall[1], wall


def test_the_simulated_device_answers_by_row_and_waits_without_a_core():
    ev = device(launch_ms=30.0, per_us=1000.0)
    rng = np.random.default_rng(0)
    planes = (rng.random((5, 5, 9, 9)) < 0.3).astype(np.float32)
    legal = rng.random((5, 81)) < 0.8
    p, v = ev.answer(planes, legal)
    assert p.shape == (5, 81) and v.shape == (5,) and (p[~legal] == 0).all()
    assert (p[legal] > 0).all() and (np.abs(v) <= 0.9).all()
    p2, v2 = ev.answer(planes[2:4], legal[2:4])
    assert np.array_equal(p2, p[2:4]) and np.array_equal(v2, v[2:4])
    cpu0, t0 = time.process_time(), time.perf_counter()
    h1 = ev.submit(planes, legal)
    h2 = ev.submit(planes[:1], legal[:1])
    assert time.perf_counter() - t0 < 0.02  # submit does not wait
    h2.result()
    wall = time.perf_counter() - t0
    # Two calls one after the other: 30 + 5 ms, then 30 + 1 ms, slept rather than spun.
    assert wall >= 0.066 and time.process_time() - cpu0 < 0.5 * wall
    assert np.array_equal(h1.result()[0], p)
    assert ev.calls == 2 and ev.positions == 6


def test_simulated_device_flag_and_refusal_in_training():
    assert parse_simulated_device("1,1.5") == (1.0, 1.5)
    for bad in ("1", "a,b", "-1,2", "1,2,3"):
        with pytest.raises(ValueError):
            parse_simulated_device(bad)
    with pytest.raises(ValueError, match="measuring tool"):
        refuse_in_training({"simulated_device": "1,1.5"})
    from alphagomoku.train.config import ConfigError, TrainConfig

    with pytest.raises(ConfigError, match="measuring tool"):
        TrainConfig.from_dict({"simulated_device": "1,1.5"})


def test_a_plain_evaluator_gets_a_trivial_submit():
    calls = []

    def ev(planes, legal):
        calls.append(len(planes))
        return np.ones((len(planes), 81), np.float32), np.zeros(len(planes), np.float32)

    h = submit(ev, np.zeros((3, 5, 9, 9), np.float32), np.ones((3, 81), bool))
    assert isinstance(h, Ready) and calls == [3] and h.result()[0].shape == (3, 81)


def test_the_cache_answers_through_submit_as_through_a_call():
    ev = device(launch_ms=1.0)
    rng = np.random.default_rng(3)
    planes = (rng.random((6, 5, 9, 9)) < 0.3).astype(np.float32)
    planes[4] = planes[1]
    legal = np.ones((6, 81), bool)
    cache = EvaluationCache(ev, 100)
    assert cache.overlaps
    first = cache.submit(planes[:3], legal[:3])
    second = cache.submit(planes, legal)  # rows 0-2 are still in flight: asked again
    p, v = second.result()
    p0, v0 = first.result()
    want_p, want_v = ev.answer(planes, legal)
    assert np.array_equal(p, want_p) and np.array_equal(v, want_v)
    assert np.array_equal(p0, want_p[:3])
    assert cache.misses == 3 + 5 and cache.hits == 1  # row 4 repeats row 1 in one batch
    third = cache.submit(planes, legal)
    assert isinstance(third, Ready) and np.array_equal(third.result()[1], want_v)


def test_groups_default_to_two_on_cuda_and_one_elsewhere():
    from alphagomoku.train.config import ConfigError, TrainConfig
    from alphagomoku.train.selfplay_epoch import selfplay_groups

    cfg = TrainConfig()
    assert cfg.selfplay_groups == 0 and cfg.cuda_graphs == "auto"
    assert selfplay_groups(cfg, "cuda") == 2 and selfplay_groups(cfg, "cpu") == 1
    assert selfplay_groups(TrainConfig(selfplay_groups=3), "cpu") == 3
    with pytest.raises(ConfigError, match="cuda-graphs"):
        TrainConfig(cuda_graphs="sometimes")
