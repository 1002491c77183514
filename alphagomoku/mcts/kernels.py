"""Compiled PUCT search on the flat arrays of :mod:`alphagomoku.mcts.tree`.

One simulation walks from the root to a leaf, choosing at each node the edge with the best
score, and ends in one of three ways: the leaf's value is known exactly (the game is over there,
or the leaf is solved by an immediate win or an unstoppable threat) and is backed up at once;
or the leaf needs the evaluator and is handed out in the LeafBatch, with virtual loss on its path
until apply() expands it and backs its value up; or the walk runs into a leaf already in flight
(a collision), and the tree stops gathering for this call.

Kernels take arrays and scalars only, trust their arguments (the Python layer validates) and
never allocate per node or per leaf. The public kernels take the TreeArrays / LeafBatch /
Scratch tuples and unpack them once; the helpers they call take the arrays themselves, since a
call that passes a tuple of arrays costs a reference-count update per array (more than a whole
selection step). The evaluator is never called from here: ``gather`` and ``apply`` are the two
halves around it. Whole searches with the uniform evaluator or random rollouts, which need no
network, are in :mod:`alphagomoku.mcts.playouts`; tree reuse is in :mod:`alphagomoku.mcts.reuse`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.game import kernels as game
from alphagomoku.game import vcf as vcf_solver
from alphagomoku.game import threat_planes, vcf_planes
from alphagomoku.game import vct as vct_solver
from alphagomoku.game.constants import BLACK, EMPTY, FREESTYLE, NO_MOVE, RENJU
from alphagomoku.mcts import gumbel as gumbel_root
from alphagomoku.mcts import threats
from alphagomoku.mcts.batch_checks import ANSWERS_OK, check_answers
from alphagomoku.mcts.edge_order import order_new_block, promote_next, sort_edges, swap_edges
from alphagomoku.mcts.noise import dirichlet_into
from alphagomoku.mcts.selection import select_edge
from alphagomoku.mcts.tree import (
    COLOR,
    EDGES_USED,
    FIRST_EDGE,
    FORCED,
    FULL,
    IN_FLIGHT,
    LAST_MOVE,
    LEAF_COLOR,
    LEAF_FORCED,
    LEAF_NODE,
    LEAF_STATUS,
    LEAF_TREE,
    NODES_USED,
    NO_NODE,
    NUM_CHILDREN,
    NUM_EDGES,
    OPP_NO_VCF,
    ORDERED,
    PARENT,
    Q,
    RAW,
    ROOT,
    ROOT_GUMBEL,
    SOLVED_DRAW,
    SOLVED_LOSS,
    SOLVED_WIN,
    STATUS,
    STONES,
    THREATS,
    U,
    UNEXPANDED,
    UNSOLVED,
    VALUE_SUM,
    VISITS,
    WINS,
    solved_value_kernel,
)
from alphagomoku.numba_config import JIT

# How one walk down the tree ended.
_NEEDS_EVAL = 0
_EXACT = 1
_COLLIDED = 2
_NO_ROOM = 3


# ---------------------------------------------------------------------------------------------
# Nodes and roots
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _init_node(nodes, values, t, x, parent):
    nodes[t, x, :] = 0
    nodes[t, x, PARENT] = parent
    nodes[t, x, FIRST_EDGE] = UNEXPANDED
    values[t, x, VALUE_SUM] = 0.0
    values[t, x, Q] = 0.0
    values[t, x, U] = 1.0


@njit(**JIT)
def _refresh(nodes, values, virtual_loss, t, x):
    """Recompute the selection terms Q and U of ``x`` after its visits or status changed."""
    n = nodes[t, x, VISITS] + nodes[t, x, IN_FLIGHT]
    st = nodes[t, x, STATUS]
    if st != UNSOLVED:
        q = -solved_value_kernel(st)
    elif n == 0:
        q = 0.0
    else:
        # Visits in flight count as losses for the side choosing x: parallel walks spread out.
        q = -(values[t, x, VALUE_SUM] + virtual_loss * nodes[t, x, IN_FLIGHT]) / n
    values[t, x, Q] = q
    values[t, x, U] = 1.0 / (1.0 + n)


@njit(**JIT)
def clear_tree(tr, t):
    """Drop every node of tree ``t``; leave a fresh root that the next gather evaluates."""
    _init_node(tr.nodes, tr.values, t, ROOT, NO_NODE)
    tr.roots[t, NODES_USED] = 1
    tr.roots[t, EDGES_USED] = 0


@njit(**JIT)
def set_root_position(tr, prm, t, board, color, last_move):
    """Store the root position of tree ``t`` and scan it for immediate wins of both sides."""
    roots = tr.roots
    root_board = tr.root_board
    stones = 0
    for p in range(board.shape[0]):
        root_board[t, p] = board[p]
        if board[p] != EMPTY:
            stones += 1
    roots[t, COLOR] = color
    roots[t, LAST_MOVE] = last_move
    roots[t, STONES] = stones
    b = root_board[t]
    h, w, n, rule = prm.height, prm.width, prm.n_in_row, prm.rule
    threats.scan_wins(b, h, w, n, rule, color, roots[t, WINS:WINS + 2])
    threats.scan_wins(b, h, w, n, rule, 3 - color, roots[t, THREATS:THREATS + 2])


# ---------------------------------------------------------------------------------------------
# Leaves
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def write_planes(board, h, w, color, last_move, legal, mark_forbidden, out):
    """The network input of :func:`alphagomoku.game.kernels.encode_planes_into`, taking black's
    forbidden points from the legal mask already computed instead of testing them again.
    ``out`` (planes, h, w) must be C-contiguous: it is written plane by plane through a flat
    view. Only the first five are written here (the VCF and threat planes by the caller)."""
    area = h * w
    flat = out.reshape(out.shape[0], area)
    other = 3 - color
    for p in range(area):
        s = board[p]
        flat[0, p] = 1.0 if s == color else 0.0
        flat[1, p] = 1.0 if s == other else 0.0
    flat[2, :] = 0.0
    if last_move >= 0:
        flat[2, last_move] = 1.0
    flat[3, :] = 1.0 if color == BLACK else 0.0
    if mark_forbidden:
        for p in range(area):
            flat[4, p] = 1.0 if (board[p] == EMPTY and not legal[p]) else 0.0
    else:
        flat[4, :] = 0.0


@njit(**JIT)
def _finish_leaf(info, leaf_board, legal, planes, prm, j, t, x, board, color, last_move, status,
                 forced, vcf, own_none):
    """Fill leaf slot ``j`` (its legal mask is already in legal[j]) for the evaluator. Returns
    1 when its VCF planes proved that the opponent has no VCF (see tree.OPP_NO_VCF), else 0;
    ``own_none`` (1 or 0) says ``color`` is known to have none."""
    opp_none = np.int64(0)
    info[j, LEAF_TREE] = t
    info[j, LEAF_NODE] = x
    info[j, LEAF_COLOR] = color
    info[j, LEAF_STATUS] = status
    info[j, LEAF_FORCED] = forced
    if prm.leaf_boards:
        leaf_board[j, :] = board
    if prm.write_planes:
        mark = prm.rule == RENJU and color == BLACK
        write_planes(board, prm.height, prm.width, color, last_move, legal[j], mark, planes[j])
        if prm.vcf_plane_budget > 0:
            h, w, n, rule = prm.height, prm.width, prm.n_in_row, prm.rule
            budget = prm.vcf_plane_budget
            if x == ROOT:
                # The root's forced move may be its own win or VCF: no scan to reuse.
                opp_none = np.int64(vcf_planes.write_vcf_planes(
                    board, h, w, n, rule, color, last_move, budget, vcf, planes[j]))
            else:
                opp_none = np.int64(vcf_planes.write_vcf_planes_known(
                    board, h, w, n, rule, color, last_move, forced, budget, vcf, planes[j],
                    own_none))
        if prm.threat_planes > 0:
            threat_planes.write_threat_planes(board, prm.height, prm.width, prm.n_in_row,
                                              prm.rule, color, planes[j], prm.threat_planes)
    return opp_none


@njit(**JIT)
def _root_leaf(roots, info, leaf_board, legal, planes, prm, t, j, board, vcf):
    """The unevaluated root as leaf ``j``, solved from the root's own scan for wins, or by a
    VCF search (its first move then forced). Returns :func:`_finish_leaf`'s flag."""
    color = np.int64(roots[t, COLOR])
    game.legal_mask_into(board, prm.height, prm.width, prm.rule, color, legal[j])
    status = UNSOLVED
    forced = NO_MOVE
    if roots[t, WINS] != NO_MOVE:
        status = SOLVED_WIN
        forced = roots[t, WINS]
    elif roots[t, THREATS + 1] != NO_MOVE:
        status = SOLVED_LOSS
    elif roots[t, THREATS] != NO_MOVE:
        forced = roots[t, THREATS]
        if not legal[j, forced]:
            status = SOLVED_LOSS
            forced = NO_MOVE
    last = np.int64(roots[t, LAST_MOVE])
    if status == UNSOLVED and prm.vcf_root_budget > 0:
        won, _, _ = vcf_solver.solve_known_with(board, prm.height, prm.width, prm.n_in_row,
                                                prm.rule, color, last, forced,
                                                prm.vcf_root_budget, np.int64(0), vcf)
        if won == vcf_solver.WIN:
            status = SOLVED_WIN
            forced = vcf.line[0]
    # int64 everywhere (not the int32 of the arrays, nor literal constants), so that this
    # call and _classify_new's share one compiled _finish_leaf and one solver underneath.
    return _finish_leaf(info, leaf_board, legal, planes, prm, np.int64(j), t, np.int64(ROOT),
                        board, color, last, np.int64(status), np.int64(forced), vcf,
                        np.int64(0))


