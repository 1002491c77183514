"""Gumbel AlphaZero at the root (Danihelka et al., "Policy improvement by planning with Gumbel",
ICLR 2022), compiled for the flat trees of :mod:`alphagomoku.mcts.tree`.

With few simulations, PUCT's visit counts are a poor policy target: most legal moves are never
visited, and the target says nothing about them. Gumbel AlphaZero instead

1. draws one Gumbel variable g(a) per root move when the root is expanded, and considers only
   the m moves with the largest g(a) + logit(a) (sampling m moves without replacement);
2. spends the simulations by sequential halving: each phase visits every remaining candidate
   equally, then keeps the better half by g + logit + sigma(q);
3. trains the policy on softmax(logit + sigma(completed q)): every legal move gets a target,
   unvisited ones through the mixed value estimate (paper, appendix D).

Below the root the ordinary selection rule (PUCT) applies, as MiniZero does, unless
``interior_rule="gumbel"`` asks for the paper's deterministic rule (section 5,
:func:`select_interior`): the move with the largest pi'(a) - N(a) / (1 + sum N), pi' being
softmax(logit + sigma(completed q)) at that node, so that visits follow the improved policy
without any noise.

The root's edges are kept sorted so that the m candidates come first, ordered by g + logit:
the first phase then visits edges in block order, which keeps the tree's invariant that the
taken edges are a prefix of the block. ``gumbel[t, i]`` belongs to edge ``first + i`` and moves
with it. Logits are log(prior): the priors are the evaluator's softmax renormalised over the
legal moves, which differs from the logits by a constant that softmax and argmax ignore.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from alphagomoku.mcts.noise import uniform01
from alphagomoku.mcts.tree import (
    BUDGET,
    FIRST_EDGE,
    IN_FLIGHT,
    NUM_CHILDREN,
    NUM_EDGES,
    Q,
    RAW,
    ROOT,
    VISITS,
)
from alphagomoku.numba_config import JIT

# A prior of exactly zero (possible after float32 renormalisation) must stay a finite logit:
# an infinite one would turn the scores into NaN. Candidates are chosen by position in the
# block, never by comparing against a clipped floor, so this floor excludes nothing.
_MIN_PRIOR = 1e-30
# mctx's epsilon for the min-max rescaling of q.
_RESCALE_EPS = 1e-8


@njit(**JIT)
def gumbel_sample(state):
    """One standard Gumbel draw, -log(-log(u)), from a tree's xorshift stream."""
    u = uniform01(state)
    while u <= 0.0:
        u = uniform01(state)
    return -math.log(-math.log(u))


