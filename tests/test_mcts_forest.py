"""The Forest: tree invariants, batch independence, the gather/apply cycle, tree reuse, errors."""

import numpy as np
import pytest

from alphagomoku.game import GameConfig, IllegalMoveError, Position
from alphagomoku.game import kernels as game
from alphagomoku.game.constants import BLACK, RENJU
from alphagomoku.mcts import Forest, SearchConfig, search, uniform_evaluator
from alphagomoku.mcts.invariants import tree_problems, walk_tree
from alphagomoku.mcts.kernels import write_planes
from alphagomoku.mcts.tree import EDGES_USED, NODES_USED, PARENT, VISITS


def hashed_evaluator(planes, legal):
    """Priors and values that depend on each leaf's planes alone (elementwise and per-row
    arithmetic), so a leaf gets the same answer in any batch."""
    n, points = legal.shape
    flat = planes.reshape(n, -1).astype(np.float64)
    own, opp = flat[:, :points], flat[:, points:2 * points]
    idx = np.arange(points)
    black_to_move = flat[:, 3 * points:3 * points + 1]
    priors = legal * (1.2 + np.sin(3.0 * own + 5.0 * opp + 0.37 * idx + black_to_move))
    values = np.tanh(0.3 * (own * np.cos(idx)).sum(axis=1) - 0.2 * (opp * np.sin(idx)).sum(axis=1))
    return priors.astype(np.float32), values.astype(np.float32)


def random_position(game: GameConfig, plies: int, rng) -> Position:
    """A position after up to ``plies`` random legal moves, never a finished one."""
    while True:
        pos = Position(game)
        for _ in range(plies):
            pos.play(int(rng.choice(pos.legal_moves())))
            if pos.is_over:
                break
        if not pos.is_over:
            return pos


@pytest.mark.parametrize("rule, leaves, eps", [
    ("freestyle", 1, 0.0), ("standard", 4, 0.25), ("renju", 1, 0.0), ("renju", 3, 0.25),
])
def test_random_searches_keep_the_tree_invariants(rule, leaves, eps):
    game_cfg = GameConfig(width=9, rule=rule)
    cfg = SearchConfig(num_simulations=150, leaves_per_tree=leaves, dirichlet_eps=eps)
    rng = np.random.default_rng(3)
    forest = Forest(game_cfg, cfg, 4, seed=5)
    positions = [random_position(game_cfg, int(rng.integers(0, 30)), rng) for _ in range(4)]
    for i, pos in enumerate(positions):
        forest.reset(i, pos)
    forest.run(hashed_evaluator)
    for i in range(4):
        assert forest.root_visits(i) == 150
        assert tree_problems(forest, i) == []
        assert -1.0 <= forest.root_value(i) <= 1.0
        visits = forest.visit_counts(i)
        assert visits.sum() <= 149 and (visits[~positions[i].legal_mask()] == 0).all()


def test_renju_search_never_visits_a_forbidden_point():
    game_cfg = GameConfig(width=9, rule="renju")
    pos = Position.from_picture("""
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . . .
        . . . . X . . . .
        . . X X . . . . .
        . . . . . . . . .
        . . . O . O . O .
        . . . . . . . O .
        . . . . . . . . .
    """, game_cfg)
    forbidden = [p for p in range(81) if pos.board[p] == 0 and pos.is_forbidden(p)]
    assert pos.to_move == BLACK and forbidden  # the fixture has a double three for black
    forest = Forest(game_cfg, SearchConfig(num_simulations=400, fpu_reduction=0.0), 1)
    forest.reset(0, pos)
    forest.run(hashed_evaluator)
    assert (forest.visit_counts(0)[forbidden] == 0).all()
    assert (forest.root_priors(0)[forbidden] == 0).all()
    black_nodes = 0
    for _, board, color, depth in walk_tree(forest, 0):
        if color == BLACK and depth > 0:
            black_nodes += 1
    assert black_nodes > 10
    assert tree_problems(forest, 0) == []  # edges = legal moves, at every node of the tree


