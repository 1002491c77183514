"""Gumbel AlphaZero at the root: the halving plan, completed Q and the policy target against the
plain-Python reference, a known bandit, and one test for each pitfall that made a public
implementation learn nothing (LightZero#493, listed in the research notes)."""

from __future__ import annotations

import numpy as np
import pytest

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import BLACK
from alphagomoku.mcts import Forest, SearchConfig, uniform_evaluator
from alphagomoku.mcts.gumbel import considered_visit
from alphagomoku.mcts.tree import (
    FIRST_EDGE,
    FORCED,
    NODES_USED,
    NUM_CHILDREN,
    NUM_EDGES,
    RAW,
    ROOT,
    SOLVED_LOSS,
    SOLVED_WIN,
    STATUS,
    UNSOLVED,
    VALUE_SUM,
    VISITS,
)
import reference_gumbel as ref

GAME = GameConfig(width=9)


def gumbel_cfg(n=17, m=8, **kw) -> SearchConfig:
    return SearchConfig(num_simulations=n, root_rule="gumbel", gumbel_m=m, **kw)


def random_evaluator(seed: int):
    """Random priors and values: a stand-in network that makes irregular trees."""
    rng = np.random.default_rng(seed)

    def evaluate(planes, legal):
        priors = rng.dirichlet(np.full(legal.shape[1], 0.3), size=legal.shape[0]).astype(np.float32)
        return priors, rng.uniform(-0.9, 0.9, legal.shape[0]).astype(np.float32)

    return evaluate


def root_edges(forest: Forest, t: int = 0, x: int = ROOT):
    """Node ``x``'s edges as the reference sees them: move, prior, visits, q (x's view)."""
    tr = forest.arrays
    first = int(tr.nodes[t, x, FIRST_EDGE])
    k = int(tr.nodes[t, x, NUM_EDGES])
    taken = int(tr.nodes[t, x, NUM_CHILDREN])
    rows = []
    for i in range(k):
        e = first + i
        visits, q = 0, 0.0
        if i < taken:
            c = tr.edge_child[t, e]
            visits = int(tr.nodes[t, c, VISITS])
            status = tr.nodes[t, c, STATUS]
            if status == SOLVED_WIN:
                q = -1.0
            elif status == SOLVED_LOSS:
                q = 1.0
            elif visits:
                q = -tr.values[t, c, VALUE_SUM] / visits
        rows.append((int(tr.edge_move[t, e]), float(tr.edge_prior[t, e]), visits, q))
    return rows, float(tr.values[t, x, RAW])


# -- the sequential-halving plan ----------------------------------------------------------------

@pytest.mark.parametrize("m,n", [(1, 5), (2, 7), (3, 10), (4, 16), (8, 16), (16, 32), (16, 64),
                                 (16, 200), (5, 3), (32, 100), (8, 7)])
def test_considered_visits_follow_mctx_plan(m, n):
    assert [considered_visit(m, n, i) for i in range(n)] == ref.considered_visits(m, n)


def test_halving_tables_of_the_research_notes():
    # m, n = 8, 16: 8x1, 4x1, 2x2.
    assert ref.considered_visits(8, 16) == [0] * 8 + [1] * 4 + [2, 2, 3, 3]
    # m, n = 16, 64: 16x1, 8x2, 4x4, 2x8.
    plan = ref.considered_visits(16, 64)
    assert plan[:16] == [0] * 16 and plan[16:32] == [1] * 8 + [2] * 8
    assert plan[32:48] == [3] * 4 + [4] * 4 + [5] * 4 + [6] * 4 and plan[48:] == [7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14]


@pytest.mark.parametrize("m,n", [(4, 12), (8, 16), (16, 32), (16, 64)])
def test_search_visits_match_the_plan(m, n):
    forest = Forest(GAME, gumbel_cfg(n + 1, m), 1, seed=3)
    forest.reset(0, Position.from_moves(["e5"], GAME))
    forest.run(random_evaluator(1))
    visits = sorted((int(v) for v in forest.visit_counts(0) if v > 0), reverse=True)
    # Candidate c of the plan ends with as many visits as the plan has rounds reaching it:
    # the plan reaches the top k candidates at each level, so count per level.
    plan = ref.considered_visits(m, n)
    reached = [plan.count(level) for level in range(max(plan) + 1)]
    finals = [sum(1 for r in reached if r > c) for c in range(m)]
    assert sum(visits) == n and visits == [f for f in finals if f > 0]


