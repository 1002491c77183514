"""Pure MCTS: the classic network-free baseline, valuing each leaf by one random playout."""

from __future__ import annotations

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.position import Position
from alphagomoku.mcts import playouts
from alphagomoku.mcts.config import SearchConfig
from alphagomoku.mcts.forest import Forest

#: UCT's exploration constant; sqrt(2) is UCB1's for rewards in [0, 1] (ours span [-1, 1]).
UCT_EXPLORATION = 1.4
#: PUCT's constant for the uniform-prior variant, with no growing term and no FPU reduction:
#: uniform priors are small (1/legal moves), so exploration needs a large constant.
UNIFORM_PRIOR_EXPLORATION = 5.0


class PureMCTS:
    """``playouts`` simulations per move, each leaf valued by one uniformly random playout.

    The default is classic UCT (UCB1 selection, every move tried once before any twice);
    ``uniform_prior=True`` selects with PUCT over uniform priors instead. Both keep the
    search's exact handling of wins, losses and forced blocks. The whole search runs in one
    kernel call.
    """

    def __init__(self, game: GameConfig, playouts: int, seed: int = 0, uniform_prior: bool = False,
                 exploration: float | None = None):
        if isinstance(playouts, bool) or not isinstance(playouts, int) or playouts < 1:
            raise ValueError(f"playouts must be a positive integer, got {playouts!r}")
        if uniform_prior:
            c = UNIFORM_PRIOR_EXPLORATION if exploration is None else exploration
            cfg = SearchConfig(num_simulations=playouts, c_puct=c, c_base=0.0, fpu_reduction=0.0)
            selection = "puct"
        else:
            c = UCT_EXPLORATION if exploration is None else exploration
            cfg = SearchConfig(num_simulations=playouts, c_puct=c, c_base=0.0)
            selection = "ucb1"
        self.playouts = playouts
        self.uniform_prior = bool(uniform_prior)
        self._forest = Forest(game, cfg, 1, seed=seed, selection=selection)

    def search(self, position: Position) -> np.ndarray:
        """int32 (H*W,): visits of each move after ``playouts`` simulations from ``position``."""
        f = self._forest
        f.reset(0, position)
        if not playouts.run_rollouts(f.arrays, f._leaves, f._scratch, f._rollout_params, 0,
                                    self.playouts):
            raise RuntimeError("the pure MCTS tree ran out of nodes")  # max_nodes covers playouts
        return f.visit_counts(0)

    def best_move(self, position: Position) -> int:
        """The most visited move (the lowest point among equals)."""
        return int(np.argmax(self.search(position)))

    def root_value(self) -> float:
        """Mean value of the last searched position for its side to move."""
        return self._forest.root_value(0)
