"""Read-only checks of a forest's trees, for tests and debugging."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from alphagomoku.game import kernels as game
from alphagomoku.mcts.edge_order import next_edge_problem
from alphagomoku.mcts.tree import (
    COLOR,
    FIRST_EDGE,
    FORCED,
    IN_FLIGHT,
    NO_NODE,
    NUM_CHILDREN,
    NUM_EDGES,
    PARENT,
    ROOT,
    STATUS,
    UNEXPANDED,
    UNSOLVED,
    VALUE_SUM,
    VISITS,
)


def walk_tree(forest, t: int) -> Iterator[tuple[int, np.ndarray, int, int]]:
    """Yield (node, board, side to move, depth) for every node of tree ``t``, rebuilding each
    node's position from the root down."""
    tr = forest.arrays
    stack = [(ROOT, tr.root_board[t].copy(), int(tr.roots[t, COLOR]), 0)]
    while stack:
        x, board, color, depth = stack.pop()
        yield x, board, color, depth
        first = int(tr.nodes[t, x, FIRST_EDGE])
        if first == UNEXPANDED:
            continue
        for e in range(first, first + int(tr.nodes[t, x, NUM_CHILDREN])):
            child_board = board.copy()
            child_board[int(tr.edge_move[t, e])] = color
            stack.append((int(tr.edge_child[t, e]), child_board, 3 - color, depth + 1))


def tree_problems(forest, t: int) -> list[str]:
    """Every broken invariant of tree ``t`` (empty when sound), checked after a finished search:

    * each node has finished visits (a root may have none yet), none in flight, and a mean
      value in [-1, 1];
    * an expanded node's edges are exactly its legal moves (so never an occupied point, nor a
      point forbidden to black under renju), their priors sum to one, and its taken edges are a
      prefix of its block whose children name it as parent;
    * the next untaken edge has the largest prior of the untaken ones (ties: the lowest point),
      unless the node is forced or a Gumbel root, whose candidates go by their Gumbel draws;
    * an unsolved node's visits are one (its own evaluation) plus its children's; a solved node
      may have more, since later visits stop at it.
    """
    tr = forest.arrays
    h, w, rule = forest.height, forest.width, forest.rule
    problems = []
    for x, board, color, _ in walk_tree(forest, t):
        n = int(tr.nodes[t, x, VISITS])
        if n < 1:
            if x != ROOT or tr.nodes[t, x, FIRST_EDGE] != UNEXPANDED:
                problems.append(f"node {x} has no finished visit")  # unless a root not searched yet
            continue
        if tr.nodes[t, x, IN_FLIGHT] != 0:
            problems.append(f"node {x} still has visits in flight")
        mean = tr.values[t, x, VALUE_SUM] / n
        if not -1.0 - 1e-9 <= mean <= 1.0 + 1e-9:
            problems.append(f"node {x} has mean value {mean}")
        first = int(tr.nodes[t, x, FIRST_EDGE])
        if first == UNEXPANDED:
            if tr.nodes[t, x, NUM_CHILDREN] != 0:
                problems.append(f"node {x} has children but no edges")
            continue
        k = int(tr.nodes[t, x, NUM_EDGES])
        taken = int(tr.nodes[t, x, NUM_CHILDREN])
        moves = tr.edge_move[t, first:first + k].astype(np.int64)
        priors = tr.edge_prior[t, first:first + k].astype(np.float64)
        children = tr.edge_child[t, first:first + k]
        legal = np.zeros(h * w, dtype=np.bool_)
        game.legal_mask_into(board.copy(), h, w, rule, color, legal)
        if sorted(moves.tolist()) != np.flatnonzero(legal).tolist():
            problems.append(f"node {x}: its edges are not exactly its legal moves")
        if abs(priors.sum() - 1.0) > 1e-4 or (priors < 0).any():
            problems.append(f"node {x}: priors sum to {priors.sum()}")
        if (children[:taken] == NO_NODE).any() or (children[taken:] != NO_NODE).any():
            problems.append(f"node {x}: its taken edges are not a prefix of its block")
            continue
        gumbel_root = x == ROOT and forest.gumbel
        if not tr.nodes[t, x, FORCED] and not gumbel_root:
            why = next_edge_problem(priors, moves, taken)
            if why:
                problems.append(f"node {x}: {why}")
        if (tr.nodes[t, children[:taken], PARENT] != x).any():
            problems.append(f"node {x}: a child names another parent")
        below = int(tr.nodes[t, children[:taken], VISITS].sum())
        solved = tr.nodes[t, x, STATUS] != UNSOLVED
        if (not solved and n != 1 + below) or (solved and n < 1 + below):
            problems.append(f"node {x}: {n} visits, its children {below}")
    return problems