# -- completed Q and the policy target against the reference -------------------------------------

@pytest.mark.parametrize("seed", range(12))
def test_improved_policy_and_move_match_reference(seed):
    rng = np.random.default_rng(seed)
    pos = Position(GAME)
    for mv in rng.choice(GAME.area, size=int(rng.integers(0, 12)), replace=False):
        pos.play(int(mv))
        if pos.is_over:
            pos.undo()
    n = int(rng.integers(3, 60))
    m = int(rng.choice([2, 4, 8, 16]))
    forest = Forest(GAME, gumbel_cfg(n, m, gumbel_c_scale=float(rng.choice([0.1, 1.0]))), 1,
                    seed=seed)
    forest.reset(0, pos)
    forest.run(random_evaluator(seed))
    rows, raw = root_edges(forest)
    priors = [r[1] for r in rows]
    visits = [r[2] for r in rows]
    qs = [r[3] for r in rows]
    cfg = forest.cfg
    want = np.zeros(GAME.area)
    for (move, *_), p in zip(rows, ref.improved_policy(priors, visits, qs, raw,
                                                          cfg.gumbel_c_visit, cfg.gumbel_c_scale)):
        want[move] = p
    got = forest.improved_policy(0)
    np.testing.assert_allclose(got, want, atol=1e-5)
    # The move: the best survivor of the halving by g + logit + sigma(q).
    tr = forest.arrays
    s = ref.sigma(ref.completed_q(priors, visits, qs, raw), visits, cfg.gumbel_c_visit,
                  cfg.gumbel_c_scale)
    top = max(visits)
    scores = {rows[i][0]: tr.gumbel[0, i] + np.log(max(priors[i], 1e-30)) + s[i]
              for i in range(min(m, len(rows))) if visits[i] == top}
    assert forest.gumbel_move(0) == max(scores, key=scores.get)


# -- a known bandit ----------------------------------------------------------------------------

def bandit_evaluator(root: Position, q: np.ndarray, prior: np.ndarray):
    """Value of a leaf = the mean q of the arms the root's mover has added (its own view), so the
    root's moves form a bandit with means ``q`` whatever the depth the search reaches."""
    mover = root.to_move
    root_board = root.board.copy()

    def evaluate(planes, legal):
        b = planes.shape[0]
        values = np.zeros(b, dtype=np.float32)
        for j in range(b):
            own_is_mover = (planes[j, 3, 0, 0] == 1.0) == (mover == BLACK)
            mine = planes[j, 0 if own_is_mover else 1].reshape(-1) > 0
            added = np.flatnonzero(mine & (root_board == 0))
            v = float(q[added].mean()) if added.size else 0.0
            values[j] = v if own_is_mover else -v
        return np.repeat(prior[None, :], b, axis=0), values

    return evaluate


def test_bandit_target_favours_the_best_arm():
    pos = Position.from_moves(["e5"], GAME)
    q = np.full(GAME.area, -0.4)
    best = 20
    q[best] = 0.6
    q[21] = 0.3
    prior = np.ones(GAME.area, dtype=np.float32)
    prior[[best, 21]] = 20.0  # both in the candidates for certain, the best not favoured
    forest = Forest(GAME, gumbel_cfg(65, 16), 1, seed=5)
    forest.reset(0, pos)
    forest.run(bandit_evaluator(pos, q, prior))
    target = forest.improved_policy(0)
    assert target[best] > 0.5 and target[best] > 2 * target[21]
    assert forest.gumbel_move(0) == best


# -- the pitfalls --------------------------------------------------------------------------------

def test_pitfall_policy_is_indexed_by_move_not_edge_slot():
    """Edges are reordered by g + logit; the target must land on the moves, not the slots."""
    pos = Position.from_moves(["e5"], GAME)
    prior = np.ones(GAME.area, dtype=np.float32)
    prior[70] = 500.0
    forest = Forest(GAME, gumbel_cfg(9, 4), 1, seed=2)
    forest.reset(0, pos)
    forest.run(lambda p, legal: (np.repeat(prior[None], len(p), 0), np.zeros(len(p), np.float32)))
    first = int(forest.arrays.nodes[0, ROOT, FIRST_EDGE])
    assert forest.arrays.edge_move[0, first] == 70  # the top candidate sits in slot 0
    target = forest.improved_policy(0)
    assert int(np.argmax(target)) == 70 and target[70] > 0.5
    assert target[pos.board != 0].sum() == 0.0


