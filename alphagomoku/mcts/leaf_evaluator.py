"""The contract between the search and whatever evaluates its leaves.

The search hands out a batch of leaves as input planes and legal masks and takes back a prior
over the board and a value for each; it never sees torch. Anything with this call is an
evaluator: the torch network (:class:`alphagomoku.nn.Evaluator`), ONNX Runtime
(:class:`alphagomoku.nn.onnx_file.OnnxNetwork`), the cache around either
(:class:`alphagomoku.nn.cache.EvaluationCache`) or a plain function
(:func:`alphagomoku.mcts.policy.uniform_evaluator`).

=========  ==========================  =================================================
argument   dtype, shape                meaning
=========  ==========================  =================================================
planes     float32 (B, planes, H, W)   the network's input planes, side to move first
legal      bool (B, H*W)               the points that may be played
priors     float32 (B, H*W)            sums to one over the legal points, zero elsewhere
                                       (all zeros for a row with no legal point)
values     float32 (B,)                in [-1, 1], for the side to move
=========  ==========================  =================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from alphagomoku.nn.config import ModelConfig


@runtime_checkable
class LeafEvaluator(Protocol):
    """``evaluator(planes, legal) -> (priors, values)``, the table above."""

    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ...


@runtime_checkable
class NetworkEvaluator(LeafEvaluator, Protocol):
    """A LeafEvaluator backed by a trained network. Its ``config`` says which input planes the
    network reads: the search writes the VCF planes only for a network trained with them."""

    config: ModelConfig


def network_config(evaluator: LeafEvaluator) -> ModelConfig | None:
    """The config of ``evaluator``'s network; None for an evaluator without one."""
    return evaluator.config if isinstance(evaluator, NetworkEvaluator) else None


def reads_rule_planes(evaluator: LeafEvaluator) -> bool:
    """Whether ``evaluator``'s network reads the rule planes: what a caller that builds planes
    itself passes to ``Position.planes``."""
    model = network_config(evaluator)
    return model is not None and model.rule_planes


def reads_threat_planes(evaluator: LeafEvaluator) -> bool:
    """Whether ``evaluator``'s network reads the threat planes (``Position.planes``'s
    ``threat_planes``)."""
    model = network_config(evaluator)
    return model is not None and model.threat_planes
