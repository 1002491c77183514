"""The VCF solver inside the search: a proved VCF solves a node as a win."""

import pytest

from alphagomoku.game import BLACK, GameConfig, Position, solve_vcf
from alphagomoku.mcts import Forest, SearchConfig, search, uniform_evaluator
from alphagomoku.mcts.tree import WIN
from tests.test_vcf import NINE_MOVES

ELEVEN = GameConfig(width=11)


def nine_moves():
    pos = Position.from_picture(NINE_MOVES, ELEVEN)
    assert pos.to_move == BLACK
    return pos


def test_root_vcf_plays_its_first_move_within_a_few_simulations():
    pos = nine_moves()
    line = solve_vcf(pos)
    result = search(pos, uniform_evaluator, SearchConfig(num_simulations=4, vcf_leaf_budget=100))
    assert result.root_value == 1.0
    assert result.best_move == line.first_move
    plain = search(pos, uniform_evaluator, SearchConfig(num_simulations=4))
    assert plain.root_value != 1.0


@pytest.mark.parametrize("leaf_budget", [0, 200])
def test_leaf_vcf_solves_a_new_node(leaf_budget):
    """Root check off, priors on the line's first move: after it and the forced block, the new
    node is proved a win by its own VCF search, and the proof reaches the root through the
    forced node. Without the leaf search, 16 more plies of the line would have to be walked."""
    pos = nine_moves()
    first = solve_vcf(pos).first_move

    def favour_first(planes, legal):
        priors, values = uniform_evaluator(planes, legal)
        priors[:, first] += 100.0
        return priors / priors.sum(axis=1, keepdims=True), values

    cfg = SearchConfig(num_simulations=6, vcf_leaf_budget=leaf_budget, vcf_root_budget=0)
    forest = Forest(ELEVEN, cfg, 1)
    forest.reset(0, pos)
    forest.run(favour_first)
    assert (forest.root_status(0) == WIN) == (leaf_budget > 0)


def test_bad_vcf_budgets():
    with pytest.raises(ValueError, match="vcf_leaf_budget"):
        SearchConfig(vcf_leaf_budget=-1)
    with pytest.raises(ValueError, match="vcf_root_budget"):
        SearchConfig(vcf_root_budget=1.5)
    assert SearchConfig(vcf_leaf_budget=30).vcf_root == 300