def test_k_trees_together_match_each_tree_searched_alone():
    game_cfg = GameConfig(width=9)
    cfg = SearchConfig(num_simulations=120, leaves_per_tree=4, dirichlet_eps=0.25)
    rng = np.random.default_rng(11)
    positions = [random_position(game_cfg, int(rng.integers(0, 20)), rng) for _ in range(5)]
    together = Forest(game_cfg, cfg, 5)
    for i, pos in enumerate(positions):
        together.reset(i, pos, seed=100 + i)
    together.run(hashed_evaluator)
    for i, pos in enumerate(positions):
        alone = Forest(game_cfg, cfg, 1, seed=100 + i)
        alone.reset(0, pos)
        alone.run(hashed_evaluator)
        np.testing.assert_array_equal(together.visit_counts(i), alone.visit_counts(0))
        assert together.root_value(i) == alone.root_value(0)
        np.testing.assert_array_equal(together.root_priors(i), alone.root_priors(0))


def test_in_kernel_uniform_evaluation_matches_the_python_loop():
    game_cfg = GameConfig(width=9)
    cfg = SearchConfig(num_simulations=200, leaves_per_tree=3, dirichlet_eps=0.25)
    pos = random_position(game_cfg, 6, np.random.default_rng(2))
    fused, looped = Forest(game_cfg, cfg, 2, seed=9), Forest(game_cfg, cfg, 2, seed=9)
    for forest in (fused, looped):
        forest.reset(0, pos)
        forest.reset(1, Position(game_cfg))
    fused.run(uniform_evaluator)
    looped.run(lambda planes, legal: uniform_evaluator(planes, legal))
    for i in range(2):
        np.testing.assert_array_equal(fused.visit_counts(i), looped.visit_counts(i))
        assert fused.root_value(i) == looped.root_value(i)


def test_gather_hands_out_planes_and_legal_masks_of_the_leaves():
    game_cfg = GameConfig(width=7, n_in_row=4)
    pos = Position.from_moves([24, 25, 17], game_cfg)
    forest = Forest(game_cfg, SearchConfig(num_simulations=10, leaves_per_tree=2), 3)
    forest.reset(1, pos)
    n = forest.gather()
    assert n == 1  # only tree 1 has a root, and its first leaf is the root itself
    np.testing.assert_array_equal(forest.planes[0], pos.planes())
    np.testing.assert_array_equal(forest.legal[0], pos.legal_mask())
    forest.apply(*hashed_evaluator(forest.planes[:n], forest.legal[:n]))
    n = forest.gather(np.array([False, True, False]))
    assert n == 2  # two leaves from tree 1, kept apart by virtual loss
    for j in range(n):
        board = np.zeros(49, dtype=np.int8)
        own, opp = forest.planes[j, 0].ravel(), forest.planes[j, 1].ravel()
        color = BLACK if forest.planes[j, 3, 0, 0] == 1 else 3 - BLACK
        board[own == 1] = color
        board[opp == 1] = 3 - color
        assert (board != pos.board).sum() == 1  # one move below the root
        legal = np.zeros(49, dtype=np.bool_)
        game.legal_mask_into(board, 7, 7, game_cfg.rule_id, color, legal)
        np.testing.assert_array_equal(forest.legal[j], legal)
    forest.apply(*uniform_evaluator(forest.planes[:n], forest.legal[:n]))
    assert forest.root_visits(1) == 3


def test_leaf_planes_match_the_game_encoder_under_renju():
    rng = np.random.default_rng(4)
    game_cfg = GameConfig(width=9, rule="renju")
    for _ in range(20):
        pos = random_position(game_cfg, int(rng.integers(4, 40)), rng)
        expected = np.zeros((5, 9, 9), dtype=np.float32)
        game.encode_planes_into(pos.board, 9, 9, RENJU, pos.to_move, pos.last_move, expected)
        got = np.zeros_like(expected)
        write_planes(pos.board, 9, 9, pos.to_move, pos.last_move, pos.legal_mask(),
                     pos.to_move == BLACK, got)
        np.testing.assert_array_equal(got, expected)


def test_terminal_leaves_are_backed_up_without_the_evaluator():
    # Every black move ends the game here: wins, or fills the board for a draw.
    forest = Forest.on_board(3, 3, 3, "freestyle", SearchConfig(num_simulations=30), 1)
    board = np.array([1, 2, 1, 1, 2, 2, 2, 1, 0], dtype=np.int8)
    forest.reset_board(0, board, BLACK)
    assert forest.gather() == 1  # the root
    forest.apply(np.ones((1, 9), np.float32), np.zeros(1, np.float32))
    assert forest.gather() == 0  # its only child is terminal: backed up in the kernel
    assert forest.root_visits(0) == 30
    assert forest.root_value(0) == 0.0 and forest.visit_counts(0)[8] == 29


