"""SearchConfig validation, visit counts -> policies and moves, noise sampling, c(s)."""

import math

import numpy as np
import pytest

from alphagomoku.mcts import (
    SearchConfig,
    TemperatureSchedule,
    select_move,
    uniform_evaluator,
    visit_policy,
)
from alphagomoku.mcts.noise import dirichlet_into
from alphagomoku.mcts.tree import exploration_table


@pytest.mark.parametrize(
    "field, bad",
    [
        ("num_simulations", 0), ("num_simulations", 2.5), ("num_simulations", True),
        ("c_puct", 0.0), ("c_puct", float("nan")), ("c_base", -1.0), ("fpu_reduction", -0.1),
        ("dirichlet_alpha", 0.0), ("dirichlet_eps", 1.5), ("leaves_per_tree", 0),
        ("virtual_loss", -1.0), ("root_fpu_reduction", -0.1), ("root_fpu_reduction", 2.5),
    ],
)
def test_search_config_rejects_bad_values_naming_the_field(field, bad):
    with pytest.raises(ValueError, match=field):
        SearchConfig(**{field: bad})


def test_search_config_rejects_unknown_fields_and_replace_validates():
    with pytest.raises(TypeError):
        SearchConfig(simulations=10)
    cfg = SearchConfig().replace(num_simulations=50, dirichlet_eps=0.25)
    assert (cfg.num_simulations, cfg.dirichlet_eps) == (50, 0.25)
    with pytest.raises(ValueError, match="leaves_per_tree"):
        SearchConfig().replace(leaves_per_tree=-2)


def test_root_first_play_reduction_defaults_to_the_inner_one():
    assert SearchConfig(fpu_reduction=0.4).root_fpu == 0.4
    assert SearchConfig(fpu_reduction=0.4, root_fpu_reduction=0.0).root_fpu == 0.0


def test_visit_policy_temperatures():
    visits = np.array([0, 3, 1, 6, 0], dtype=np.int32)
    p1 = visit_policy(visits, 1.0)
    assert p1.dtype == np.float32
    np.testing.assert_allclose(p1, visits / 10.0, rtol=1e-6)
    p_half = visit_policy(visits, 0.5)  # squares the counts
    np.testing.assert_allclose(p_half, visits ** 2 / (visits ** 2).sum(), rtol=1e-6)
    np.testing.assert_array_equal(visit_policy(visits, 0.0), [0, 0, 0, 1, 0])
    # Ties at T = 0 go to the lowest index; tiny temperatures do not overflow.
    np.testing.assert_array_equal(visit_policy([5, 2, 5], 0.0), [1, 0, 0])
    sharp = visit_policy(np.array([800, 799, 1]), 1e-3)
    assert np.isfinite(sharp).all() and sharp[0] > 0.5 and abs(sharp.sum() - 1) < 1e-6


@pytest.mark.parametrize("visits, temperature, message", [
    ([0, 0, 0], 1.0, "all zero"), ([1, -1], 1.0, "non-negative"), ([[1, 2]], 1.0, "1-D"),
    ([1, 2], -1.0, "temperature"), ([1, 2], float("inf"), "temperature"),
])
def test_visit_policy_rejects_bad_input(visits, temperature, message):
    with pytest.raises(ValueError, match=message):
        visit_policy(visits, temperature)


def test_select_move_greedy_breaks_ties_with_rng_and_samples_by_visits():
    rng = np.random.default_rng(0)
    ties = {select_move([4, 0, 4, 1], 0.0, rng) for _ in range(50)}
    assert ties == {0, 2}
    assert select_move([1, 9, 0], 0.0, rng) == 1
    draws = np.bincount([select_move([1, 3, 0, 6], 1.0, rng) for _ in range(4000)], minlength=4)
    assert draws[2] == 0
    np.testing.assert_allclose(draws / 4000, [0.1, 0.3, 0.0, 0.6], atol=0.03)


def test_temperature_schedule():
    schedule = TemperatureSchedule(initial=1.0, final=0.0, moves=4)
    assert [schedule(ply) for ply in range(6)] == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="moves"):
        TemperatureSchedule(moves=-1)


def test_uniform_evaluator_is_uniform_over_legal_points():
    legal = np.array([[True, False, True, True], [False, True, False, False]])
    priors, values = uniform_evaluator(np.zeros((2, 5, 2, 2), np.float32), legal)
    np.testing.assert_allclose(priors, [[1 / 3, 0, 1 / 3, 1 / 3], [0, 1, 0, 0]], rtol=1e-6)
    np.testing.assert_array_equal(values, [0, 0])
    assert priors.dtype == values.dtype == np.float32


def test_dirichlet_samples_have_the_right_moments():
    alpha, n, draws = 0.3, 10, 4000
    state = np.array([12345], dtype=np.uint64)
    out = np.zeros(n)
    samples = np.empty((draws, n))
    for i in range(draws):
        dirichlet_into(alpha, n, state, out)
        samples[i] = out
    assert (samples >= 0).all()
    np.testing.assert_allclose(samples.sum(axis=1), 1.0, atol=1e-9)
    a0 = alpha * n
    np.testing.assert_allclose(samples.mean(axis=0), 1 / n, atol=0.01)
    expected_var = (alpha * (a0 - alpha)) / (a0 ** 2 * (a0 + 1))
    assert abs(samples[:, 0].var() - expected_var) < 0.25 * expected_var


def test_dirichlet_survives_the_tiny_alpha_of_a_big_board():
    state = np.array([7], dtype=np.uint64)
    out = np.zeros(225)
    dirichlet_into(10.0 / 225, 225, state, out)
    assert np.isfinite(out).all() and abs(out.sum() - 1) < 1e-9
    assert out.max() > 0.05  # small alphas concentrate the noise on a few points


def test_exploration_table_follows_alphazero_growing_c():
    table = exploration_table(1000, 1.25, 19652.0)
    for n in (0, 1, 50, 999):
        c = math.log((1 + n + 19652.0) / 19652.0) + 1.25
        assert table[n] == pytest.approx(c * math.sqrt(n))
    np.testing.assert_allclose(exploration_table(10, 2.0, 0.0), 2.0 * np.sqrt(np.arange(10)))
