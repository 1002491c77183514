"""Tree reuse: after a move, the chosen child becomes the root and the rest of the tree is freed."""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.mcts.edge_order import sort_edges
from alphagomoku.mcts.tree import (
    EDGES_USED,
    FIRST_EDGE,
    FORCED,
    NO_NODE,
    NODES_USED,
    NUM_CHILDREN,
    NUM_EDGES,
    ORDERED,
    PARENT,
    ROOT,
    UNEXPANDED,
)
from alphagomoku.numba_config import JIT



@njit(**JIT)
def keep_subtree(tr, sc, t, move):
    """Make the root's child through ``move`` the new root, keeping its subtree and freeing the
    rest. The kept nodes move to the front in index order, so each lands at or before its old
    slot (likewise its edge block) and one forward pass copies them in place; the new root's
    untaken edges are then sorted, as a root's are (:mod:`alphagomoku.mcts.edge_order`).
    Returns False when the child has no edges to keep (the caller starts a fresh root)."""
    nodes, values = tr.nodes, tr.values
    edge_move, edge_prior, edge_child = tr.edge_move, tr.edge_prior, tr.edge_child
    first = np.int64(nodes[t, ROOT, FIRST_EDGE])
    if first == UNEXPANDED:
        return False
    c = NO_NODE
    for e in range(first, first + np.int64(nodes[t, ROOT, NUM_CHILDREN])):
        if edge_move[t, e] == move:
            c = edge_child[t, e]
            break
    if c == NO_NODE or nodes[t, c, FIRST_EDGE] == UNEXPANDED:
        return False
    new = sc.node_map
    used = tr.roots[t, NODES_USED]
    kept = 0
    for i in range(c, used):
        p = nodes[t, i, PARENT]
        if i == c or (p >= c and new[p] != NO_NODE):
            new[i] = kept
            kept += 1
        else:
            new[i] = NO_NODE
    next_edge = 0
    for i in range(c, used):
        k = new[i]
        if k == NO_NODE:
            continue
        parent = nodes[t, i, PARENT]
        fe = np.int64(nodes[t, i, FIRST_EDGE])
        nodes[t, k, :] = nodes[t, i, :]
        values[t, k, :] = values[t, i, :]
        nodes[t, k, PARENT] = NO_NODE if i == c else new[parent]
        if fe == UNEXPANDED:
            continue
        ne = np.int64(nodes[t, k, NUM_EDGES])
        for q in range(ne):
            src = fe + q
            dst = next_edge + q
            edge_move[t, dst] = edge_move[t, src]
            edge_prior[t, dst] = edge_prior[t, src]
            child = edge_child[t, src]
            edge_child[t, dst] = NO_NODE if child == NO_NODE else new[child]
        nodes[t, k, FIRST_EDGE] = next_edge
        next_edge += ne
    tr.roots[t, NODES_USED] = kept
    tr.roots[t, EDGES_USED] = next_edge
    if nodes[t, ROOT, FORCED] == 0:
        # An interior block has only its next edge in place; a root's is sorted in full.
        taken = np.int64(nodes[t, ROOT, NUM_CHILDREN])
        sort_edges(edge_prior, edge_move, sc.priors, sc.moves, t, taken,
                   np.int64(nodes[t, ROOT, NUM_EDGES]) - taken)
        nodes[t, ROOT, ORDERED] = nodes[t, ROOT, NUM_EDGES]
    return True