@njit(**JIT)
def _classify_new(nodes, roots, info, leaf_board, legal, planes, board, points, prm, t, j, x,
                  depth, color, last, before, vct):
    """Decide what the new, non-terminal node ``x`` needs: ``color`` to move, reached by
    ``last``; ``before`` is the mover's own previous move. Returns (outcome, exact value)."""
    vcf = vct.vcf
    h, w, n, rule = prm.height, prm.width, prm.n_in_row, prm.rule
    # An immediate win for the side to move can only come from its own last stone (earlier
    # ones were seen at an ancestor, which would be solved); at depth 1 the root's scan for its
    # opponent, the side now to move, holds them all.
    found = 0
    if depth == 1:
        for i in range(2):
            p = roots[t, THREATS + i]
            if p != NO_MOVE and board[p] == EMPTY and game.would_win(board, h, w, n, rule, p,
                                                                     color):
                found = 1
    else:
        found = threats.wins_through(board, h, w, n, rule, before, color, points, 0)
    if found > 0:
        nodes[t, x, STATUS] = SOLVED_WIN
        return _EXACT, 1.0
    # The opponent's winning points: new ones lie on lines through its last stone.
    found = threats.wins_through(board, h, w, n, rule, last, 3 - color, points, 0)
    if found >= 2:
        nodes[t, x, STATUS] = SOLVED_LOSS
        return _EXACT, -1.0
    forced = points[0] if found == 1 else NO_MOVE
    if game.legal_mask_into(board, h, w, rule, color, legal[j]) == 0:
        nodes[t, x, STATUS] = SOLVED_DRAW  # renju: black has nowhere to play, nobody can win now
        return _EXACT, 0.0
    if forced != NO_MOVE and not legal[j, forced]:
        nodes[t, x, STATUS] = SOLVED_LOSS  # renju: black's only block is forbidden
        return _EXACT, -1.0
    if prm.vct_leaf_budget > 0 and (prm.vct_leaf_plies == 0 or depth <= prm.vct_leaf_plies):
        # A VCF is a VCT too, and the VCT looks for one first, so it stands in for the VCF call.
        vcf_budget = prm.vcf_leaf_budget if prm.vcf_leaf_budget > 0 else 100
        won, _, _ = vct_solver.solve_vct_with(board, h, w, n, rule, color, last,
                                              np.int64(prm.vct_leaf_depth),
                                              np.int64(prm.vct_leaf_budget),
                                              np.int64(vcf_budget), vct)
        if won == vct_solver.WIN:
            nodes[t, x, STATUS] = SOLVED_WIN
            return _EXACT, 1.0
    elif prm.vcf_leaf_budget > 0:
        # The scans above found every immediate win, so the solver can skip its own.
        won, _, _ = vcf_solver.solve_known_with(board, h, w, n, rule, color, last, forced,
                                                prm.vcf_leaf_budget, np.int64(0), vcf)
        if won == vcf_solver.WIN:
            nodes[t, x, STATUS] = SOLVED_WIN
            return _EXACT, 1.0
    # The parent proved the side now to move had no VCF there (see tree.OPP_NO_VCF).
    own_none = np.int64(0)
    if rule == FREESTYLE and nodes[t, nodes[t, x, PARENT], OPP_NO_VCF] != 0:
        own_none = np.int64(1)
    nodes[t, x, OPP_NO_VCF] = _finish_leaf(info, leaf_board, legal, planes, prm, j, t, x, board,
                                           color, last, np.int64(UNSOLVED), np.int64(forced), vcf,
                                           own_none)
    return _NEEDS_EVAL, 0.0


