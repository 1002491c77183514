"""The evaluation cache: exact answers, each position evaluated once, a bounded size, and the
same self-play games with it as without it."""

from __future__ import annotations

import numpy as np
import pytest

from alphagomoku.game import GameConfig, Position
from alphagomoku.mcts import SearchConfig
from alphagomoku.nn.cache import EvaluationCache
from alphagomoku.selfplay.game_loop import SelfPlaySettings, play_games

GAME = GameConfig(width=7)


class CountingNet:
    """A deterministic stand-in network: its answer is a function of the input alone, and it
    remembers every position it was asked about."""

    config = None

    def __init__(self):
        self.seen: list[bytes] = []

    def __call__(self, planes, legal):
        self.seen.extend(p.tobytes() for p in planes)
        flat = planes.reshape(len(planes), int(np.prod(planes.shape[1:])))
        weights = np.arange(1, flat.shape[1] + 1, dtype=np.float64)
        code = (flat * weights).sum(axis=1)
        priors = (np.sin(np.outer(code, np.arange(1, legal.shape[1] + 1))) + 1.0) * legal
        values = np.tanh(np.cos(code))
        return priors.astype(np.float32), values.astype(np.float32)


def _positions(moves_list):
    planes, legal = [], []
    for moves in moves_list:
        p = Position.from_moves(moves, GAME)
        planes.append(p.planes())
        legal.append(p.legal_mask())
    return np.stack(planes).astype(np.float32), np.stack(legal)


def test_answers_are_the_networks_and_each_position_is_evaluated_once():
    net = CountingNet()
    cache = EvaluationCache(net, capacity=100)
    lines = [[24], [24, 25], [24], [24, 25, 17], [24, 25]]  # repeats inside one batch
    planes, legal = _positions(lines)
    priors, values = cache(planes, legal)
    want_p, want_v = CountingNet()(planes, legal)
    np.testing.assert_array_equal(priors, want_p)
    np.testing.assert_array_equal(values, want_v)
    assert len(net.seen) == 3 and (cache.hits, cache.misses) == (2, 3)

    # A later batch: the known positions come from the cache, in the order asked.
    planes2, legal2 = _positions([[24, 25, 17], [10], [24]])
    priors2, values2 = cache(planes2, legal2)
    want_p2, want_v2 = CountingNet()(planes2, legal2)
    np.testing.assert_array_equal(priors2, want_p2)
    np.testing.assert_array_equal(values2, want_v2)
    assert len(net.seen) == 4 and (cache.hits, cache.misses) == (4, 4)


def test_a_batch_answered_wholly_from_the_cache_needs_no_network():
    net = CountingNet()
    cache = EvaluationCache(net, capacity=10)
    planes, legal = _positions([[24], [24, 25]])
    first = cache(planes, legal)
    again = cache(planes[::-1].copy(), legal[::-1].copy())
    assert len(net.seen) == 2
    np.testing.assert_array_equal(again[0], first[0][::-1])
    np.testing.assert_array_equal(again[1], first[1][::-1])
    assert again[1].dtype == np.float32


def test_the_least_recently_used_answer_goes_first():
    net = CountingNet()
    cache = EvaluationCache(net, capacity=2)
    a, b, c = (_positions([m]) for m in ([24], [24, 25], [10]))
    cache(*a)
    cache(*b)
    cache(*a)  # a is now the more recently used
    cache(*c)  # evicts b
    assert len(cache) == 2 and len(net.seen) == 3
    cache(*a)
    assert len(net.seen) == 3
    cache(*b)
    assert len(net.seen) == 4


def test_what_the_caller_does_to_an_answer_does_not_change_the_cache():
    cache = EvaluationCache(CountingNet(), capacity=10)
    planes, legal = _positions([[24]])
    priors, values = cache(planes, legal)
    kept = priors.copy()
    priors[:] = 0.0  # a caller that normalises in place
    np.testing.assert_array_equal(cache(planes, legal)[0], kept)


def test_planes_with_other_values_than_0_and_1_pass_through_and_are_never_kept():
    """Bits key this project's planes; other inputs go to the network every time."""
    net = CountingNet()
    cache = EvaluationCache(net, capacity=10)
    planes, legal = _positions([[24], [24]])
    planes[1, 0, 0, 0] = 0.5
    planes[0, 0, 0, 0] = 0.25
    first = cache(planes, legal)
    np.testing.assert_array_equal(first[0], CountingNet()(planes, legal)[0])
    assert len(net.seen) == 2 and len(cache) == 0
    planes2 = planes.copy()
    planes2[1, 0, 0, 0] = 0.75
    second = cache(planes2, legal)
    assert len(net.seen) == 4 and (cache.hits, cache.misses) == (0, 4)
    np.testing.assert_array_equal(second[0][0], first[0][0])
    assert not np.array_equal(second[0][1], first[0][1])


def test_the_legal_mask_is_part_of_the_key():
    net = CountingNet()
    cache = EvaluationCache(net, capacity=10)
    planes, legal = _positions([[24], [24]])
    legal[1, 0] = False  # the same stones, another rule's forbidden point
    priors, _ = cache(planes, legal)
    assert len(net.seen) == 2 and priors[1, 0] == 0 and priors[0, 0] > 0


def _words_twin(planes, legal):
    """The keys in plain numpy: the compiled packing's slow twin (None for non-0/1 planes)."""
    n = len(planes)
    flat = planes.reshape(n, -1)
    if not ((flat == 0) | (flat == 1)).all():
        return None
    rows = np.concatenate([np.packbits(flat != 0, axis=1),
                           np.packbits(legal.reshape(n, -1) != 0, axis=1)], axis=1)
    pad = -rows.shape[1] % 8
    return np.concatenate([rows, np.zeros((n, pad), np.uint8)], axis=1).view(np.uint64)


