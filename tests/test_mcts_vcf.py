"""The VCF and VCT solvers inside the search: a proved VCF or VCT solves a node as a win."""

import numpy as np
import pytest

from alphagomoku.game import BLACK, GameConfig, Position, solve_vcf
from alphagomoku.game import vcf
from alphagomoku.mcts import Forest, SearchConfig, search, uniform_evaluator
from alphagomoku.mcts.tree import SOLVED_WIN
from tests.reference_vct import has_vct
from tests.test_vcf import NINE_MOVES, plausible_game

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
    assert (forest.root_status(0) == SOLVED_WIN) == (leaf_budget > 0)


@pytest.mark.parametrize("rule", ["freestyle", "renju"])
def test_leaf_vct_proves_exactly_the_moves_that_let_the_opponent_win_by_one_threat(rule, rng):
    """Each root move visited once is a new node, classified by its own VCT search (depth 1, a
    budget that never runs out): it must read as lost exactly when the recursive twin finds the
    opponent a win by at most one free threat after it."""
    cfg = GameConfig(width=9, rule=rule)
    search_cfg = SearchConfig(num_simulations=300, vcf_leaf_budget=10**5,
                              vct_leaf_budget=10**6, vct_leaf_depth=1)
    st = vcf.allocate_state(cfg.area)
    lost = safe = 0
    for _ in range(6):
        pos = plausible_game(cfg, rng, int(rng.integers(10, 24)))
        if pos.is_over:
            continue
        forest = Forest(cfg, search_cfg, 1)
        forest.reset(0, pos)
        forest.run(uniform_evaluator)
        visits = forest.visit_counts(0)
        for m in np.flatnonzero(visits == 1):
            after = pos.copy().play(int(m))
            if after.is_over:
                continue
            twin = has_vct(after.board.copy(), 9, 9, 5, cfg.rule_id, after.to_move, 1, st,
                           after.last_move)
            assert twin is not None
            assert (forest.move_value(0, int(m)) == -1.0) == twin, (pos, pos.name(int(m)))
            lost += twin
            safe += not twin
    assert lost > 0 and safe > 0


def test_a_search_with_the_leaf_vct_avoids_the_moves_that_lose_to_threats():
    """White to move, and after most white moves black wins by two threats. The leaf VCT proves
    those moves lost, so the search plays one of the few the twin finds safe; without it, a
    search with uniform priors plays one that loses."""
    from tests.test_vct import ONE_DEFENCE, picture

    pos = picture(ONE_DEFENCE)
    st = vcf.allocate_state(81)

    def black_wins_after(move):
        after = pos.copy().play(move)
        return has_vct(after.board.copy(), 9, 9, 5, after.config.rule_id, BLACK, 2, st, move)

    cfg = SearchConfig(num_simulations=400, vct_leaf_budget=10**5, vct_leaf_depth=2)
    result = search(pos, uniform_evaluator, cfg)
    assert black_wins_after(result.best_move) is False
    assert -1.0 < result.root_value < 0.0  # the lost moves pull it down; a safe one is left
    blind = search(pos, uniform_evaluator, cfg.replace(vct_leaf_budget=0))
    assert black_wins_after(blind.best_move) is True


def _solved_wins_by_ply(forest):
    from alphagomoku.mcts.tree import NODES_USED, PARENT, ROOT, STATUS

    tr = forest.arrays
    out = {}
    for x in range(1, int(tr.roots[0, NODES_USED])):
        ply, y = 0, x
        while y != ROOT:
            y = int(tr.nodes[0, y, PARENT])
            ply += 1
        if tr.nodes[0, x, STATUS] == SOLVED_WIN:
            out[ply] = out.get(ply, 0) + 1
    return out


@pytest.mark.parametrize("plies", [0, 1])
def test_leaf_vct_plies_limit_the_nodes_searched(plies):
    """Black to move with a double three (and a VCT) on the board: below the root, each node
    with black to move, two plies down, has it too. Those nodes are solved only when the leaf
    VCT runs at every ply, not when it is kept to the root's moves."""
    from tests.test_vct import DOUBLE_THREE, picture

    pos = picture(DOUBLE_THREE)
    cfg = SearchConfig(num_simulations=200, vct_leaf_budget=10**5, vct_leaf_depth=1,
                       vct_leaf_plies=plies)
    forest = Forest(pos.config, cfg, 1)
    forest.reset(0, pos)
    forest.run(uniform_evaluator)
    wins = _solved_wins_by_ply(forest)
    assert (wins.get(2, 0) > 0) == (plies == 0), wins


def test_bad_vcf_budgets():
    with pytest.raises(ValueError, match="vcf_leaf_budget"):
        SearchConfig(vcf_leaf_budget=-1)
    with pytest.raises(ValueError, match="vcf_root_budget"):
        SearchConfig(vcf_root_budget=1.5)
    assert SearchConfig(vcf_leaf_budget=30).vcf_root == 300
    with pytest.raises(ValueError, match="vct_leaf_budget"):
        SearchConfig(vct_leaf_budget=-5)
    with pytest.raises(ValueError, match="vct_leaf_depth"):
        SearchConfig(vct_leaf_budget=100, vct_leaf_depth=0)
    with pytest.raises(ValueError, match="vct_leaf_plies"):
        SearchConfig(vct_leaf_budget=100, vct_leaf_plies=-1)