def test_tree_reuse_keeps_the_chosen_childs_statistics():
    game_cfg = GameConfig(width=9)
    cfg = SearchConfig(num_simulations=300, dirichlet_eps=0.0)
    forest = Forest(game_cfg, cfg, 1)
    pos = Position.from_moves([40, 41], game_cfg)
    forest.reset(0, pos)
    forest.run(hashed_evaluator)
    move = int(np.argmax(forest.visit_counts(0)))
    # Statistics below the chosen child, read by walking the tree before the move.
    nodes = forest.arrays.nodes
    walked = list(walk_tree(forest, 0))
    child = next(x for x, board, _, depth in walked if depth == 1 and board[move] != 0)
    child_visits = int(nodes[0, child, VISITS])
    before = {}
    for x, board, _, depth in walked:
        if depth == 2 and nodes[0, x, PARENT] == child:
            second = [m for m in np.flatnonzero(board != pos.board) if m != move][0]
            before[int(second)] = int(nodes[0, x, VISITS])
    forest.advance(0, move)
    assert forest.root_visits(0) == child_visits > 1
    after = forest.visit_counts(0)
    assert {int(m): int(after[m]) for m in np.flatnonzero(after)} == before
    assert tree_problems(forest, 0) == []
    assert forest.num_nodes(0) <= child_visits
    assert forest.position(0).moves == pos.moves + [move]
    forest.run(hashed_evaluator)  # searching on counts the kept visits
    assert forest.root_visits(0) == 300 and tree_problems(forest, 0) == []


def test_memory_stays_bounded_over_many_games():
    game_cfg = GameConfig(width=6, n_in_row=4)
    cfg = SearchConfig(num_simulations=40, leaves_per_tree=2, dirichlet_eps=0.25)
    forest = Forest(game_cfg, cfg, 2, seed=1)
    arrays_before = [a.ctypes.data for a in forest.arrays]
    bytes_before = forest.memory_bytes()
    rng = np.random.default_rng(0)
    most_nodes = most_edges = 0
    games = 0
    positions = [Position(game_cfg), Position(game_cfg)]
    for i in range(2):
        forest.reset(i, positions[i])
    while games < 30:
        forest.run(hashed_evaluator)
        most_nodes = max(most_nodes, int(forest.arrays.roots[:, NODES_USED].max()))
        most_edges = max(most_edges, int(forest.arrays.roots[:, EDGES_USED].max()))
        for i in range(2):
            visits = forest.visit_counts(i)
            move = int(rng.choice(36, p=visits / visits.sum()))
            positions[i].play(move)
            if positions[i].is_over:
                games += 1
                positions[i] = Position(game_cfg)
                forest.reset(i, positions[i])
            else:
                forest.advance(i, move)
                assert tree_problems(forest, i) == []
    assert most_nodes <= forest.max_nodes == 40 + 2 + 1
    assert most_edges <= forest.max_nodes * 36
    assert [a.ctypes.data for a in forest.arrays] == arrays_before
    assert forest.memory_bytes() == bytes_before


def test_advance_to_a_move_never_searched_starts_a_fresh_root():
    game_cfg = GameConfig(width=9)
    forest = Forest(game_cfg, SearchConfig(num_simulations=20), 1)
    forest.reset(0, Position(game_cfg))
    forest.run(uniform_evaluator)
    unvisited = int(np.flatnonzero(forest.visit_counts(0) == 0)[-1])
    forest.advance(0, unvisited)
    assert forest.root_visits(0) == 0 and forest.num_nodes(0) == 1
    forest.run(uniform_evaluator)
    assert forest.root_visits(0) == 20 and forest.visit_counts(0)[unvisited] == 0


def test_a_game_ending_move_leaves_the_tree_idle():
    game_cfg = GameConfig(width=7, n_in_row=4)
    pos = Position.from_moves([0, 7, 1, 8, 2, 9], game_cfg)
    forest = Forest(game_cfg, SearchConfig(num_simulations=10), 1)
    forest.reset(0, pos)
    forest.run(uniform_evaluator)
    forest.advance(0, 3)
    assert not forest.is_live(0)
    assert forest.position(0).is_over
    forest.run(uniform_evaluator)  # nothing to do
    with pytest.raises(ValueError, match="nothing to search"):
        forest.gather(np.array([True]))


