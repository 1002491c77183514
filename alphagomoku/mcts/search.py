"""Search one position: the entry point for players and tests."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from alphagomoku.game.position import Position
from alphagomoku.mcts.config import SearchConfig
from alphagomoku.mcts.forest import Forest
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator, network_config
from alphagomoku.mcts.policy import visit_policy

#: Leaves one evaluator call takes when a single tree is searched. A lone tree hands the
#: evaluator one leaf per call otherwise: 800 network calls of batch one for 800 simulations.
#: Virtual loss keeps the 8 leaves of a call on different paths; 8 in flight among hundreds of
#: simulations leave the visit counts nearly as a one-leaf search has them.
SEARCH_LEAVES = 8


def search_config(**changes) -> SearchConfig:
    """The SearchConfig of a single-position search: the SearchConfig defaults, except
    SEARCH_LEAVES leaves per evaluator call; ``changes`` override any field."""
    return SearchConfig(**{"leaves_per_tree": SEARCH_LEAVES, **changes})


@dataclass(frozen=True)
class SearchResult:
    """``visits`` int32 (H*W,) per root move; ``root_value`` for the side to move, in [-1, 1]
    (exactly 1 or -1 when the search proved a win or a loss); ``policy`` float32 (H*W,), the
    visit distribution (temperature 1)."""

    visits: np.ndarray
    root_value: float
    policy: np.ndarray

    @property
    def best_move(self) -> int:
        """The most visited move (the lowest point among equals)."""
        return int(np.argmax(self.visits))


def fit_to_evaluator(cfg: SearchConfig, evaluator: LeafEvaluator) -> SearchConfig:
    """``cfg`` writing the input planes ``evaluator``'s network reads: the VCF, threat and rule
    planes of its ``config`` (a ModelConfig), when it has one."""
    model = network_config(evaluator)
    if model is None:
        return cfg
    return cfg.replace(vcf_plane_budget=model.vcf_plane_budget,
                       threat_planes=model.threat_planes, rule_planes=model.rule_planes)


def search(position: Position, evaluator: LeafEvaluator, cfg: SearchConfig | None = None,
           seed: int = 0) -> SearchResult:
    """Search ``position`` for ``cfg.num_simulations`` simulations with ``evaluator(planes,
    legal) -> (priors, values)``. Without ``cfg``, :func:`search_config` (batches of
    SEARCH_LEAVES leaves); a given ``cfg`` is used as it is, but for the VCF input planes, which
    follow the evaluator's network (``evaluator.config``) when it has one."""
    cfg = fit_to_evaluator(search_config() if cfg is None else cfg, evaluator)
    forest = Forest(position.config, cfg, 1, seed=seed)
    forest.reset(0, position)
    forest.run(evaluator)
    visits = forest.visit_counts(0)
    return SearchResult(visits=visits, root_value=forest.root_value(0),
                        policy=visit_policy(visits, 1.0))
