"""Pure MCTS: the classic network-free baseline, valuing each leaf by one random playout."""

from __future__ import annotations

import numpy as np

from alphagomoku.checks import positive_int
from alphagomoku.game.config import GameConfig
from alphagomoku.game.position import Position
from alphagomoku.mcts import playouts as playout_kernels
from alphagomoku.mcts.config import SearchConfig
from alphagomoku.mcts.forest import Forest

#: UCT's exploration constant; sqrt(2) is UCB1's for rewards in [0, 1] (ours span [-1, 1]).
UCT_EXPLORATION = 1.4
#: PUCT's constant for the uniform-prior variant, with no growing term and no FPU reduction:
#: uniform priors are small (1/legal moves), so exploration needs a large constant.
UNIFORM_PRIOR_EXPLORATION = 5.0


class PureMCTS:
    """Searches of up to ``playouts`` simulations, each leaf valued by one uniformly random
    playout; ``playouts`` also sizes the tree, so no search may total more.

    The default is classic UCT (UCB1 selection, every move tried once before any twice);
    ``uniform_prior=True`` selects with PUCT over uniform priors instead. Both keep the
    search's exact handling of wins, losses and forced blocks. Each call to :meth:`search` is
    one kernel call; a search can be continued in steps (``continue_=True``), which is how a
    player fills a time budget without starting over.
    """

    def __init__(self, game: GameConfig, playouts: int, seed: int = 0, uniform_prior: bool = False,
                 exploration: float | None = None):
        positive_int("playouts", playouts)
        if uniform_prior:
            c = UNIFORM_PRIOR_EXPLORATION if exploration is None else exploration
            cfg = SearchConfig(num_simulations=playouts, c_puct=c, c_base=0.0, fpu_reduction=0.0)
            selection = "puct"
        else:
            c = UCT_EXPLORATION if exploration is None else exploration
            cfg = SearchConfig(num_simulations=playouts, c_puct=c, c_base=0.0)
            selection = "ucb1"
        self.game = game
        self.playouts = playouts
        self.uniform_prior = bool(uniform_prior)
        self._forest = Forest(game, cfg, 1, seed=seed, selection=selection)
        self._searched = False

    @property
    def done(self) -> int:
        """Playouts in the current tree (the root's visits, its own evaluation included)."""
        return self._forest.root_visits(0) if self._searched else 0

    def search(self, position: Position, playouts: int | None = None, *, continue_: bool = False,
               seed: int | None = None) -> np.ndarray:
        """int32 (H*W,): visits of each move after ``playouts`` (default: the constructor's)
        simulations from ``position``.

        ``continue_=True`` runs ``playouts`` more on the tree of the last search instead, which
        must have been of the same position; the tree then holds the sum, and the result is the
        same as one search of that many. ``seed`` restarts the random stream of a new search
        (as ``PureMCTS(..., seed=seed)`` starts it); without it the stream goes on from the
        last search."""
        n = self.playouts if playouts is None else playouts
        positive_int("playouts", n)
        f = self._forest
        if continue_:
            if seed is not None:
                raise ValueError("seed restarts the random stream: it cannot go with continue_")
            if not self._searched or position.config != f.game \
                    or f.position(0).moves != position.moves:
                raise ValueError("continue_=True needs the position of the last search")
        before = self.done if continue_ else 0
        if before + n > self.playouts:
            raise ValueError(f"{before} + {n} playouts would pass this search's limit of "
                             f"{self.playouts} (PureMCTS(..., playouts) sizes the tree)")
        if not continue_:
            self._searched = False
            f.reset(0, position, seed=seed)
            self._searched = True
        if not playout_kernels.run_rollouts(f.arrays, f._leaves, f._scratch, f._rollout_params,
                                            0, before + n):
            raise RuntimeError("the pure MCTS tree ran out of nodes")  # max_nodes covers playouts
        return f.visit_counts(0)

    def best_move(self, position: Position) -> int:
        """The most visited move (the lowest point among equals) of a fresh search."""
        return int(np.argmax(self.search(position)))

    def root_value(self) -> float:
        """Mean value of the last searched position for its side to move."""
        return self._forest.root_value(0)