@njit(**JIT)
def _descend(nodes, values, edge_move, edge_prior, edge_child, roots, root_board, gumbel, info,
             leaf_board, legal, planes, board, points, explore, qbuf, prm, t, j, vct):
    """One simulation's walk down tree ``t``. Returns (outcome, node reached, exact value)."""
    board[:] = root_board[t]
    if nodes[t, ROOT, VISITS] == 0:
        if nodes[t, ROOT, IN_FLIGHT] > 0:
            return _COLLIDED, ROOT, 0.0
        nodes[t, ROOT, OPP_NO_VCF] = _root_leaf(roots, info, leaf_board, legal, planes, prm, t, j,
                                                board, vct.vcf)
        return _NEEDS_EVAL, ROOT, 0.0
    h, w = prm.height, prm.width
    area = h * w
    color = np.int64(roots[t, COLOR])
    stones = np.int64(roots[t, STONES])
    last = np.int64(roots[t, LAST_MOVE])
    x = np.int64(ROOT)
    depth = 0
    while True:
        if depth > 0:
            st = nodes[t, x, STATUS]
            if st != UNSOLVED:
                return _EXACT, x, solved_value_kernel(st)
        if depth == 0 and prm.root_rule == ROOT_GUMBEL and nodes[t, x, FORCED] == 0 \
                and nodes[t, x, STATUS] != SOLVED_WIN:
            e = gumbel_root.select_root(nodes, values, edge_prior, edge_child, gumbel, roots, qbuf,
                                        prm, t)
        else:
            e = select_edge(nodes, values, edge_prior, edge_child, explore, prm, t, x, depth == 0)
        move = np.int64(edge_move[t, e])
        board[move] = color
        stones += 1
        before = last
        last = move
        depth += 1
        c = np.int64(edge_child[t, e])
        if c != NO_NODE:
            if nodes[t, c, VISITS] == 0:
                return _COLLIDED, c, 0.0
            x = c
            color = 3 - color
            continue
        c = np.int64(roots[t, NODES_USED])
        if c >= nodes.shape[1]:
            return _NO_ROOM, x, 0.0
        roots[t, NODES_USED] = c + 1
        _init_node(nodes, values, t, c, x)
        edge_child[t, e] = c
        nodes[t, x, NUM_CHILDREN] += 1
        first = np.int64(nodes[t, x, FIRST_EDGE])
        if e + 1 - first >= nodes[t, x, ORDERED] and nodes[t, x, FORCED] == 0:
            promote_next(edge_prior, edge_move, t, e + 1, first + np.int64(nodes[t, x, NUM_EDGES]))
            nodes[t, x, ORDERED] = e + 2 - first
        x = c
        if game.wins_at(board, h, w, prm.n_in_row, prm.rule, move, color):
            nodes[t, x, STATUS] = SOLVED_LOSS
            return _EXACT, x, -1.0
        if stones == area:
            nodes[t, x, STATUS] = SOLVED_DRAW
            return _EXACT, x, 0.0
        outcome, value = _classify_new(nodes, roots, info, leaf_board, legal, planes, board,
                                       points, prm, t, j, x, depth, 3 - color, last, before,
                                       vct)
        return outcome, x, value


