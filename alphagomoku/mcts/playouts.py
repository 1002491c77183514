"""Whole searches in one kernel call, for evaluators that need no network: the uniform
evaluator (priors uniform, value 0) and random playouts (the pure-MCTS baseline). Both run the
same gather / expand cycle as the Python loop, tree by tree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.game import kernels as game
from alphagomoku.mcts.kernels import expand_leaf, gather_tree
from alphagomoku.mcts.tree import FULL, LEAF_COLOR, ROOT, VISITS
from alphagomoku.numba_config import JIT



@njit(**JIT)
def run_uniform(tr, lb, sc, prm, active, target):
    """Search every active tree to ``target`` root visits with uniform priors and value 0: the
    same gather/apply cycle, tree by tree, as the Python loop with the uniform evaluator.
    Returns the first tree that ran out of nodes, or -1."""
    nodes, values = tr.nodes, tr.values
    for t in range(active.shape[0]):
        if not active[t]:
            continue
        while nodes[t, ROOT, VISITS] < target:
            lb.report[t] = 0
            n = gather_tree(nodes, values, tr.edge_move, tr.edge_prior, tr.edge_child, tr.roots,
                            tr.root_board, tr.gumbel, lb.info, lb.board, lb.legal, lb.planes,
                            lb.report, sc.board, sc.points, sc.explore, sc.q, prm, t,
                            target - nodes[t, ROOT, VISITS], np.int64(0), sc.vct)
            if lb.report[t] == FULL:
                return t
            for j in range(n):
                expand_leaf(nodes, values, tr.edge_move, tr.edge_prior, tr.edge_child,
                            tr.roots, tr.rng, tr.gumbel, lb.info, lb.legal, sc.noise, sc.priors,
                            sc.moves, prm, j, sc.priors, True, 0.0)
    return -1


@njit(**JIT)
def run_rollouts(tr, lb, sc, prm, t, target):
    """Search tree ``t`` to ``target`` root visits, valuing each leaf by one random playout
    (uniform priors). Returns False if the tree ran out of nodes."""
    nodes, values = tr.nodes, tr.values
    state = tr.rng[t:t + 1]
    h, w = prm.height, prm.width
    while nodes[t, ROOT, VISITS] < target:
        lb.report[t] = 0
        n = gather_tree(nodes, values, tr.edge_move, tr.edge_prior, tr.edge_child, tr.roots,
                        tr.root_board, tr.gumbel, lb.info, lb.board, lb.legal, lb.planes,
                        lb.report, sc.board, sc.points, sc.explore, sc.q, prm, t,
                        target - nodes[t, ROOT, VISITS], np.int64(0), sc.vct)
        if lb.report[t] == FULL:
            return False
        for j in range(n):
            sc.board[:] = lb.board[j]
            winner = game.random_game(sc.board, h, w, prm.n_in_row, prm.rule, state)
            value = 0.0
            if winner != 0:
                value = 1.0 if winner == lb.info[j, LEAF_COLOR] else -1.0
            expand_leaf(nodes, values, tr.edge_move, tr.edge_prior, tr.edge_child, tr.roots,
                        tr.rng, tr.gumbel, lb.info, lb.legal, sc.noise, sc.priors, sc.moves, prm,
                        j, sc.priors, True, value)
    return True