@njit(**JIT)
def considered_visit(m, n, i):
    """The visit count that simulation ``i`` (0-based) of ``n`` must find on a root candidate,
    with ``m`` candidates: mctx's ``get_sequence_of_considered_visits`` computed on the fly.
    Each phase gives each of k candidates max(1, n // (ceil(log2 m) * k)) more visits, then
    k halves (never below 2). Past ``n`` the same pattern goes on."""
    if m <= 1:
        return i
    log2m = 0
    while (1 << log2m) < m:
        log2m += 1
    k = m
    done = 0       # simulations planned before this round
    level = 0      # visits each current candidate has when the round starts
    while True:
        extra = max(1, n // (log2m * k))
        for _ in range(extra):
            if i < done + k:
                return level
            done += k
            level += 1
        k = max(2, k // 2)


@njit(**JIT)
def num_considered(nodes, prm, t):
    return min(prm.gumbel_m, np.int64(nodes[t, ROOT, NUM_EDGES]))


@njit(**JIT)
def prepare_root(nodes, edge_move, edge_prior, gumbel, rng, prm, t):
    """Draw the root's Gumbel variables and move the m best g + logit edges to the front of its
    block, in that order (the root was just expanded: no edge is taken yet)."""
    first = np.int64(nodes[t, ROOT, FIRST_EDGE])
    k = np.int64(nodes[t, ROOT, NUM_EDGES])
    for i in range(k):
        gumbel[t, i] = gumbel_sample(rng[t:t + 1])
    m = min(prm.gumbel_m, k)
    # Partial selection sort: m <= 32 candidates out of at most a few hundred edges.
    for i in range(m):
        best = i
        best_key = -np.inf
        for j in range(i, k):
            key = gumbel[t, j] + math.log(max(edge_prior[t, first + j], _MIN_PRIOR))
            if key > best_key:
                best_key = key
                best = j
        if best != i:
            a = first + i
            b = first + best
            mv = edge_move[t, a]
            edge_move[t, a] = edge_move[t, b]
            edge_move[t, b] = mv
            p = edge_prior[t, a]
            edge_prior[t, a] = edge_prior[t, b]
            edge_prior[t, b] = p
            g = gumbel[t, i]
            gumbel[t, i] = gumbel[t, best]
            gumbel[t, best] = g


@njit(**JIT)
def _mixed_value(nodes, values, edge_prior, edge_child, t, x):
    """(v_mix, most visits of a child) of node ``x``: the paper's appendix D mixes the network's
    raw value of x with the prior-weighted mean q of its visited children."""
    first = np.int64(nodes[t, x, FIRST_EDGE])
    taken = np.int64(nodes[t, x, NUM_CHILDREN])
    visits_sum = 0.0
    weighted_q = 0.0
    visited_prior = 0.0
    max_visits = 0
    for e in range(first, first + taken):
        c = edge_child[t, e]
        n = nodes[t, c, VISITS]
        if n > 0:
            p = edge_prior[t, e]
            visits_sum += n
            weighted_q += p * values[t, c, Q]
            visited_prior += p
            if n > max_visits:
                max_visits = n
    raw = values[t, x, RAW]
    if visited_prior > 0.0:
        return (raw + visits_sum * weighted_q / visited_prior) / (1.0 + visits_sum), max_visits
    return raw, max_visits


@njit(**JIT)
def completed_q_into(nodes, values, edge_prior, edge_child, t, out, fill):
    """out[i] = the completed Q of root edge ``first + i`` for the root's side to move, for i
    below ``fill``: the child's mean value when visited, else the mixed value v_mix of the
    paper's appendix D; then rescaled to [0, 1] by the min and max over all the root's edges.
    Returns max visits.

    Every edge without a visited child has q = v_mix, so the min and max need only the taken
    edges and v_mix: the root's selection, which reads the first few edges at each simulation,
    does not pay for a pass over every legal move."""
    first = np.int64(nodes[t, ROOT, FIRST_EDGE])
    k = np.int64(nodes[t, ROOT, NUM_EDGES])
    taken = np.int64(nodes[t, ROOT, NUM_CHILDREN])
    v_mix, max_visits = _mixed_value(nodes, values, edge_prior, edge_child, t, ROOT)
    lo = np.inf
    hi = -np.inf
    if taken < k:
        lo = v_mix
        hi = v_mix
    for i in range(taken):
        q = v_mix
        c = edge_child[t, first + i]
        if nodes[t, c, VISITS] > 0:
            q = values[t, c, Q]
        if i < fill:
            out[i] = q
        lo = min(lo, q)
        hi = max(hi, q)
    span = max(hi - lo, _RESCALE_EPS)
    for i in range(taken, fill):
        out[i] = v_mix
    for i in range(fill):
        out[i] = (out[i] - lo) / span
    return max_visits


@njit(**JIT)
def select_interior(nodes, values, edge_prior, edge_child, prm, t, x):
    """The edge the paper's deterministic rule takes out of the non-root node ``x``:
    argmax over a of pi'(a) - N(a) / (1 + sum_b N(b)), with pi' = softmax(logit +
    sigma(completed q)) and N counting walks in flight (they spread parallel walks, as virtual
    loss does under PUCT).

    Every untaken edge has the same completed q (v_mix) and N = 0, so among them the one with
    the largest prior wins, and that is the next untaken edge (see ``mcts/edge_order.py``): it
    is the only one to score, which keeps the tree's taken-prefix invariant.
    Its softmax mass is summed in one pass instead of an exp per move. Nothing is allocated."""
    first = np.int64(nodes[t, x, FIRST_EDGE])
    k = np.int64(nodes[t, x, NUM_EDGES])
    taken = np.int64(nodes[t, x, NUM_CHILDREN])
    v_mix, max_visits = _mixed_value(nodes, values, edge_prior, edge_child, t, x)
    walks = 0.0  # N summed over the children, in flight included
    lo = v_mix if taken < k else np.inf   # the min and max of the completed q, v_mix
    hi = v_mix if taken < k else -np.inf  # counting only when some move takes it
    for e in range(first, first + taken):
        c = edge_child[t, e]
        walks += nodes[t, c, VISITS] + nodes[t, c, IN_FLIGHT]
        q = values[t, c, Q] if nodes[t, c, VISITS] > 0 else v_mix
        lo = min(lo, q)
        hi = max(hi, q)
    span = max(hi - lo, _RESCALE_EPS)
    scale = _sigma_scale(prm, max_visits)
    # exp(scale * (q_hat - 1)) <= 1: no overflow however many visits scale grows with.
    mix_weight = math.exp(scale * ((v_mix - lo) / span - 1.0))
    untaken_mass = 0.0
    for e in range(first + taken, first + k):
        untaken_mass += edge_prior[t, e]
    total = untaken_mass * mix_weight
    for e in range(first, first + taken):
        c = edge_child[t, e]
        q = values[t, c, Q] if nodes[t, c, VISITS] > 0 else v_mix
        total += edge_prior[t, e] * math.exp(scale * ((q - lo) / span - 1.0))
    best = first
    best_score = -np.inf
    for e in range(first, first + taken):
        c = edge_child[t, e]
        q = values[t, c, Q] if nodes[t, c, VISITS] > 0 else v_mix
        improved = edge_prior[t, e] * math.exp(scale * ((q - lo) / span - 1.0)) / total
        score = improved - (nodes[t, c, VISITS] + nodes[t, c, IN_FLIGHT]) / (1.0 + walks)
        if score > best_score:
            best_score = score
            best = e
    if taken < k:
        e = first + taken
        if edge_prior[t, e] * mix_weight / total > best_score:
            best = e
    return best


@njit(**JIT)
def _sigma_scale(prm, max_visits):
    return (prm.gumbel_c_visit + max_visits) * prm.gumbel_c_scale


@njit(**JIT)
def select_root(nodes, values, edge_prior, edge_child, gumbel, roots, qbuf, prm, t):
    """The root edge the next simulation takes under sequential halving: among the candidates
    whose visits (in flight included) equal the plan's count for this simulation, the best by
    g + logit + sigma(q). Candidates not at that count are skipped outright, never scored."""
    first = np.int64(nodes[t, ROOT, FIRST_EDGE])
    taken = np.int64(nodes[t, ROOT, NUM_CHILDREN])
    m = num_considered(nodes, prm, t)
    sim = np.int64(nodes[t, ROOT, VISITS] + nodes[t, ROOT, IN_FLIGHT]) - 1
    target = considered_visit(m, max(np.int64(roots[t, BUDGET]), 1), max(sim, 0))
    if target == 0 and taken < m:
        return first + taken  # the first phase: candidates in g + logit order
    max_visits = completed_q_into(nodes, values, edge_prior, edge_child, t, qbuf, min(taken, m))
    scale = _sigma_scale(prm, max_visits)
    best = -1
    best_score = -np.inf
    fallback = first
    fallback_score = -np.inf
    for i in range(min(taken, m)):
        e = first + i
        c = edge_child[t, e]
        score = gumbel[t, i] + math.log(max(edge_prior[t, e], _MIN_PRIOR)) + scale * qbuf[i]
        if nodes[t, c, VISITS] + nodes[t, c, IN_FLIGHT] == target and score > best_score:
            best_score = score
            best = e
        if score > fallback_score:
            fallback_score = score
            fallback = e
    # No candidate at the planned count: walks in flight or a search run past its budget.
    return best if best >= 0 else fallback


@njit(**JIT)
def improved_policy_into(nodes, values, edge_move, edge_prior, edge_child, qbuf, prm, t, out):
    """out[move] = softmax(logit + sigma(completed q)) over the root's legal moves (zero
    elsewhere): the policy target, without the Gumbel noise. Indexed by move, not edge."""
    first = np.int64(nodes[t, ROOT, FIRST_EDGE])
    k = np.int64(nodes[t, ROOT, NUM_EDGES])
    out[:] = 0.0
    if k == 0:
        return
    max_visits = completed_q_into(nodes, values, edge_prior, edge_child, t, qbuf, k)
    scale = _sigma_scale(prm, max_visits)
    top = -np.inf
    for i in range(k):
        qbuf[i] = math.log(max(edge_prior[t, first + i], _MIN_PRIOR)) + scale * qbuf[i]
        top = max(top, qbuf[i])
    total = 0.0
    for i in range(k):
        qbuf[i] = math.exp(qbuf[i] - top)
        total += qbuf[i]
    for i in range(k):
        out[edge_move[t, first + i]] = qbuf[i] / total


@njit(**JIT)
def chosen_move(nodes, values, edge_move, edge_prior, edge_child, gumbel, qbuf, prm, t):
    """The move to play: among the most visited candidates (those that survived the halving),
    the best by g + logit + sigma(completed q). Not a draw from the visit counts, which the
    halving makes nearly flat."""
    first = np.int64(nodes[t, ROOT, FIRST_EDGE])
    taken = np.int64(nodes[t, ROOT, NUM_CHILDREN])
    m = num_considered(nodes, prm, t)
    max_visits = completed_q_into(nodes, values, edge_prior, edge_child, t, qbuf, min(taken, m))
    scale = _sigma_scale(prm, max_visits)
    best = -1
    best_score = -np.inf
    for i in range(min(taken, m)):
        e = first + i
        if nodes[t, edge_child[t, e], VISITS] != max_visits:
            continue
        score = gumbel[t, i] + math.log(max(edge_prior[t, e], _MIN_PRIOR)) + scale * qbuf[i]
        if score > best_score:
            best_score = score
            best = e
    if best < 0:
        best = first  # nothing visited yet: the top candidate
    return edge_move[t, best]