@njit(**JIT)
def gather_tree(nodes, values, edge_move, edge_prior, edge_child, roots, root_board, gumbel, info,
                leaf_board, legal, planes, report, board, points, explore, qbuf, prm, t, quota, j,
                vct):
    """Run up to ``quota`` simulations in tree ``t``, handing out at most leaves_per_tree leaves
    from slot ``j`` on; exact leaves are backed up here. Returns the next free slot."""
    sims = 0
    leaves = 0
    while sims < quota and leaves < prm.leaves_per_tree:
        outcome, x, value = _descend(nodes, values, edge_move, edge_prior, edge_child, roots,
                                     root_board, gumbel, info, leaf_board, legal, planes, board,
                                     points, explore, qbuf, prm, t, j, vct)
        if outcome == _COLLIDED:
            break
        if outcome == _NO_ROOM:
            report[t] = FULL
            break
        sims += 1
        if outcome == _EXACT:
            backup(nodes, values, edge_child, prm, t, x, value, False)
            continue
        if prm.leaves_per_tree > 1:
            # With one leaf per tree nothing else walks this tree before apply: no virtual loss.
            while x != NO_NODE:
                nodes[t, x, IN_FLIGHT] += 1
                _refresh(nodes, values, prm.virtual_loss, t, x)
                x = nodes[t, x, PARENT]
        j += 1
        leaves += 1
    return j


