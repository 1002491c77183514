"""The contract between the search and its evaluators: every evaluator the package builds keeps
it, and the search reads a network's planes through it alone."""

from __future__ import annotations

import numpy as np
import pytest

from alphagomoku.game import GameConfig
from alphagomoku.mcts import SearchConfig, uniform_evaluator
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator, NetworkEvaluator, network_config
from alphagomoku.mcts.search import fit_to_evaluator
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.cache import EvaluationCache
from alphagomoku.nn.evaluator import Evaluator
from alphagomoku.nn.inference_backend import onnx_problem

GAME = GameConfig(width=7, n_in_row=4)


def tiny(vcf_plane_budget: int = 0) -> PolicyValueNet:
    return PolicyValueNet(ModelConfig.preset("tiny", GAME.width, vcf_plane_budget=vcf_plane_budget))


def test_a_plain_function_is_an_evaluator_without_a_network():
    assert isinstance(uniform_evaluator, LeafEvaluator)
    assert not isinstance(uniform_evaluator, NetworkEvaluator)
    assert network_config(uniform_evaluator) is None
    cfg = SearchConfig(num_simulations=8)
    assert fit_to_evaluator(cfg, uniform_evaluator) is cfg


def test_the_torch_evaluator_and_the_cache_around_it_carry_the_networks_config():
    model = tiny(vcf_plane_budget=50)
    for evaluator in (Evaluator(model), EvaluationCache(Evaluator(model), 16)):
        assert isinstance(evaluator, NetworkEvaluator)
        assert network_config(evaluator) == model.config
        # The search writes the planes the network was trained with.
        assert fit_to_evaluator(SearchConfig(num_simulations=8), evaluator).vcf_plane_budget == 50
    # A cache around a function has no network to speak for.
    assert network_config(EvaluationCache(uniform_evaluator, 16)) is None


@pytest.mark.skipif(bool(onnx_problem()), reason=onnx_problem() or "installed")
def test_the_onnx_network_keeps_the_contract_and_no_more():
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    model = tiny()
    onnx = OnnxEvaluator(model)
    assert isinstance(onnx, NetworkEvaluator) and network_config(onnx) == model.config
    # It answers the search's call alone; the torch evaluator's batch and precision settings
    # are not faked on it.
    assert not any(hasattr(onnx, name) for name in ("amp", "max_batch", "oom_backoffs"))
    planes = np.zeros((3, model.config.num_planes, GAME.height, GAME.width), np.float32)
    legal = np.ones((3, GAME.area), np.bool_)
    priors, values = onnx(planes, legal)
    assert priors.shape == (3, GAME.area) and values.shape == (3,)
    np.testing.assert_allclose(priors.sum(axis=1), 1.0, rtol=1e-5)
