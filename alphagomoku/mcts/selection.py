"""Selection: the edge a simulation follows out of an expanded node.

PUCT (AlphaZero) scores the taken edges by Q + c(n) * P * sqrt(N) / (1 + n) and the next
untaken one by its first-play value; UCB1, for the rollout baseline, tries every move once
first; below a Gumbel root the deterministic rule of :mod:`alphagomoku.mcts.gumbel` applies.
Only the taken prefix of a node's block and the next edge are candidates
(:mod:`alphagomoku.mcts.tree` says why).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from alphagomoku.mcts import gumbel as gumbel_root
from alphagomoku.mcts.tree import (
    FIRST_EDGE,
    FORCED,
    GUMBEL_INTERIOR,
    IN_FLIGHT,
    NUM_CHILDREN,
    NUM_EDGES,
    Q,
    SOLVED_LOSS,
    SOLVED_WIN,
    STATUS,
    U,
    UCB1,
    VALUE_SUM,
    VISITS,
)
from alphagomoku.numba_config import JIT


@njit(**JIT)
def _explore(explore, prm, n):
    """c(n) * sqrt(n): from the table, or computed past its end."""
    if n < explore.shape[0]:
        return explore[n]
    c = prm.c_puct
    if prm.c_base > 0.0:
        c += math.log((1.0 + n + prm.c_base) / prm.c_base)
    return c * math.sqrt(n)


@njit(**JIT)
def select_edge(nodes, values, edge_prior, edge_child, explore, prm, t, x, is_root):
    """The edge to follow out of the expanded node ``x``: the taken prefix of its block and the
    next edge are the only candidates (see :mod:`alphagomoku.mcts.tree`)."""
    first = np.int64(nodes[t, x, FIRST_EDGE])
    if nodes[t, x, FORCED] != 0:
        return first
    taken = np.int64(nodes[t, x, NUM_CHILDREN])
    if is_root and nodes[t, x, STATUS] == SOLVED_WIN:
        # A solved root keeps playing its proof: the child where the opponent has lost.
        for e in range(first, first + taken):
            if nodes[t, edge_child[t, e], STATUS] == SOLVED_LOSS:
                return e
    end = first + min(np.int64(nodes[t, x, NUM_EDGES]), taken + 1)
    n_parent = np.int64(nodes[t, x, VISITS] + nodes[t, x, IN_FLIGHT])
    best = first
    best_score = -np.inf
    if prm.selection == UCB1:
        if taken < nodes[t, x, NUM_EDGES]:
            return first + taken  # every move once before any twice
        log_n = math.log(max(n_parent, 1))
        for e in range(first, end):
            c = edge_child[t, e]
            n = nodes[t, c, VISITS] + nodes[t, c, IN_FLIGHT]
            s = values[t, c, Q] + prm.c_puct * math.sqrt(log_n / n)
            if s > best_score:
                best_score = s
                best = e
        return best
    if prm.selection == GUMBEL_INTERIOR and not is_root:
        return gumbel_root.select_interior(nodes, values, edge_prior, edge_child, prm, t, x)
    scale = _explore(explore, prm, n_parent)
    tried = 0.0  # prior mass of the taken edges
    for e in range(first, first + taken):
        c = edge_child[t, e]
        p = edge_prior[t, e]
        tried += p
        s = values[t, c, Q] + scale * p * values[t, c, U]
        if s > best_score:
            best_score = s
            best = e
    if end > first + taken:
        # The untaken edge last: its first-play value needs the mass of all the taken ones.
        e = first + taken
        reduction = prm.root_fpu_reduction if is_root else prm.fpu_reduction
        fpu = values[t, x, VALUE_SUM] / nodes[t, x, VISITS] - reduction * math.sqrt(tried)
        if fpu < -1.0:
            fpu = -1.0
        if fpu + scale * edge_prior[t, e] > best_score:
            best = e
    return best