@njit(**JIT)
def gather(tr, lb, sc, prm, quota):
    """Select leaves in every tree with quota[t] > 0 (quota = simulations it may run). Returns
    the number of leaves handed out."""
    j = np.int64(0)  # not a literal 0: that would compile gather_tree twice, once for the 0
    for t in range(quota.shape[0]):
        lb.report[t] = 0
        if quota[t] > 0:
            j = gather_tree(tr.nodes, tr.values, tr.edge_move, tr.edge_prior, tr.edge_child,
                            tr.roots, tr.root_board, tr.gumbel, lb.info, lb.board, lb.legal,
                            lb.planes, lb.report, sc.board, sc.points, sc.explore, sc.q, prm, t,
                            quota[t], j, sc.vct)
    return j


# ---------------------------------------------------------------------------------------------
# Expansion and backup
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _add_root_noise(nodes, edge_prior, edge_move, rng, noise, buf_p, buf_m, prm, t):
    first = np.int64(nodes[t, ROOT, FIRST_EDGE])
    k = np.int64(nodes[t, ROOT, NUM_EDGES])
    if first == UNEXPANDED or k == 0:
        return
    dirichlet_into(prm.dirichlet_alpha / k, k, rng[t:t + 1], noise)
    eps = prm.dirichlet_eps
    for i in range(k):
        e = first + i
        edge_prior[t, e] = (1.0 - eps) * edge_prior[t, e] + eps * noise[i]
    if nodes[t, ROOT, FORCED] == 0:
        taken = np.int64(nodes[t, ROOT, NUM_CHILDREN])
        sort_edges(edge_prior, edge_move, buf_p, buf_m, t, first + taken, k - taken)


@njit(**JIT)
def add_root_noise(tr, sc, prm, t):
    """Mix Dirichlet noise (alpha = dirichlet_alpha / legal moves) into the root's priors, and
    keep its untaken edges in prior order."""
    _add_root_noise(tr.nodes, tr.edge_prior, tr.edge_move, tr.rng, sc.noise, sc.priors,
                    sc.moves, prm, t)


@njit(**JIT)
def _prove(nodes, edge_child, t, x, child):
    """Solve ``x`` from its child's new status when it can. Returns True if ``x`` got solved."""
    if nodes[t, x, STATUS] != UNSOLVED:
        return False
    cs = nodes[t, child, STATUS]
    if cs == SOLVED_LOSS:
        nodes[t, x, STATUS] = SOLVED_WIN
        return True
    if cs != SOLVED_WIN:
        return False
    if nodes[t, x, FORCED] != 0:
        nodes[t, x, STATUS] = SOLVED_LOSS  # the only move that did not lose at once loses too
        return True
    ne = np.int64(nodes[t, x, NUM_EDGES])
    if nodes[t, x, NUM_CHILDREN] < ne:
        return False
    first = np.int64(nodes[t, x, FIRST_EDGE])
    for e in range(first, first + ne):
        if nodes[t, edge_child[t, e], STATUS] != SOLVED_WIN:
            return False
    nodes[t, x, STATUS] = SOLVED_LOSS
    return True


