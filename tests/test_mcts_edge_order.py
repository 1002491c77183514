"""Edge order: the next untaken edge is the best by prior (ties: the lowest point), interior
blocks by promotion, roots by a full sort, kept through tree reuse."""

import numpy as np
import pytest

from alphagomoku.game import GameConfig
from alphagomoku.mcts import Forest, SearchConfig
from alphagomoku.mcts.invariants import tree_problems
from alphagomoku.mcts.edge_order import (
    NEW_BLOCK_PREFIX,
    next_edge_problem,
    order_new_block,
    promote_next,
    sort_edges,
)
from test_mcts_forest import hashed_evaluator, random_position


def rank_key(prior, move):
    return (-float(prior), int(move))


def random_block(rng, k):
    """Priors with many exact ties, at scrambled points."""
    priors = (rng.integers(0, 6, k) / 8.0).astype(np.float32)
    moves = rng.permutation(225)[:k].astype(np.int16)
    return priors, moves


@pytest.mark.parametrize("seed", range(20))
def test_promote_next_moves_the_best_untaken_edge_forward(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 60))
    priors, moves = random_block(rng, k)
    start = int(rng.integers(0, k))
    ep = np.zeros((2, k + 3), np.float32)
    em = np.zeros((2, k + 3), np.int16)
    ep[1, 3:], em[1, 3:] = priors, moves
    promote_next(ep, em, 1, 3 + start, 3 + k)
    tail = sorted(zip(priors[start:], moves[start:]), key=lambda e: rank_key(*e))
    assert (float(ep[1, 3 + start]), int(em[1, 3 + start])) == (float(tail[0][0]), int(tail[0][1]))
    # Nothing lost, nothing before start touched.
    assert sorted(zip(ep[1, 3:].tolist(), em[1, 3:].tolist())) == \
        sorted(zip(priors.tolist(), moves.tolist()))
    assert (ep[1, 3:3 + start] == priors[:start]).all() and (em[1, 3:3 + start] == moves[:start]).all()


@pytest.mark.parametrize("seed", range(20))
def test_sort_edges_orders_by_prior_then_point(seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(1, 120))
    priors, moves = random_block(rng, k)
    ep = np.zeros((1, k + 5), np.float32)
    em = np.zeros((1, k + 5), np.int16)
    ep[0, 5:], em[0, 5:] = priors, moves
    sort_edges(ep, em, np.zeros(k, np.float32), np.zeros(k, np.int16), 0, 5, k)
    expected = sorted(zip(priors.tolist(), moves.tolist()), key=lambda e: rank_key(*e))
    assert list(zip(ep[0, 5:].tolist(), em[0, 5:].tolist())) == expected


def test_next_edge_problem_names_a_misplaced_edge():
    priors = np.array([0.5, 0.2, 0.2, 0.1])
    assert next_edge_problem(priors, np.array([3, 7, 9, 1]), 1) == ""
    assert "9" in next_edge_problem(priors, np.array([3, 9, 7, 1]), 1)  # tie: 7 before 9
    assert next_edge_problem(priors, np.array([3, 9, 7, 1]), 3) == ""   # nothing left untaken


def tied_evaluator(planes, legal):
    """Hashed priors rounded so that many tie exactly, raised to a power so that a few stand out."""
    priors, values = hashed_evaluator(planes, legal)
    return (np.round(priors, 1) ** 4).astype(np.float32), values


@pytest.mark.parametrize("eps, leaves", [(0.0, 1), (0.25, 1), (0.0, 4)])
def test_searches_and_reused_trees_keep_the_next_edge_in_place(eps, leaves):
    game = GameConfig(width=9)
    cfg = SearchConfig(num_simulations=120, dirichlet_eps=eps, leaves_per_tree=leaves)
    rng = np.random.default_rng(7)
    forest = Forest(game, cfg, 3, seed=2)
    for i in range(3):
        forest.reset(i, random_position(game, int(rng.integers(0, 20)), rng))
    for _ in range(3):  # search, then keep the chosen subtree and search again
        forest.run(tied_evaluator)
        for i in range(3):
            assert tree_problems(forest, i) == []
            forest.advance(i, int(np.argmax(forest.visit_counts(i))))


@pytest.mark.parametrize("seed", range(12))
def test_a_new_block_gets_its_best_edges_first_and_says_how_many_are_in_order(seed):
    rng = np.random.default_rng(200 + seed)
    k = int(rng.integers(1, 40))
    priors, moves = random_block(rng, k)
    if seed % 3 == 0:  # equal priors in point order, as a uniform evaluator gives
        priors, moves = np.full(k, 1.0 / k, np.float32), np.sort(moves)
    if seed % 3 == 1:  # sorted already
        order = sorted(range(k), key=lambda i: rank_key(priors[i], moves[i]))
        priors, moves = priors[order], moves[order]
    ep, em = priors[None].copy(), moves[None].copy()
    prefix = order_new_block(ep, em, 0, 0, k)
    ranked = sorted(zip(priors.tolist(), moves.tolist()), key=lambda e: rank_key(*e))
    in_order = list(zip(priors.tolist(), moves.tolist())) == ranked
    assert prefix == (k if in_order else min(NEW_BLOCK_PREFIX, k))
    assert list(zip(ep[0, :prefix].tolist(), em[0, :prefix].tolist())) == ranked[:prefix]
    if in_order:
        assert (ep == priors).all() and (em == moves).all()
    # Nothing lost.
    assert sorted(zip(ep[0].tolist(), em[0].tolist())) == sorted(ranked)
