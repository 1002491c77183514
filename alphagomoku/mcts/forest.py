"""Forest: K search trees searched together, their leaves evaluated in one batch.

One cycle of the search is ``gather`` (one kernel call selects leaves in every active tree and
writes their input planes into ``forest.planes``), the evaluator (one call on the whole batch),
then ``apply`` (one kernel call expands the leaves and backs the values up). Python validates
and orchestrates; it is never called per node or per leaf.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.checks import non_negative_int, positive_int
from alphagomoku.game import kernels as game_kernels
from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import (
    BLACK, EMPTY, NO_MOVE, NUM_PLANES, RENJU, RULE_NAMES, RULE_PLANES, THREAT_PLANES, VCF_PLANES,
    WHITE,
)
from alphagomoku.game.position import IllegalMoveError, Position
from alphagomoku.game.rule_planes import fill_rule_planes
from alphagomoku.mcts import batch_checks, kernels, playouts, reuse
from alphagomoku.mcts.config import SearchConfig
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator, network_config
from alphagomoku.mcts.policy import uniform_evaluator
from alphagomoku.mcts.root_readout import RootReadout
from alphagomoku.mcts.tree import (
    BUDGET,
    COLOR,
    FULL,
    GUMBEL_INTERIOR,
    LEAF_TREE,
    NODES_USED,
    PUCT,
    ROOT,
    ROOT_GUMBEL,
    ROOT_PUCT,
    UCB1,
    VISITS,
    SearchParams,
    allocate_leaves,
    allocate_scratch,
    allocate_trees,
    exploration_table,
    tree_bytes,
)
from alphagomoku.numba_config import EntryPoints

SELECTIONS = {"puct": PUCT, "ucb1": UCB1}
ROOT_RULE_IDS = {"puct": ROOT_PUCT, "gumbel": ROOT_GUMBEL}


def seed_state(seed: int, index: int = 0) -> np.uint64:
    """The xorshift state of stream ``index`` of ``seed`` (never zero, which xorshift keeps)."""
    non_negative_int("seed", seed)
    state = np.random.SeedSequence([int(seed), int(index)]).generate_state(1, np.uint64)[0]
    return np.uint64(state) if state else np.uint64(1)


class Forest(RootReadout):
    """K search trees over one kind of board (see the module docstring for the cycle).

    Visits: a node's visit count includes its own evaluation, so a searched root has
    ``num_simulations`` visits and its children ``num_simulations - 1`` between them. Values are
    from the side to move at the node. ``max_nodes`` bounds the nodes per tree; the default,
    num_simulations + leaves_per_tree + 1, is all :meth:`run` can need, since every simulation
    adds one node at most and tree reuse keeps no more nodes than the new root's visits.
    """

    def __init__(self, game: GameConfig, cfg: SearchConfig, num_trees: int, seed: int = 0,
                 max_nodes: int | None = None, *, selection: str = "puct", lanes: int = 1):
        if not isinstance(game, GameConfig):
            raise TypeError(f"game must be a GameConfig, got {type(game).__name__}")
        self._build(game.height, game.width, game.n_in_row, game.rule_id, cfg, num_trees, seed,
                    max_nodes, selection, lanes)
        self.game = game

    @classmethod
    def on_board(cls, height: int, width: int, n_in_row: int, rule: str, cfg: SearchConfig,
                 num_trees: int, seed: int = 0, max_nodes: int | None = None, *,
                 selection: str = "puct") -> "Forest":
        """A forest on a board GameConfig does not allow (smaller than 5x5, e.g. tic-tac-toe on
        3x3). Its trees are set with :meth:`reset_board`; :meth:`position` is unavailable."""
        if rule not in RULE_NAMES:
            raise ValueError(f"unknown rule {rule!r}: choose one of {', '.join(RULE_NAMES)}")
        for name, v in (("height", height), ("width", width), ("n_in_row", n_in_row)):
            positive_int(name, v)
        if n_in_row > max(height, width) or height * width > 32767:
            raise ValueError(f"a {width}x{height} board cannot hold {n_in_row} in a row here")
        self = cls.__new__(cls)
        self._build(height, width, n_in_row, RULE_NAMES[rule], cfg, num_trees, seed, max_nodes,
                    selection)
        self.game = None
        return self

    @staticmethod
    def _selection_id(selection: str, cfg: SearchConfig) -> int:
        if cfg.interior_rule == "gumbel":
            if selection != "puct":
                raise ValueError(f"selection {selection!r} and interior_rule 'gumbel' both choose "
                                 "below the root: use one")
            return GUMBEL_INTERIOR
        return SELECTIONS[selection]

    def _build(self, height, width, n_in_row, rule, cfg, num_trees, seed, max_nodes, selection,
               lanes=1):
        if not isinstance(cfg, SearchConfig):
            raise TypeError(f"cfg must be a SearchConfig, got {type(cfg).__name__}")
        positive_int("num_trees", num_trees)
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
        if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
            raise ValueError(f"lanes must be a positive integer, got {lanes!r}")
        least = cfg.leaves_per_tree + 1
        if max_nodes is None:
            max_nodes = cfg.num_simulations + cfg.leaves_per_tree + 1
        if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < least:
            raise ValueError(f"max_nodes must be an integer of at least {least} "
                             f"(leaves_per_tree + 1), got {max_nodes!r}")
        self.cfg = cfg
        self.num_trees = num_trees
        self.height, self.width, self.n_in_row, self.rule = height, width, n_in_row, rule
        self.area = height * width
        self.max_nodes = max_nodes
        self._params = SearchParams(
            height=height, width=width, n_in_row=n_in_row, rule=rule,
            selection=self._selection_id(selection, cfg), c_puct=float(cfg.c_puct), c_base=float(cfg.c_base),
            fpu_reduction=float(cfg.fpu_reduction), root_fpu_reduction=float(cfg.root_fpu),
            virtual_loss=float(cfg.virtual_loss),
            dirichlet_alpha=float(cfg.dirichlet_alpha), dirichlet_eps=float(cfg.dirichlet_eps),
            leaves_per_tree=cfg.leaves_per_tree, root_rule=ROOT_RULE_IDS[cfg.root_rule],
            gumbel_m=cfg.gumbel_m, gumbel_c_visit=float(cfg.gumbel_c_visit),
            gumbel_c_scale=float(cfg.gumbel_c_scale), write_planes=True, leaf_boards=False,
            vcf_leaf_budget=cfg.vcf_leaf_budget, vcf_root_budget=cfg.vcf_root,
            vcf_plane_budget=cfg.vcf_plane_budget, vct_leaf_budget=cfg.vct_leaf_budget,
            vct_leaf_depth=cfg.vct_leaf_depth, vct_leaf_plies=cfg.vct_leaf_plies,
            threat_planes=(NUM_PLANES + (VCF_PLANES if cfg.vcf_plane_budget else 0)
                           if cfg.threat_planes else 0),
        )
        self.gumbel = cfg.root_rule == 'gumbel'
        # The in-kernel evaluators need no planes.
        self._uniform_params = self._params._replace(write_planes=False)
        self._rollout_params = self._params._replace(write_planes=False, leaf_boards=True)
        self._trees = allocate_trees(num_trees, max_nodes, self.area)
        num_planes = (NUM_PLANES + (VCF_PLANES if cfg.vcf_plane_budget else 0)
                      + (THREAT_PLANES if cfg.threat_planes else 0)
                      + (RULE_PLANES if cfg.rule_planes else 0))
        # One leaf batch per lane: a lane's leaves wait for their answer while another lane
        # gathers (the self-play loop's overlapped groups). The trees and the solvers' memory
        # are shared, so the solver calls come in the same order whatever the lanes.
        self._lane_leaves = [allocate_leaves(num_trees * cfg.leaves_per_tree, num_trees, height,
                                             width, num_planes) for _ in range(lanes)]
        self._leaves = self._lane_leaves[0]
        if cfg.rule_planes:
            # Written once: the kernels fill only the planes before them, and a forest plays
            # one rule.
            for leaves in self._lane_leaves:
                fill_rule_planes(leaves.planes, rule)
        table = exploration_table(cfg.num_simulations + 2 * cfg.leaves_per_tree + 2,
                                  float(cfg.c_puct), float(cfg.c_base))
        self._scratch = allocate_scratch(self.area, max_nodes, table,
                                         vcf=max(cfg.vcf_leaf_budget, cfg.vcf_root,
                                                 cfg.vcf_plane_budget) > 0,
                                         vct=cfg.vct_leaf_budget > 0)
        for i in range(num_trees):
            self._trees.rng[i] = seed_state(seed, i)
        self._live = np.zeros(num_trees, dtype=np.bool_)   # has a root with a move to search
        # Root visits each tree's search aims at (set_budget changes it until the next root).
        self._target = np.full(num_trees, cfg.num_simulations, dtype=np.int64)
        self._positions: list[Position | None] = [None] * num_trees
        self._lane_pending = [0] * lanes
        # The kernels, past Numba's type dispatch: the calls pass the forest's own arrays,
        # Python ints and bools, and int8 boards, and working out the types of the tuples of
        # arrays costs more than a small gather, and more than the root scan of each move.
        self._run = EntryPoints()
        self._quota = np.zeros(num_trees, dtype=np.int64)
        # The lane whose leaves of tree t await apply(), or -1.
        self._in_lane = np.full(num_trees, -1, dtype=np.int64)
        #: float32 (max_leaves, planes, H, W): the input planes of the leaves of the last
        #: gather (5, or 7 with VCF planes).
        self.planes = self._leaves.planes
        #: bool (max_leaves, H*W): their legal moves.
        self.legal = self._leaves.legal

    # -- roots --------------------------------------------------------------------------------
    def _check_tree(self, i) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) \
                or not 0 <= i < self.num_trees:
            raise IndexError(f"tree index must be in [0, {self.num_trees}), got {i!r}")
        return int(i)

    @property
    def lanes(self) -> int:
        """Leaf batches that can await their answers at once (one per overlapped group)."""
        return len(self._lane_leaves)

    @property
    def _pending(self) -> int:
        return sum(self._lane_pending)

    def _check_idle(self, what: str, tree: int | None = None) -> None:
        """Refuse while leaves await apply(): any leaves, or with ``tree``, that tree's."""
        if tree is not None:
            if self._in_lane[tree] >= 0:
                raise RuntimeError(f"cannot {what}: tree {tree} has leaves of a gather in lane "
                                   f"{self._in_lane[tree]} that await apply()")
            return
        if self._pending:
            raise RuntimeError(f"cannot {what} while {self._pending} leaves of the last gather "
                               "await apply()")

    def lane_planes(self, lane: int) -> np.ndarray:
        """:attr:`planes` of lane ``lane``."""
        return self._lane_leaves[self._check_lane(lane)].planes

    def lane_legal(self, lane: int) -> np.ndarray:
        """:attr:`legal` of lane ``lane``."""
        return self._lane_leaves[self._check_lane(lane)].legal

    def _check_lane(self, lane) -> int:
        if isinstance(lane, bool) or not isinstance(lane, (int, np.integer)) \
                or not 0 <= lane < self.lanes:
            raise IndexError(f"lane must be in [0, {self.lanes}), got {lane!r}")
        return int(lane)

    def reset(self, i: int, position: Position, seed: int | None = None) -> None:
        """Make ``position`` the root of tree ``i``, dropping the tree. ``seed`` restarts the
        tree's random stream (as tree 0 of ``Forest(..., seed=seed)`` would have it)."""
        i = self._check_tree(i)
        if self.game is None:
            raise TypeError("this forest was built with Forest.on_board: use reset_board()")
        if not isinstance(position, Position):
            raise TypeError(f"position must be a Position, got {type(position).__name__}")
        if position.config != self.game:
            raise ValueError(f"position is for {position.config}, the forest for {self.game}")
        if position.is_over:
            raise ValueError("the game is over in this position: there is nothing to search")
        self._set_root(i, position.board, position.to_move, position.last_move, seed)
        self._positions[i] = position.copy()

    def reset_board(self, i: int, board: np.ndarray, to_move: int, last_move: int = NO_MOVE,
                    seed: int | None = None) -> None:
        """Like :meth:`reset` from a bare board (int8 (H*W,), 0 empty, 1 black, 2 white)."""
        i = self._check_tree(i)
        board = np.asarray(board)
        if board.shape != (self.area,):
            raise ValueError(f"board must have shape ({self.area},), got {board.shape}")
        if not np.isin(board, (EMPTY, BLACK, WHITE)).all():
            raise ValueError("board points must be 0 (empty), 1 (black) or 2 (white)")
        board = board.astype(np.int8)
        blacks, whites = int((board == BLACK).sum()), int((board == WHITE).sum())
        expected = BLACK if blacks == whites else WHITE if blacks == whites + 1 else None
        if expected is None:
            raise ValueError(f"{blacks} black and {whites} white stones: black moves first, so "
                             "black must have as many stones as white or one more")
        if to_move != expected:
            raise ValueError(f"to_move must be {expected} with {blacks} black and {whites} white "
                             f"stones, got {to_move!r}")
        if last_move != NO_MOVE:
            if not 0 <= last_move < self.area or board[last_move] != 3 - to_move:
                raise ValueError(f"last_move {last_move} must hold a stone of the side that moved")
            if game_kernels.wins_at(board, self.height, self.width, self.n_in_row, self.rule,
                                    last_move, 3 - to_move):
                raise ValueError("the game is over in this position: there is nothing to search")
        if blacks + whites == self.area:
            raise ValueError("the board is full: there is nothing to search")
        self._set_root(i, board, to_move, last_move, seed)
        self._positions[i] = None

    def _set_root(self, i, board, to_move, last_move, seed) -> None:
        self._check_idle("reset a tree", i)
        legal = np.zeros(self.area, dtype=np.bool_)
        h, w = self.height, self.width
        if not game_kernels.legal_mask_into(board, h, w, self.rule, to_move, legal):
            raise ValueError("the side to move has no legal move in this position")
        if seed is not None:
            self._trees.rng[i] = seed_state(seed)
        self._run(kernels.clear_tree, self._trees, i)
        self._run(kernels.set_root_position, self._trees, self._params, i,
                  np.ascontiguousarray(board, dtype=np.int8), int(to_move), int(last_move))
        self._live[i] = True
        self._set_budget(i, self.cfg.num_simulations)

    def set_budget(self, i: int, simulations: int) -> None:
        """Search tree ``i``'s current root to ``simulations`` root visits instead of
        num_simulations (playout cap randomisation's fast searches), until its root changes.
        Gumbel's halving plan is laid over the same budget."""
        i = self._check_tree(i)
        if isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)) \
                or not 2 <= simulations <= self.cfg.num_simulations:
            raise ValueError(f"simulations must be an integer in [2, {self.cfg.num_simulations}] "
                             f"(num_simulations), got {simulations!r}")
        self._set_budget(i, int(simulations))

    def _set_budget(self, i: int, simulations: int) -> None:
        self._target[i] = simulations
        # The root's own evaluation is its first visit; the halving plan covers the rest.
        self._trees.roots[i, BUDGET] = simulations - 1

    def target_visits(self, i: int) -> int:
        """The root visits tree ``i``'s search aims at."""
        return int(self._target[self._check_tree(i)])

    def short_of_target(self) -> np.ndarray:
        """bool (num_trees,): the trees whose root has fewer visits than its target, in one
        array operation (the self-play loop asks every search step)."""
        return self._trees.nodes[:, ROOT, VISITS] < self._target

    # -- the gather / evaluate / apply cycle ----------------------------------------------------
    def gather(self, active: np.ndarray | None = None, lane: int = 0) -> int:
        """Select leaves in the active trees; return how many need the evaluator.

        Without ``active``, the trees whose root has fewer than num_simulations visits take
        part; with it, exactly those trees (one past its budget still takes leaves_per_tree
        more). The leaves' planes and legal masks are ``self.planes[:n]`` and ``self.legal[:n]``
        (``lane_planes(lane)`` and ``lane_legal(lane)`` for another lane); leaves whose value is
        known exactly are backed up here and not handed out.

        With several lanes, each lane holds one gather's leaves until its :meth:`apply`, and
        the trees of a lane's gather must have no leaves waiting in another lane.
        """
        lane = self._check_lane(lane)
        if self._lane_pending[lane]:
            raise RuntimeError(f"cannot gather again while {self._lane_pending[lane]} leaves of "
                               f"the last gather in lane {lane} await apply()")
        use_active = active is not None
        if use_active:
            active = np.asarray(active)
            if active.dtype != np.bool_ or active.shape != (self.num_trees,):
                raise ValueError(f"active must be a bool array of shape ({self.num_trees},), "
                                 f"got {active.dtype} {active.shape}")
        quota = self._quota
        found, t = self._run(batch_checks.plan_quota, self._trees.nodes, self._target,
                             self._live, active if use_active else self._live, use_active,
                             self.cfg.leaves_per_tree, self._in_lane, quota)
        if found == batch_checks.NOTHING_TO_SEARCH:
            raise ValueError(f"tree {t} has nothing to search: reset() it first, or its game "
                             "is over")
        if found == batch_checks.IN_OTHER_LANE:
            raise RuntimeError(f"tree {t} has leaves in lane {self._in_lane[t]} that await "
                               "apply(): it cannot gather in another lane meanwhile")
        leaves = self._lane_leaves[lane]
        n = int(self._run(kernels.gather, self._trees, leaves, self._scratch, self._params, quota))
        self._lane_pending[lane] = n
        if n:
            self._in_lane[leaves.info[:n, LEAF_TREE]] = lane
        if n == 0 and leaves.report.any():
            full = int(np.flatnonzero(leaves.report == FULL)[0])
            raise RuntimeError(f"tree {full} has used all of its {self.max_nodes} nodes: build the "
                               "Forest with a larger max_nodes")
        return n

    def _check_active(self, active) -> np.ndarray:
        mask = np.asarray(active)
        if mask.dtype != np.bool_ or mask.shape != (self.num_trees,):
            raise ValueError(f"active must be a bool array of shape ({self.num_trees},), got "
                             f"{mask.dtype} {mask.shape}")
        if not self._live[mask].all():
            idle = int(np.flatnonzero(mask & ~self._live)[0])
            raise ValueError(f"tree {idle} has nothing to search: reset() it first, or its game "
                             "is over")
        return mask

    def apply(self, priors: np.ndarray, values: np.ndarray, lane: int = 0) -> None:
        """Expand the last gather's leaves (of ``lane``). ``priors`` (n, H*W): any non-negative
        weights, masked to the legal moves and renormalised here; ``values`` (n,) in [-1, 1],
        from the side to move at each leaf."""
        lane = self._check_lane(lane)
        n = self._lane_pending[lane]
        priors = np.ascontiguousarray(priors, dtype=np.float32)
        values = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        if priors.shape != (n, self.area):
            raise ValueError(f"priors must have shape ({n}, {self.area}) for the {n} leaves of the "
                             f"last gather, got {priors.shape}")
        if values.shape != (n,):
            raise ValueError(f"values must have shape ({n},), got {values.shape}")
        if n == 0:
            return
        leaves = self._lane_leaves[lane]
        # Writable arrays, as the kernel was compiled for (a cache's or a device's answer may be
        # read-only), so that the entry point always sees the same types.
        if not priors.flags.writeable:
            priors = priors.copy()
        if not values.flags.writeable:
            values = values.copy()
        verdict = self._run(kernels.apply, self._trees, leaves, self._scratch, self._params, n,
                            priors, values)
        if verdict == batch_checks.BAD_PRIORS:
            raise ValueError("priors must be finite and non-negative")
        if verdict == batch_checks.BAD_VALUES:
            raise ValueError(f"values must be finite and in [-1, 1], got range "
                             f"[{values.min()}, {values.max()}]")
        self._lane_pending[lane] = 0
        self._in_lane[leaves.info[:n, LEAF_TREE]] = -1

    def run(self, evaluator: LeafEvaluator, active: np.ndarray | None = None) -> None:
        """Search until every active tree (default: every tree with a position) has
        num_simulations root visits (or its :meth:`set_budget`), counting those kept by tree
        reuse.
        ``evaluator(planes, legal) -> (priors, values)`` is called once per batch."""
        self._check_idle("run")
        self.check_evaluator(evaluator)
        mask = self._live.copy() if active is None else self._check_active(active)
        target = self.cfg.num_simulations
        if evaluator is uniform_evaluator and (self._target[mask] == target).all():
            full = playouts.run_uniform(self._trees, self._leaves, self._scratch,
                                       self._uniform_params, mask, target)
            if full >= 0:
                raise RuntimeError(f"tree {full} has used all of its {self.max_nodes} nodes: "
                                   "build the Forest with a larger max_nodes")
            return
        while True:
            need = mask & (self._trees.nodes[:, ROOT, VISITS] < self._target)
            if not need.any():
                return
            n = self.gather(need)
            if n:
                priors, values = evaluator(self.planes[:n], self.legal[:n])
                self.apply(priors, values)

    def check_evaluator(self, evaluator: LeafEvaluator) -> None:
        """A clear error when ``evaluator``'s network (its ``config``, if it has one) reads other
        inputs than this search writes (VCF, threat or rule planes): it would get inputs it was
        not trained on."""
        model = network_config(evaluator)
        if model is None:
            return
        for field in ("vcf_plane_budget", "threat_planes", "rule_planes"):
            want, have = getattr(model, field), getattr(self.cfg, field)
            if want != have:
                raise ValueError(
                    f"the network ({model.label}) was trained with {field} {want} but this "
                    f"search writes {have}: build the search with SearchConfig({field}={want})")

    # -- results (see also RootReadout) -------------------------------------------------------
    def num_nodes(self, i: int) -> int:
        return int(self._trees.roots[self._check_tree(i), NODES_USED])

    def is_live(self, i: int) -> bool:
        """Whether tree ``i`` has a position with a move to search."""
        return bool(self._live[self._check_tree(i)])

    @property
    def arrays(self):
        """The raw TreeArrays (for tests and diagnostics; read, do not write)."""
        return self._trees

    def memory_bytes(self) -> int:
        return tree_bytes(self._trees) + sum(a.nbytes for lb in self._lane_leaves for a in lb)

    def position(self, i: int) -> Position:
        i = self._check_tree(i)
        if self.game is None:
            raise TypeError("this forest was built with Forest.on_board and keeps no Position")
        pos = self._positions[i]
        if pos is None:
            raise ValueError(f"tree {i} has no position: reset() it first")
        return pos.copy()

    # -- moving on ----------------------------------------------------------------------------
    def advance(self, i: int, move: int) -> None:
        """Play ``move`` at the root of tree ``i``: its child becomes the root with its
        statistics, the rest of the tree is freed. When the move ends the game the tree goes
        idle until the next reset."""
        i = self._check_tree(i)
        self._check_idle("advance", i)
        if not self._live[i]:
            raise ValueError(f"tree {i} has no position to play in: reset() it first")
        tr = self._trees
        color = int(tr.roots[i, COLOR])
        pos = self._positions[i]
        if pos is not None:
            pos.play(move)  # validates, and raises IllegalMoveError saying why
            move = pos.moves[-1]
        else:
            move = self._check_bare_move(i, move, color)
        board = tr.root_board[i].copy()
        board[move] = color
        legal = np.zeros(self.area, dtype=np.bool_)
        h, w = self.height, self.width
        over = (
            game_kernels.wins_at(board, h, w, self.n_in_row, self.rule, move, color)
            or not game_kernels.legal_mask_into(board, h, w, self.rule, 3 - color, legal)
        )
        if over:
            self._live[i] = False
            self._run(kernels.clear_tree, tr, i)
            return
        # Gumbel's halving plan and its one Gumbel draw belong to a fresh search from the root,
        # so a Gumbel tree starts over after each move instead of keeping the subtree.
        move = int(move)
        kept = not self.gumbel and reuse.keep_subtree(tr, self._scratch, i, move)
        self._run(kernels.set_root_position, tr, self._params, i, board, 3 - color, move)
        self._set_budget(i, self.cfg.num_simulations)
        if not kept:
            self._run(kernels.clear_tree, tr, i)
        elif self.cfg.dirichlet_eps > 0:
            kernels.add_root_noise(tr, self._scratch, self._params, i)

    def _check_bare_move(self, i: int, move, color: int) -> int:
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)) \
                or not 0 <= move < self.area:
            raise IllegalMoveError(f"move must be a point index in [0, {self.area}), got {move!r}")
        board = self._trees.root_board[i]
        if board[move] != EMPTY:
            raise IllegalMoveError(f"point {move} is occupied")
        if self.rule == RENJU and color == BLACK and game_kernels.is_forbidden(
                board.copy(), self.height, self.width, int(move)):
            raise IllegalMoveError(f"point {move} is forbidden for black under renju")
        return int(move)