def test_pitfall_gumbel_drawn_anew_for_every_search():
    pos = Position.from_moves(["e5"], GAME)
    forest = Forest(GAME, gumbel_cfg(9, 4), 1, seed=4)
    forest.reset(0, pos)
    forest.run(uniform_evaluator)
    first = forest.arrays.gumbel[0, :80].copy()
    forest.advance(0, forest.gumbel_move(0))
    assert forest.root_visits(0) == 0  # a Gumbel tree starts over after a move
    forest.run(uniform_evaluator)
    second = forest.arrays.gumbel[0, :79].copy()
    assert not np.allclose(first[:79], second)
    # Same seed, same draws: reproducible.
    again = Forest(GAME, gumbel_cfg(9, 4), 1, seed=4)
    again.reset(0, pos)
    again.run(uniform_evaluator)
    np.testing.assert_array_equal(again.arrays.gumbel[0, :80], first)


def test_pitfall_no_dirichlet_noise_with_gumbel():
    with pytest.raises(ValueError, match="dirichlet_eps"):
        SearchConfig(root_rule="gumbel", dirichlet_eps=0.25)
    pos = Position.from_moves(["e5"], GAME)
    evaluate = random_evaluator(9)
    priors, _ = evaluate(np.zeros((1, 5, 9, 9), np.float32), pos.legal_mask()[None])
    forest = Forest(GAME, gumbel_cfg(9, 4), 1, seed=1)
    forest.reset(0, pos)
    forest.run(lambda p, legal: (np.repeat(priors, len(p), 0), np.zeros(len(p), np.float32)))
    legal = pos.legal_mask()
    want = priors[0] * legal / (priors[0] * legal).sum()
    np.testing.assert_allclose(forest.root_priors(0), want, rtol=1e-5, atol=1e-7)


def test_pitfall_move_is_not_drawn_from_flat_halving_visits():
    """After halving the finalists share the top visit count; with q far apart (c_scale 1) the
    move is the better finalist every time, never a draw in proportion to the visits."""
    pos = Position.from_moves(["e5"], GAME)
    q = np.full(GAME.area, -0.5)
    q[30], q[31] = 0.2, 0.7
    prior = np.ones(GAME.area, dtype=np.float32)
    prior[[30, 31]] = 50.0
    for seed in range(6):
        forest = Forest(GAME, gumbel_cfg(17, 8, gumbel_c_scale=1.0), 1, seed=seed)
        forest.reset(0, pos)
        forest.run(bandit_evaluator(pos, q, prior))
        visits = forest.visit_counts(0)
        assert visits[30] == visits[31] == visits.max()
        assert forest.gumbel_move(0) == 31


def test_pitfall_non_candidates_are_never_visited():
    """Moves outside the m sampled ones stay unvisited however good they are: their exclusion
    is by position, not by a clipped -inf score."""
    pos = Position.from_moves(["e5"], GAME)
    q = np.full(GAME.area, 0.9)  # every move excellent ...
    prior = np.full(GAME.area, 1e-6, dtype=np.float32)
    cand = [10, 11, 12, 13]
    prior[cand] = 1.0            # ... but only these four are likely candidates
    q[cand] = -0.9
    forest = Forest(GAME, gumbel_cfg(65, 4), 1, seed=8)
    forest.reset(0, pos)
    forest.run(bandit_evaluator(pos, q, prior))
    visits = forest.visit_counts(0)
    assert set(np.flatnonzero(visits)) == set(cand) and visits.sum() == 64


def test_forced_root_target_is_one_hot():
    # Black threatens five at a row; white to move must block at the one open end.
    pos = Position.from_moves(["a1", "a9", "b1", "b9", "c1", "c9", "d1"], GAME)
    forest = Forest(GAME, gumbel_cfg(9, 4), 1, seed=0)
    forest.reset(0, pos)
    forest.run(uniform_evaluator)
    target = forest.improved_policy(0)
    assert target.max() == 1.0
    assert forest.gumbel_move(0) == pos.index("e1") and target[pos.index("e1")] == 1.0


def test_budget_sets_fast_searches():
    forest = Forest(GAME, gumbel_cfg(33, 8), 2, seed=0)
    pos = Position.from_moves(["e5"], GAME)
    forest.reset(0, pos)
    forest.reset(1, pos)
    forest.set_budget(1, 9)
    forest.run(uniform_evaluator)
    assert forest.root_visits(0) == 33 and forest.root_visits(1) == 9
    # The halving plan follows each tree's own budget: 8 children visits, m = 8 -> 8 x 1.
    assert sorted(forest.visit_counts(1)[forest.visit_counts(1) > 0]) == [1] * 8
    assert forest.visit_counts(0).max() > 1
    with pytest.raises(ValueError, match="simulations"):
        forest.set_budget(0, 34)