@pytest.mark.parametrize("shape", [(5, 7, 15, 15), (3, 9, 9, 9), (4, 5, 6, 7), (1, 2, 3, 3)])
def test_the_compiled_keys_equal_the_numpy_ones(shape):
    from alphagomoku.nn.cache_keys import key_words

    rng = np.random.default_rng(sum(shape))
    n, area = shape[0], shape[2] * shape[3]
    planes = (rng.random(shape) < 0.3).astype(np.float32)
    legal = rng.random((n, area)) < 0.8
    np.testing.assert_array_equal(key_words(planes, legal), _words_twin(planes, legal))
    assert len({w.tobytes() for w in key_words(planes, legal)}) == len(
        {p.tobytes() + m.tobytes() for p, m in zip(planes, legal)})
    np.testing.assert_array_equal(key_words(planes.astype(np.float64), legal),
                                  _words_twin(planes, legal))
    planes[-1, 0, 0, 0] = 0.5  # not a 0/1 plane: no key
    assert key_words(planes, legal) is None and _words_twin(planes, legal) is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_compiled_table_keeps_and_drops_what_its_python_twin_does(seed):
    """Random batches from a small pool of positions (repeats inside batches and across them),
    a capacity that evicts, lowered and raised on the way: the same answers, hits, misses and
    network calls as the OrderedDict twin."""
    from reference_cache import ReferenceCache

    rng = np.random.default_rng(seed)
    pool_planes, pool_legal = _positions([[int(m) for m in rng.choice(49, k, replace=False)]
                                          for k in rng.integers(1, 6, 40)])
    fast_net, twin_net = CountingNet(), CountingNet()
    fast, twin = EvaluationCache(fast_net, 12), ReferenceCache(twin_net, 12)
    for step in range(60):
        if step in (20, 40):
            capacity = 5 if step == 20 else 30
            fast.capacity = capacity
            twin.capacity = capacity
        rows = rng.integers(0, len(pool_planes), int(rng.integers(1, 10)))
        got = fast(pool_planes[rows], pool_legal[rows])
        want = twin(pool_planes[rows], pool_legal[rows])
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert (fast.hits, fast.misses) == (twin.hits, twin.misses)
        assert fast_net.seen == twin_net.seen and len(fast) == len(twin.answers)
    assert fast.hits > 50 and fast.misses > 50


def test_an_empty_batch_passes_through():
    net = CountingNet()
    cache = EvaluationCache(net, capacity=10)
    planes, legal = _positions([[24]])
    priors, values = cache(planes[:0], legal[:0])
    assert priors.shape == (0, GAME.area) and values.shape == (0,)


@pytest.mark.parametrize("capacity", [0, -3, 2.5, True, "8"])
def test_a_capacity_that_cannot_work_is_refused(capacity):
    with pytest.raises(ValueError, match="capacity"):
        EvaluationCache(CountingNet(), capacity)


def test_the_cache_keeps_the_networks_config_for_the_search_check():
    class Net(CountingNet):
        config = object()

    net = Net()
    assert EvaluationCache(net, 4).config is net.config


@pytest.mark.parametrize("root_rule", ["gumbel", "puct"])
def test_self_play_plays_the_same_games_with_fewer_evaluations(root_rule):
    search = SearchConfig(num_simulations=16, root_rule=root_rule, gumbel_m=8,
                          dirichlet_eps=0.0 if root_rule == "gumbel" else 0.25)
    records = {}
    stats = {}
    nets = {}
    for size in (0, 4096):
        nets[size] = CountingNet()
        settings = SelfPlaySettings(games_at_once=4, eval_cache=size)
        records[size], stats[size] = play_games(nets[size], GAME, search, settings, 6, seed=5)
    for a, b in zip(records[0], records[4096]):
        np.testing.assert_array_equal(a.moves, b.moves)
        np.testing.assert_array_equal(a.policies, b.policies)
        np.testing.assert_array_equal(a.root_values, b.root_values)
    hits = stats[4096]["cache_hits"]
    assert stats[0]["cache_hits"] == 0 and hits > 0
    assert len(nets[4096].seen) == stats[4096]["cache_misses"]
    assert len(nets[4096].seen) + hits == len(nets[0].seen)
    assert len(set(nets[4096].seen)) == len(nets[4096].seen)  # nothing evaluated twice


def test_self_play_settings_refuse_a_negative_cache():
    with pytest.raises(ValueError, match="eval_cache"):
        SelfPlaySettings(eval_cache=-1)


def test_the_memory_estimate_of_a_kept_answer_is_what_the_cache_takes():
    import tracemalloc

    from alphagomoku.nn.cache import entry_bytes

    rng = np.random.default_rng(0)
    area, planes_n, n = 15 * 15, 7, 3000

    def net(planes, legal):
        return np.full(legal.shape, 1.0 / area, np.float32), np.zeros(len(planes), np.float32)

    cache = EvaluationCache(net, n)
    batches = [((rng.random((15, planes_n, 15, 15)) < 0.3).astype(np.float32),
                np.ones((15, area), np.bool_)) for _ in range(n // 15)]
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for planes, legal in batches:
        cache(planes, legal)
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(cache) == n
    assert 0.85 < entry_bytes(area, planes_n) / (used / n) < 1.15