def test_forest_rejects_misuse_with_clear_errors():
    game_cfg = GameConfig(width=7, n_in_row=4)
    forest = Forest(game_cfg, SearchConfig(num_simulations=10), 2)
    with pytest.raises(ValueError, match="nothing to search"):
        forest.gather(np.array([True, False]))
    with pytest.raises(ValueError, match="active must be a bool array"):
        forest.gather(np.array([1, 0]))
    with pytest.raises(ValueError, match="is for"):
        forest.reset(0, Position(GameConfig(width=9)))
    with pytest.raises(ValueError, match="game is over"):
        forest.reset(0, Position.from_moves([0, 7, 1, 8, 2, 9, 3], game_cfg))
    with pytest.raises(IndexError):
        forest.reset(2, Position(game_cfg))
    forest.reset(0, Position(game_cfg))
    n = forest.gather()
    with pytest.raises(RuntimeError, match="await apply"):
        forest.gather()
    with pytest.raises(RuntimeError, match="await apply"):
        forest.advance(0, 3)
    with pytest.raises(ValueError, match="priors must have shape"):
        forest.apply(np.ones((n, 48), np.float32), np.zeros(n, np.float32))
    with pytest.raises(ValueError, match="finite and non-negative"):
        forest.apply(np.full((n, 49), np.nan, np.float32), np.zeros(n, np.float32))
    with pytest.raises(ValueError, match=r"in \[-1, 1\]"):
        forest.apply(np.ones((n, 49), np.float32), np.full(n, 2.0, np.float32))
    forest.apply(np.ones((n, 49), np.float32), np.zeros(n, np.float32))
    forest.run(uniform_evaluator)
    forest.advance(0, int(np.argmax(forest.visit_counts(0))))
    with pytest.raises(IllegalMoveError, match="occupied"):
        forest.advance(0, forest.position(0).moves[-1])
    with pytest.raises(ValueError, match="max_nodes"):
        Forest(game_cfg, SearchConfig(leaves_per_tree=4), 1, max_nodes=3)
    with pytest.raises(TypeError, match="GameConfig"):
        Forest((7, 7), SearchConfig(), 1)


def test_a_rejected_answer_changes_nothing_and_rounding_past_one_is_clipped():
    game_cfg = GameConfig(width=7, n_in_row=4)
    forest = Forest(game_cfg, SearchConfig(num_simulations=10), 2)
    for i in range(2):
        forest.reset(i, Position(game_cfg))
    n = forest.gather()
    before = forest._trees.nodes.copy(), forest._trees.values.copy()
    priors = np.ones((n, 49), np.float32)
    for bad_priors, bad_values in ((np.inf, 0.0), (-1.0, 0.0), (1.0, np.nan), (1.0, -1.001)):
        p = priors.copy()
        p[-1, 3] = bad_priors
        v = np.zeros(n, np.float32)
        v[-1] = bad_values
        with pytest.raises(ValueError, match="finite"):
            forest.apply(p, v)
        assert np.array_equal(forest._trees.nodes, before[0])
        assert np.array_equal(forest._trees.values, before[1])
    values = np.array([1.00005, -1.00005][:n], np.float32)
    forest.apply(priors, values)
    assert values[0] == np.float32(1.00005)  # the caller's array as it was
    assert forest.root_value(0) == 1.0 and (n < 2 or forest.root_value(1) == -1.0)


def test_running_out_of_nodes_is_reported():
    game_cfg = GameConfig(width=7, n_in_row=4)
    forest = Forest(game_cfg, SearchConfig(num_simulations=100), 1, max_nodes=20)
    forest.reset(0, Position(game_cfg))
    with pytest.raises(RuntimeError, match="max_nodes"):
        forest.run(hashed_evaluator)
    forest.reset(0, Position(game_cfg))
    with pytest.raises(RuntimeError, match="max_nodes"):
        forest.run(uniform_evaluator)


def test_root_noise_is_seeded_and_keeps_priors_normalised():
    game_cfg = GameConfig(width=9)
    cfg = SearchConfig(num_simulations=5, dirichlet_eps=0.25)
    priors = []
    for seed in (1, 1, 2):
        forest = Forest(game_cfg, cfg, 1, seed=seed)
        forest.reset(0, Position(game_cfg))
        forest.run(uniform_evaluator)
        priors.append(forest.root_priors(0))
    np.testing.assert_array_equal(priors[0], priors[1])
    assert not np.array_equal(priors[0], priors[2])
    for p in priors:
        assert abs(p.sum() - 1) < 1e-5 and p.max() > 1.5 / 81  # noise moved mass around
    quiet = search(Position(game_cfg), uniform_evaluator, cfg.replace(dirichlet_eps=0.0))
    assert quiet.visits.sum() == 4
