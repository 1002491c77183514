"""Selection: first-play urgency scaled by the prior mass tried, checked on a node built by
hand, and the shape it gives a search that knows nothing."""

import math

import numpy as np
import pytest

from alphagomoku.game import GameConfig, Position
from alphagomoku.mcts import Forest, SearchConfig, uniform_evaluator
from alphagomoku.mcts.invariants import walk_tree
from alphagomoku.mcts.selection import select_edge
from alphagomoku.mcts.tree import (
    FIRST_EDGE,
    NO_NODE,
    NUM_CHILDREN,
    NUM_EDGES,
    Q,
    ROOT,
    U,
    VALUE_SUM,
    VISITS,
)

PRIORS = [0.5, 0.3, 0.2]  # edge 0 taken (child node 1), edges 1 and 2 not yet


def _hand_built(cfg: SearchConfig, parent_value: float, visits: int, child_q: float):
    """Tree 0 of a 3x3 forest: an expanded node (the root, or a node below it) whose first
    edge leads to a child with mean value ``child_q`` for the side choosing it."""
    forest = Forest.on_board(3, 3, 3, "freestyle", cfg, 1)
    tr = forest.arrays
    tr.nodes[0, ROOT, FIRST_EDGE] = 0
    tr.nodes[0, ROOT, NUM_EDGES] = len(PRIORS)
    tr.nodes[0, ROOT, NUM_CHILDREN] = 1
    tr.nodes[0, ROOT, VISITS] = visits
    tr.values[0, ROOT, VALUE_SUM] = parent_value * visits
    tr.edge_move[0, :3] = [0, 1, 2]
    tr.edge_prior[0, :3] = PRIORS
    tr.edge_child[0, :3] = [1, NO_NODE, NO_NODE]
    tr.nodes[0, 1, VISITS] = visits - 1
    tr.values[0, 1, Q] = child_q
    tr.values[0, 1, U] = 1.0 / visits
    return forest


def _select(forest: Forest, is_root: bool) -> int:
    tr = forest.arrays
    return int(select_edge(tr.nodes, tr.values, tr.edge_prior, tr.edge_child,
                           forest._scratch.explore, forest._params, 0, ROOT, is_root))


@pytest.mark.parametrize("is_root", [False, True])
def test_an_untried_move_is_valued_below_its_parent_by_the_sqrt_of_the_mass_tried(is_root):
    cfg = SearchConfig(fpu_reduction=0.3, root_fpu_reduction=0.1)
    reduction = 0.1 if is_root else 0.3
    parent, visits = 0.2, 10
    forest = _hand_built(cfg, parent, visits, 0.0)
    scale = forest._scratch.explore[visits]
    untried = parent - reduction * math.sqrt(PRIORS[0]) + scale * PRIORS[1]
    # The tried child's Q at which both edges score the same: a hair either side decides.
    tie_q = untried - scale * PRIORS[0] / visits
    for q, expected in ((tie_q + 1e-6, 0), (tie_q - 1e-6, 1)):
        forest.arrays.values[0, 1, Q] = q
        assert _select(forest, is_root) == expected, (q, expected)


def test_with_nothing_tried_an_untried_move_is_worth_its_parents_value():
    # No mass tried yet: the reduction is zero, so exploration alone ranks the edges.
    forest = _hand_built(SearchConfig(fpu_reduction=2.0), 0.5, 4, 0.0)
    forest.arrays.nodes[0, ROOT, NUM_CHILDREN] = 0
    forest.arrays.edge_child[0, 0] = NO_NODE
    assert _select(forest, False) == 0


def _depths(forest: Forest) -> list[int]:
    return [depth for _, _, _, depth in walk_tree(forest, 0)]


def test_a_search_without_knowledge_grows_wide_and_shallow():
    # Uniform priors and value 0 everywhere: an unscaled reduction ranks every tried move above
    # every untried one and the tree grows as one line to the end of a game.
    game = GameConfig(width=9)
    forest = Forest(game, SearchConfig(num_simulations=300), 1)
    forest.reset(0, Position(game))
    forest.run(uniform_evaluator)
    depths = _depths(forest)
    assert np.mean(depths) < 5 and max(depths) < 10
    assert (forest.visit_counts(0) > 0).sum() > 30


def test_without_a_root_reduction_the_root_tries_every_move_first():
    game = GameConfig(width=9)
    forest = Forest(game, SearchConfig(num_simulations=82, root_fpu_reduction=0.0), 1)
    forest.reset(0, Position(game))
    forest.run(uniform_evaluator)
    assert (forest.visit_counts(0) == 1).all()  # 81 moves, once each
