"""The search forest's memory: preallocated flat arrays, their sentinels and their allocation.

A forest holds K trees side by side; every array has the tree as its first axis, so a kernel
works on tree ``t`` through ``array[t, ...]`` and never allocates. Shapes below use K = trees,
M = nodes per tree, E = M * A edges per tree, A = board points, B = K * leaves per tree (the
most leaves one gather hands out).

Nodes and edges are separate. A node is a position reached in the search; an edge is a legal
move out of an expanded node, with its prior. The edges of one node are one contiguous block.
A child node is created only when its edge is first taken, and the block is kept so that the
taken edges come first and the next untaken edge is the one with the largest prior: a
selection step then scans the taken prefix and one more edge instead of the whole block, since
an untaken edge's score grows with its prior alone (:mod:`alphagomoku.mcts.edge_order` keeps
that edge in place).

A node's integer fields are one row ``nodes[t, x, :]`` (field indices below), its float fields
one row ``values[t, x, :]``: few arrays, because the kernels hand them to helper functions, and a
Numba call passing a tuple of many arrays costs a reference-count update per array.

Every tree's root is node 0 (ROOT). Parents are created before their children, so a child's
index is always larger than its parent's; tree reuse relies on this to compact the kept
subtree to the front of the arrays in one forward pass.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from alphagomoku.game.constants import NUM_PLANES
from alphagomoku.game import vct as vct_solver
from alphagomoku.game.vcf import TT_BITS, allocate_state
from alphagomoku.numba_config import JIT

ROOT = 0
NO_NODE = -1      # edge_child of an edge never taken; PARENT of the root
UNEXPANDED = -1   # FIRST_EDGE of a node without edges (in flight, terminal, solved at birth)

# nodes[t, x, field] (int32)
PARENT = 0        # parent node, NO_NODE for the root
FIRST_EDGE = 1    # first edge of the node's block, UNEXPANDED if none
NUM_EDGES = 2     # edges in the block (the legal moves)
NUM_CHILDREN = 3  # children created so far: the first NUM_CHILDREN edges of the block
VISITS = 4        # finished visits, the node's own evaluation included
IN_FLIGHT = 5     # visits in flight through the node (virtual loss)
STATUS = 6        # UNSOLVED, SOLVED_WIN, SOLVED_LOSS or SOLVED_DRAW
FORCED = 7        # 1 when only edge 0 may be played (the immediate win, or the only block)
ORDERED = 8       # how many leading edges of the block are in selection order, each ranked
                  # before all after it (the whole of a root's sorted block): taking one of
                  # them needs no scan for the next (edge_order.py)
OPP_NO_VCF = 9    # 1 when the node's VCF planes proved that the side not to move has no VCF:
                  # then its children's side to move has none either (freestyle: an extra
                  # defender stone never helps a VCF), and their solver call is spared
NODE_FIELDS = 10

# values[t, x, field] (float64)
VALUE_SUM = 0     # sum of values backed up, side to move at the node
Q = 1             # the node's value for the side choosing it: visits in flight count as its
                  # losses, exact once solved (kept so selection needs no division per child)
U = 2             # 1 / (1 + visits + visits in flight)
RAW = 3           # the evaluator's own value of the node (side to move), set at expansion
VALUE_FIELDS = 4

# roots[t, field] (int32)
COLOR = 0         # side to move at the root
LAST_MOVE = 1     # the move that led to the root, NO_MOVE if none
STONES = 2        # stones on the root board
NODES_USED = 3    # nodes [0, NODES_USED) are live
EDGES_USED = 4    # edges [0, EDGES_USED) are live
WINS = 5          # WINS, WINS + 1: up to two points where the root's mover wins at once
THREATS = 7       # THREATS, THREATS + 1: up to two where the opponent would (NO_MOVE pads)
BUDGET = 9        # simulations this search gives the root's children (the Gumbel halving plan)
ROOT_FIELDS = 10

# node STATUS: the exact game value for the side to move at the node, once known. A terminal
# node (the previous move won, or the board is full) is SOLVED_LOSS or SOLVED_DRAW; a node is
# SOLVED_WIN when one of its children is SOLVED_LOSS, and SOLVED_LOSS when every child it may
# play is SOLVED_WIN. The names differ from the game results (alphagomoku.game.constants.DRAW)
# and the solvers' answers (alphagomoku.game.vcf.UNKNOWN), whose codes are other integers.
UNSOLVED = 0
SOLVED_WIN = 1
SOLVED_LOSS = 2
SOLVED_DRAW = 3


def solved_value(status) -> float:
    """The exact value of a solved node for its side to move (1, -1 or 0); NaN while UNSOLVED."""
    if status == SOLVED_WIN:
        return 1.0
    if status == SOLVED_LOSS:
        return -1.0
    if status == SOLVED_DRAW:
        return 0.0
    return np.nan


# The same mapping compiled for the kernels. The Python layer calls the plain function: a call
# from Python would compile a specialisation at run time, inside a self-play worker's move.
solved_value_kernel = njit(**JIT)(solved_value)

# info[j, field] of a leaf (int32)
LEAF_TREE = 0
LEAF_NODE = 1
LEAF_COLOR = 2    # side to move at the leaf
LEAF_STATUS = 3   # status known before evaluation (only a root can have one)
LEAF_FORCED = 4   # the one move the leaf may play (win or block), NO_MOVE if free
LEAF_FIELDS = 5

# Selection rules (SearchParams.selection).
PUCT = 0   # AlphaZero: Q + c(s) * P * sqrt(N) / (1 + n), first-play urgency for unvisited moves
UCB1 = 1   # classic UCT for the rollout baseline: Q + c * sqrt(ln N / n), unvisited moves first
GUMBEL_INTERIOR = 2  # below a Gumbel root: argmax pi'(a) - N(a) / (1 + sum N), the paper's deterministic rule

# How the root chooses (SearchParams.root_rule); below the root the selection rule applies.
ROOT_PUCT = 0    # like every other node
ROOT_GUMBEL = 1  # Gumbel AlphaZero: Gumbel-top-m sampling, then sequential halving

# gather's per-tree report (LeafBatch.report): why a tree stopped early.
FULL = 1   # it needed a new node and the tree had no room left


class TreeArrays(NamedTuple):
    """The K search trees; comments give dtype and shape."""

    nodes: np.ndarray       # int32 (K, M, NODE_FIELDS)
    values: np.ndarray      # float64 (K, M, VALUE_FIELDS)
    edge_move: np.ndarray   # int16 (K, E): the point played
    edge_prior: np.ndarray  # float32 (K, E): prior, over the node's legal moves
    edge_child: np.ndarray  # int32 (K, E): node reached, NO_NODE until first taken
    roots: np.ndarray       # int32 (K, ROOT_FIELDS)
    root_board: np.ndarray  # int8 (K, A): the root position
    rng: np.ndarray         # uint64 (K,): xorshift state per tree (Dirichlet noise, rollouts)
    gumbel: np.ndarray      # float32 (K, A): Gumbel noise of root edge i (offset in the root's
                            # block), drawn anew each time a root is expanded


class LeafBatch(NamedTuple):
    """The leaves one gather hands out for evaluation, in the order apply() takes them back."""

    info: np.ndarray    # int32 (B, LEAF_FIELDS)
    board: np.ndarray   # int8 (B, A): leaf j's position (kept for rollouts only)
    legal: np.ndarray   # bool (B, A): legal moves at leaf j
    planes: np.ndarray  # float32 (B, NUM_PLANES, H, W): network input for leaf j
    report: np.ndarray  # int8 (K,): FULL when tree t could not create a node this gather


class Scratch(NamedTuple):
    """Work buffers a kernel reuses instead of allocating, and tables (one set per forest)."""

    board: np.ndarray     # int8 (A,): the position being walked down the tree
    priors: np.ndarray    # float32 (A,): merge-sort buffer for edge priors
    moves: np.ndarray     # int16 (A,): merge-sort buffer for edge moves
    node_map: np.ndarray  # int32 (M,): old -> new node index while compacting for reuse
    noise: np.ndarray     # float64 (A,): Dirichlet noise sample
    q: np.ndarray         # float64 (A,): completed Q of the root's edges (Gumbel)
    points: np.ndarray    # int32 (2,): winning points found by the threat look-ups
    explore: np.ndarray   # float64 (X,): c(n) * sqrt(n) for a parent with n visits, n < X
    # The VCT search's state, whose ``vcf`` holds the VCF solver's stacks and table of proved
    # failures. Not a field of its own as well: every field is unboxed at each kernel call.
    vct: vct_solver.VctState


class SearchParams(NamedTuple):
    """The scalars every kernel needs: the board and the search constants."""

    height: int
    width: int
    n_in_row: int
    rule: int
    selection: int           # PUCT, UCB1 or GUMBEL_INTERIOR (below the root)
    c_puct: float            # c_init of c(s) when c_base > 0, else the constant c
    c_base: float
    fpu_reduction: float     # times sqrt(prior mass already tried), below the parent's value
    root_fpu_reduction: float
    virtual_loss: float
    dirichlet_alpha: float   # total alpha, divided by the number of legal moves at the root
    dirichlet_eps: float
    leaves_per_tree: int
    root_rule: int           # ROOT_PUCT or ROOT_GUMBEL
    gumbel_m: int            # Gumbel: actions sampled at the root (m)
    gumbel_c_visit: float    # Gumbel: sigma(q) = (c_visit + max_b N(b)) * c_scale * q
    gumbel_c_scale: float
    write_planes: bool       # False when the evaluator runs inside a kernel and needs no planes
    leaf_boards: bool        # copy each leaf's board into LeafBatch.board (for rollouts)
    vcf_leaf_budget: int     # VCF solver nodes at each new node (0: no VCF search)
    vcf_root_budget: int     # and at an unevaluated root
    vcf_plane_budget: int    # solver nodes behind each leaf's two VCF planes (0: no such planes)
    vct_leaf_budget: int     # VCT search nodes at each new node below the root (0: none)
    vct_leaf_depth: int      # and the free threats it may chain
    vct_leaf_plies: int      # only at nodes this many plies below the root or fewer (0: all)
    threat_planes: int       # first plane of each leaf's threat planes (0: no such planes)


def node_bytes(area: int) -> int:
    """The most memory one node of a tree takes on a board of ``area`` points, its edges to
    every point included (what :func:`allocate_trees` commits once the node is expanded)."""
    return NODE_FIELDS * 4 + VALUE_FIELDS * 8 + area * (2 + 4 + 4)


def allocate_trees(num_trees: int, max_nodes: int, area: int) -> TreeArrays:
    k, m = num_trees, max_nodes
    e = max_nodes * area
    # Edge arrays are the big ones; np.empty leaves untouched pages uncommitted, and blocks are
    # handed out from the front, so the memory used follows the edges in use.
    return TreeArrays(
        nodes=np.zeros((k, m, NODE_FIELDS), dtype=np.int32),
        values=np.zeros((k, m, VALUE_FIELDS), dtype=np.float64),
        edge_move=np.empty((k, e), dtype=np.int16),
        edge_prior=np.empty((k, e), dtype=np.float32),
        edge_child=np.empty((k, e), dtype=np.int32),
        roots=np.full((k, ROOT_FIELDS), -1, dtype=np.int32),
        root_board=np.zeros((k, area), dtype=np.int8),
        rng=np.ones(k, dtype=np.uint64),
        gumbel=np.zeros((k, area), dtype=np.float32),
    )


def allocate_leaves(max_leaves: int, num_trees: int, height: int, width: int,
                    num_planes: int = NUM_PLANES) -> LeafBatch:
    b, a = max_leaves, height * width
    return LeafBatch(
        info=np.zeros((b, LEAF_FIELDS), dtype=np.int32),
        board=np.zeros((b, a), dtype=np.int8),
        legal=np.zeros((b, a), dtype=np.bool_),
        planes=np.zeros((b, num_planes, height, width), dtype=np.float32),
        report=np.zeros(num_trees, dtype=np.int8),
    )


def exploration_table(size: int, c_puct: float, c_base: float) -> np.ndarray:
    """c(n) * sqrt(n) for n < size: the PUCT numerator, looked up instead of computed per step."""
    n = np.arange(size, dtype=np.float64)
    c = np.full(size, c_puct) if c_base <= 0 else c_puct + np.log((1.0 + n + c_base) / c_base)
    return c * np.sqrt(n)


def allocate_scratch(area: int, max_nodes: int, explore: np.ndarray,
                     vcf: bool = False, vct: bool = False) -> Scratch:
    # Without VCF or VCT searches the solvers' memory is never touched: token tables.
    vcf_state = allocate_state(area, TT_BITS if vcf or vct else 1)
    vct_state = (vct_solver.allocate_state(area, vcf_state=vcf_state) if vct
                 else vct_solver.allocate_state(area, 1, 1, vcf_state))
    return Scratch(
        board=np.zeros(area, dtype=np.int8),
        priors=np.zeros(area, dtype=np.float32),
        moves=np.zeros(area, dtype=np.int16),
        node_map=np.zeros(max_nodes, dtype=np.int32),
        noise=np.zeros(area, dtype=np.float64),
        q=np.zeros(area, dtype=np.float64),
        points=np.full(2, -1, dtype=np.int32),
        explore=explore,
        vct=vct_state,
    )


def tree_bytes(arrays: TreeArrays) -> int:
    """Bytes the tree arrays reserve (edges count in full, though untouched pages cost nothing)."""
    return int(sum(a.nbytes for a in arrays))