@njit(**JIT)
def backup(nodes, values, edge_child, prm, t, x, value, in_flight):
    """Add ``value`` (side to move at ``x``) to ``x`` and its ancestors, flipping sides at each
    level; take back the virtual loss of an in-flight leaf; carry solved statuses upward."""
    v = value
    child = NO_NODE
    proving = nodes[t, x, STATUS] != UNSOLVED
    while x != NO_NODE:
        nodes[t, x, VISITS] += 1
        values[t, x, VALUE_SUM] += v
        if in_flight:
            nodes[t, x, IN_FLIGHT] -= 1
        if proving and child != NO_NODE:
            proving = _prove(nodes, edge_child, t, x, child)
        _refresh(nodes, values, prm.virtual_loss, t, x)
        v = -v
        child = x
        x = nodes[t, x, PARENT]


@njit(**JIT)
def expand_leaf(nodes, values, edge_move, edge_prior, edge_child, roots, rng, gumbel, info, legal,
                noise, buf_p, buf_m, prm, j, priors, uniform, value):
    """Give leaf ``j`` its edges (``priors`` masked to the legal moves and renormalised; uniform
    when ``uniform`` or when the legal moves have no prior mass) and back ``value`` up."""
    # int64, as the gather side has them, so the callees shared with it compile once.
    t = np.int64(info[j, LEAF_TREE])
    x = np.int64(info[j, LEAF_NODE])
    base = np.int64(roots[t, EDGES_USED])
    k = 0
    total = 0.0
    for p in range(legal.shape[1]):
        if legal[j, p]:
            e = base + k
            edge_move[t, e] = p
            edge_child[t, e] = NO_NODE
            if not uniform:
                edge_prior[t, e] = priors[p]
                total += priors[p]
            k += 1
    if uniform or not total > 0.0:
        for e in range(base, base + k):
            edge_prior[t, e] = 1.0 / k
        nodes[t, x, ORDERED] = k  # equal priors, created in point order
    else:
        scale = 1.0 / total
        for e in range(base, base + k):
            edge_prior[t, e] = edge_prior[t, e] * scale
        if x == ROOT:
            sort_edges(edge_prior, edge_move, buf_p, buf_m, t, base, k)
            nodes[t, x, ORDERED] = k
        else:
            nodes[t, x, ORDERED] = order_new_block(edge_prior, edge_move, t, base, base + k)
    forced = info[j, LEAF_FORCED]
    if forced != NO_MOVE:
        for e in range(base, base + k):
            if edge_move[t, e] == forced:
                swap_edges(edge_prior, edge_move, t, base, e)
                break
        nodes[t, x, FORCED] = 1
    nodes[t, x, FIRST_EDGE] = base
    nodes[t, x, NUM_EDGES] = k
    roots[t, EDGES_USED] = base + k
    nodes[t, x, STATUS] = info[j, LEAF_STATUS]
    values[t, x, RAW] = value
    if x == ROOT:
        if prm.root_rule == ROOT_GUMBEL:
            if forced == NO_MOVE:
                gumbel_root.prepare_root(nodes, edge_move, edge_prior, gumbel, rng, prm, t)
        elif prm.dirichlet_eps > 0.0:
            _add_root_noise(nodes, edge_prior, edge_move, rng, noise, buf_p, buf_m, prm, t)
    backup(nodes, values, edge_child, prm, t, x, value, prm.leaves_per_tree > 1)


@njit(**JIT)
def apply(tr, lb, sc, prm, n, priors, values):
    """Expand the ``n`` leaves of the last gather with the evaluator's answers, values clipped
    to [-1, 1]. Returns :func:`check_answers`' verdict; the trees are untouched unless it is
    ANSWERS_OK."""
    verdict = check_answers(n, priors, values)
    if verdict != ANSWERS_OK:
        return verdict
    for j in range(n):
        value = min(1.0, max(-1.0, np.float64(values[j])))
        expand_leaf(tr.nodes, tr.values, tr.edge_move, tr.edge_prior, tr.edge_child, tr.roots,
                    tr.rng, tr.gumbel, lb.info, lb.legal, sc.noise, sc.priors, sc.moves, prm, j,
                    priors[j], False, value)
    return ANSWERS_OK