def test_move_value_is_the_childs_mean_for_the_mover():
    pos = Position.from_moves(["e5"], GAME)
    forest = Forest(GAME, gumbel_cfg(17, 4), 1, seed=0)
    forest.reset(0, pos)
    forest.run(random_evaluator(3))
    rows, _ = root_edges(forest)
    visited = [(move, q) for move, _, n, q in rows if n > 0]
    assert len(visited) == 4
    for move, q in visited:
        assert forest.move_value(0, move) == pytest.approx(q)
    unvisited = next(move for move, _, n, _ in rows if n == 0)
    assert forest.move_value(0, unvisited) == forest.root_value(0)


def test_puct_forest_refuses_gumbel_queries():
    forest = Forest(GAME, SearchConfig(num_simulations=8), 1)
    forest.reset(0, Position(GAME))
    forest.run(uniform_evaluator)
    with pytest.raises(ValueError, match="visit distribution"):
        forest.improved_policy(0)


# -- the deterministic rule below the root --------------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_interior_rule_matches_reference_on_random_trees(seed):
    """At every expanded node below the root of a searched tree, the kernel's edge is the
    reference's argmax over all legal moves (so the taken-prefix shortcut loses nothing)."""
    from alphagomoku.mcts.gumbel import select_interior

    rng = np.random.default_rng(100 + seed)
    pos = Position(GAME)
    for mv in rng.choice(GAME.area, size=int(rng.integers(0, 10)), replace=False):
        pos.play(int(mv))
        if pos.is_over:
            pos.undo()
    cfg = gumbel_cfg(int(rng.integers(20, 120)), int(rng.choice([2, 4, 8])), interior_rule="gumbel",
                     gumbel_c_scale=float(rng.choice([0.1, 1.0])))
    forest = Forest(GAME, cfg, 1, seed=seed)
    forest.reset(0, pos)
    forest.run(random_evaluator(seed))
    tr = forest.arrays
    checked = 0
    for x in range(1, int(tr.roots[0, NODES_USED])):
        if tr.nodes[0, x, VISITS] < 2 or tr.nodes[0, x, STATUS] != UNSOLVED or tr.nodes[0, x, FORCED]:
            continue
        rows, raw = root_edges(forest, 0, x)
        visits = [r[2] for r in rows]
        best, scores = ref.interior_choice([r[1] for r in rows], visits, visits, [r[3] for r in rows],
                                           raw, cfg.gumbel_c_visit, cfg.gumbel_c_scale)
        e = select_interior(tr.nodes, tr.values, tr.edge_prior, tr.edge_child, forest._params, 0, x)
        got = e - int(tr.nodes[0, x, FIRST_EDGE])
        assert scores[got] == pytest.approx(scores[best], abs=1e-9), (x, got, best)
        checked += 1
    assert checked >= 1


def test_interior_rule_counts_walks_in_flight():
    """A walk in flight counts as a visit in the rule's visit term, so parallel walks spread."""
    assert ref.interior_choice([0.6, 0.4], [3, 0], [3, 0], [0.0, 0.0], 0.0)[0] == 1
    # Equal priors and values: the child with a walk in flight is passed over.
    assert ref.interior_choice([0.5, 0.5], [2, 2], [3, 2], [0.1, 0.1], 0.1)[0] == 1
    forest = Forest(GAME, gumbel_cfg(40, 4, interior_rule="gumbel", leaves_per_tree=4), 1, seed=2)
    forest.reset(0, Position.from_moves(["e5"], GAME))
    forest.run(random_evaluator(3))
    assert forest.visit_counts(0).sum() == 39  # every simulation landed with 4 walks at a time


def test_interior_rule_needs_the_gumbel_root():
    with pytest.raises(ValueError, match="needs root_rule 'gumbel'"):
        SearchConfig(interior_rule="gumbel")
    with pytest.raises(ValueError, match="interior_rule must be one of"):
        gumbel_cfg(interior_rule="ucb1")
    with pytest.raises(ValueError, match="both choose below the root"):
        Forest(GAME, gumbel_cfg(interior_rule="gumbel"), 1, selection="ucb1")

