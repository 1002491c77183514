"""The order of a node's edge block: which untaken edge a selection step sees next.

Selection scores the taken edges and one untaken edge, the one with the largest prior (ties go
to the lowest point, the order edges are created in), because every untaken edge has the same
first-play value and its score grows with its prior alone. Only that one edge needs to be in
place, so an interior node is not sorted: :func:`order_new_block` moves its few best edges
forward, in order, when the expansion writes the block, and :func:`promote_next` the best
untaken one when an edge past that prefix is taken, each a scan of the untaken edges. Sorting
every block at expansion had been half of the expansion kernel's time with a network's priors
(docs/benchmarks.md), while most interior nodes of a short search take one or two children.
Roots are sorted in full (:func:`sort_edges`), because the Dirichlet noise and the Gumbel draws
are dealt out in block order, and sorting keeps those draws where they were. A node's ORDERED
field counts the leading edges of its block known to be in order (all of them for a root, or a
block found in order when written, as equal priors always are), and a take within them skips
the scan: pure MCTS and the uniform evaluator take a child at almost every simulation, and
would otherwise scan a whole block each time. Which edge is next never depends on how the
untaken edges past it are arranged, so the searches are the same whatever the prefix.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.numba_config import JIT


@njit(**JIT)
def ranks_before(prior_a, move_a, prior_b, move_b):
    """Whether edge a comes before edge b: a larger prior, or the same prior at a lower point."""
    return prior_a > prior_b or (prior_a == prior_b and move_a < move_b)


@njit(**JIT)
def swap_edges(edge_prior, edge_move, t, a, b):
    p = edge_prior[t, a]
    m = edge_move[t, a]
    edge_prior[t, a] = edge_prior[t, b]
    edge_move[t, a] = edge_move[t, b]
    edge_prior[t, b] = p
    edge_move[t, b] = m


@njit(**JIT)
def promote_next(edge_prior, edge_move, t, start, end):
    """Swap the best of edges [start, end) of tree ``t`` into ``start``."""
    if end - start < 2:
        return
    best = start
    for e in range(start + 1, end):
        if ranks_before(edge_prior[t, e], edge_move[t, e], edge_prior[t, best],
                        edge_move[t, best]):
            best = e
    if best != start:
        swap_edges(edge_prior, edge_move, t, start, best)


# How many of a new interior block's best edges order_new_block puts in place: most interior
# nodes of a short search take one to three children, and each take within this prefix needs
# no scan for the next edge.
NEW_BLOCK_PREFIX = 4


@njit(**JIT)
def order_new_block(edge_prior, edge_move, t, start, end):
    """Put the NEW_BLOCK_PREFIX best edges of a block just written at its front, in order, in
    one pass that also finds out whether the whole block is already in order (equal priors,
    for one, are: edges are written in point order). Returns how many leading edges are now in
    selection order, each ranked before every edge after it: the whole block when it was in
    order (then nothing was moved), else the prefix."""
    k = end - start
    size = min(NEW_BLOCK_PREFIX, k)
    best = np.empty(NEW_BLOCK_PREFIX, np.int64)  # the best edges so far, best first
    count = 0
    in_order = True
    for e in range(start, end):
        if e > start and ranks_before(edge_prior[t, e], edge_move[t, e], edge_prior[t, e - 1],
                                      edge_move[t, e - 1]):
            in_order = False
        if count == size and not ranks_before(edge_prior[t, e], edge_move[t, e],
                                              edge_prior[t, best[count - 1]],
                                              edge_move[t, best[count - 1]]):
            continue
        i = min(count, size - 1)
        while i > 0 and ranks_before(edge_prior[t, e], edge_move[t, e],
                                     edge_prior[t, best[i - 1]], edge_move[t, best[i - 1]]):
            best[i] = best[i - 1]
            i -= 1
        best[i] = e
        count = min(count + 1, size)
    if in_order:
        return k
    for i in range(size):
        if best[i] != start + i:
            swap_edges(edge_prior, edge_move, t, start + i, best[i])
            # The edge that stood at start + i now stands where best[i] was.
            for j in range(i + 1, size):
                if best[j] == start + i:
                    best[j] = best[i]
    return size


@njit(**JIT)
def _merge_pass(src_p, src_m, dst_p, dst_m, k, width):
    lo = 0
    while lo < k:
        mid = min(lo + width, k)
        hi = min(lo + 2 * width, k)
        a = lo
        b = mid
        o = lo
        while a < mid and b < hi:
            if ranks_before(src_p[b], src_m[b], src_p[a], src_m[a]):
                dst_p[o] = src_p[b]
                dst_m[o] = src_m[b]
                b += 1
            else:
                dst_p[o] = src_p[a]
                dst_m[o] = src_m[a]
                a += 1
            o += 1
        while a < mid:
            dst_p[o] = src_p[a]
            dst_m[o] = src_m[a]
            a += 1
            o += 1
        while b < hi:
            dst_p[o] = src_p[b]
            dst_m[o] = src_m[b]
            b += 1
            o += 1
        lo += 2 * width


@njit(**JIT)
def sort_edges(edge_prior, edge_move, buf_p, buf_m, t, base, k):
    """Sort edges [base, base + k) of tree ``t``, none taken yet, into :func:`ranks_before`
    order. Bottom-up merge sort through the scratch buffers."""
    ordered = True
    for i in range(base + 1, base + k):
        if ranks_before(edge_prior[t, i], edge_move[t, i], edge_prior[t, i - 1],
                        edge_move[t, i - 1]):
            ordered = False
            break
    if ordered:
        return  # uniform priors always are
    block_p = edge_prior[t, base:base + k]
    block_m = edge_move[t, base:base + k]
    width = 1
    in_block = True
    while width < k:
        if in_block:
            _merge_pass(block_p, block_m, buf_p, buf_m, k, width)
        else:
            _merge_pass(buf_p, buf_m, block_p, block_m, k, width)
        in_block = not in_block
        width *= 2
    if not in_block:
        block_p[:] = buf_p[:k]
        block_m[:] = buf_m[:k]


def next_edge_problem(priors: np.ndarray, moves: np.ndarray, taken: int) -> str:
    """Why the untaken edge after ``taken`` is not the one selection should see next ("" when
    it is): the check of :func:`alphagomoku.mcts.invariants.tree_problems`."""
    if taken >= len(priors) - 1:
        return ""
    p, m = float(priors[taken]), int(moves[taken])
    for q, n in zip(priors[taken + 1:].tolist(), moves[taken + 1:].tolist()):
        if q > p or (q == p and n < m):
            return f"untaken edge {n} (prior {q}) should come before {m} (prior {p})"
    return ""
