"""RootReadout: what a searched tree says about its root, read by :class:`~alphagomoku.mcts.forest.Forest`.

Visits, priors, values and the proved status of the root's moves, and the Gumbel root's policy
target and move. Read-only: nothing here changes a tree. A mixin of Forest, whose arrays
(``_trees``, ``_scratch``, ``_params``), board ``area``, ``gumbel`` flag and ``_check_tree`` it
reads, kept apart so that the search's cycle and its read-outs are each a file a reader can
hold at once.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.game.constants import NO_MOVE
from alphagomoku.mcts import gumbel
from alphagomoku.mcts.tree import (
    FIRST_EDGE,
    FORCED,
    NUM_CHILDREN,
    NUM_EDGES,
    ROOT,
    SOLVED_LOSS,
    SOLVED_WIN,
    STATUS,
    UNEXPANDED,
    UNSOLVED,
    VALUE_SUM,
    VISITS,
    solved_value,
)


class RootReadout:
    def visit_counts(self, i: int) -> np.ndarray:
        """int32 (H*W,): visits of each root move (0 for moves never tried or illegal)."""
        i = self._check_tree(i)
        tr = self._trees
        out = np.zeros(self.area, dtype=np.int32)
        first = int(tr.nodes[i, ROOT, FIRST_EDGE])
        if first == UNEXPANDED:
            return out
        taken = slice(first, first + int(tr.nodes[i, ROOT, NUM_CHILDREN]))
        out[tr.edge_move[i, taken]] = tr.nodes[i, tr.edge_child[i, taken], VISITS]
        return out

    def _check_gumbel(self, i) -> int:
        i = self._check_tree(i)
        if not self.gumbel:
            raise ValueError("this forest searches with root_rule 'puct': its policy target is "
                             "the visit distribution (visit_counts)")
        if self._trees.nodes[i, ROOT, VISITS] == 0:
            raise ValueError(f"tree {i} has not been searched yet")
        return i

    def _solved_or_forced_move(self, i: int) -> int:
        """The move a solved or forced root must play, or NO_MOVE."""
        tr = self._trees
        first = int(tr.nodes[i, ROOT, FIRST_EDGE])
        if first == UNEXPANDED:
            return NO_MOVE
        if tr.nodes[i, ROOT, FORCED]:
            return int(tr.edge_move[i, first])
        if tr.nodes[i, ROOT, STATUS] == SOLVED_WIN:
            for e in range(first, first + int(tr.nodes[i, ROOT, NUM_CHILDREN])):
                if tr.nodes[i, tr.edge_child[i, e], STATUS] == SOLVED_LOSS:
                    return int(tr.edge_move[i, e])
        return NO_MOVE

    def improved_policy(self, i: int) -> np.ndarray:
        """float32 (H*W,): Gumbel AlphaZero's policy target softmax(logit + sigma(completed
        q)) at the root of tree ``i``; one-hot on the move a forced or solved root plays."""
        i = self._check_gumbel(i)
        out = np.zeros(self.area, dtype=np.float64)
        move = self._solved_or_forced_move(i)
        if move != NO_MOVE:
            out[move] = 1.0
        else:
            tr = self._trees
            gumbel.improved_policy_into(tr.nodes, tr.values, tr.edge_move, tr.edge_prior,
                                        tr.edge_child, self._scratch.q, self._params, i, out)
        return out.astype(np.float32)

    def gumbel_move(self, i: int) -> int:
        """The move Gumbel AlphaZero plays at the root of tree ``i``: the best survivor of the
        halving by g + logit + sigma(completed q) (the proof move of a solved root)."""
        i = self._check_gumbel(i)
        move = self._solved_or_forced_move(i)
        if move != NO_MOVE:
            return move
        tr = self._trees
        return int(gumbel.chosen_move(tr.nodes, tr.values, tr.edge_move, tr.edge_prior,
                                      tr.edge_child, tr.gumbel, self._scratch.q, self._params, i))

    def move_value(self, i: int, move: int) -> float:
        """The search's mean value of playing ``move`` at the root of tree ``i``, for the
        root's side to move (exact once solved); the root's value when the move was never
        visited."""
        i = self._check_tree(i)
        tr = self._trees
        first = int(tr.nodes[i, ROOT, FIRST_EDGE])
        if first != UNEXPANDED:
            for e in range(first, first + int(tr.nodes[i, ROOT, NUM_CHILDREN])):
                if tr.edge_move[i, e] != move:
                    continue
                c = tr.edge_child[i, e]
                st = tr.nodes[i, c, STATUS]
                if st != UNSOLVED:
                    return -solved_value(st)
                n = tr.nodes[i, c, VISITS]
                if n:
                    return float(-tr.values[i, c, VALUE_SUM] / n)
        return self.root_value(i)

    def root_priors(self, i: int) -> np.ndarray:
        """float32 (H*W,): the root's priors as the search uses them (noise included)."""
        i = self._check_tree(i)
        tr = self._trees
        out = np.zeros(self.area, dtype=np.float32)
        first = int(tr.nodes[i, ROOT, FIRST_EDGE])
        if first != UNEXPANDED:
            block = slice(first, first + int(tr.nodes[i, ROOT, NUM_EDGES]))
            out[tr.edge_move[i, block]] = tr.edge_prior[i, block]
        return out

    def root_visits(self, i: int) -> int:
        return int(self._trees.nodes[self._check_tree(i), ROOT, VISITS])

    def root_value(self, i: int) -> float:
        """Mean value at the root for its side to move, in [-1, 1]; exactly 1 or -1 once the
        search has solved the root as a win or a loss."""
        i = self._check_tree(i)
        tr = self._trees
        status = tr.nodes[i, ROOT, STATUS]
        if status != UNSOLVED:
            return solved_value(status)
        n = tr.nodes[i, ROOT, VISITS]
        return float(tr.values[i, ROOT, VALUE_SUM] / n) if n else 0.0

    def root_status(self, i: int) -> int:
        """tree.UNSOLVED, SOLVED_WIN, SOLVED_LOSS or SOLVED_DRAW: what the search has proved about
        the root."""
        return int(self._trees.nodes[self._check_tree(i), ROOT, STATUS])
