"""Gumbel AlphaZero's root formulas in plain Python, written from the paper and mctx, for
checking the compiled kernels in :mod:`alphagomoku.mcts.gumbel`."""

from __future__ import annotations

import math


def considered_visits(m: int, n: int) -> list[int]:
    """mctx ``get_sequence_of_considered_visits``: the visit count each of the ``n`` root
    simulations must find on the candidate it takes, with ``m`` candidates."""
    if m <= 1:
        return list(range(n))
    log2max = int(math.ceil(math.log2(m)))
    sequence: list[int] = []
    visits = [0] * m
    k = m
    while len(sequence) < n:
        extra = max(1, int(n / (log2max * k)))
        for _ in range(extra):
            sequence.extend(visits[:k])
            for i in range(k):
                visits[i] += 1
        k = max(2, k // 2)
    return sequence[:n]


def completed_q(priors, visits, qs, raw_value):
    """Completed and min-max rescaled Q per action (lists over the root's legal actions):
    visited actions keep their q, unvisited ones get v_mix (paper, appendix D)."""
    total = sum(visits)
    visited_prior = sum(p for p, n in zip(priors, visits) if n > 0)
    if visited_prior > 0:
        weighted = sum(p * q for p, n, q in zip(priors, visits, qs) if n > 0) / visited_prior
        v_mix = (raw_value + total * weighted) / (1 + total)
    else:
        v_mix = raw_value
    completed = [q if n > 0 else v_mix for n, q in zip(visits, qs)]
    lo, hi = min(completed), max(completed)
    span = max(hi - lo, 1e-8)
    return [(q - lo) / span for q in completed]


def sigma(q_hat, visits, c_visit=50.0, c_scale=0.1):
    scale = (c_visit + max(visits)) * c_scale
    return [scale * q for q in q_hat]


def improved_policy(priors, visits, qs, raw_value, c_visit=50.0, c_scale=0.1):
    """softmax(log prior + sigma(completed q)) over the actions given."""
    s = sigma(completed_q(priors, visits, qs, raw_value), visits, c_visit, c_scale)
    logits = [math.log(max(p, 1e-30)) + x for p, x in zip(priors, s)]
    top = max(logits)
    e = [math.exp(x - top) for x in logits]
    total = sum(e)
    return [x / total for x in e]


def interior_choice(priors, visits, walks, qs, raw_value, c_visit=50.0, c_scale=0.1):
    """The paper's deterministic rule below the root, over every legal action of a node:
    (index, scores) of argmax pi'(a) - N(a) / (1 + sum N). ``visits`` give the completed q
    and sigma, ``walks`` (visits plus walks in flight) the visit term."""
    pi = improved_policy(priors, visits, qs, raw_value, c_visit, c_scale)
    total = sum(walks)
    scores = [p - n / (1 + total) for p, n in zip(pi, walks)]
    return max(range(len(scores)), key=scores.__getitem__), scores
