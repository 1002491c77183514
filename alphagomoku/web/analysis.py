"""What the model thinks of a position: a PUCT search that can be watched and stopped.

The search is the players' own (a :class:`alphagomoku.mcts.Forest` fed by the network player's
evaluator and search constants), grown one evaluator batch at a time so that a snapshot can be
sent every SNAPSHOT_S and a stop request is seen within one batch. A snapshot is plain data for
the page: the network's raw policy and value for the position, the search's visits and value,
its top candidates with their principal lines, and what the VCF/VCT solvers proved.

Values are for the side to move, in [-1, 1]; the page shows them as win percentages.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

import numpy as np

from alphagomoku.game import Position, solve_vcf, solve_vct
from alphagomoku.mcts import Forest, search_config, uniform_evaluator
from alphagomoku.mcts.search import fit_to_evaluator
from alphagomoku.mcts.leaf_evaluator import reads_rule_planes, reads_threat_planes
from alphagomoku.mcts.tree import FIRST_EDGE, NUM_CHILDREN, ROOT, SOLVED_LOSS, SOLVED_WIN, STATUS, VISITS

# Seconds between live snapshots: often enough to look live, rare enough that twenty
# connections' snapshots cost little next to their searches.
SNAPSHOT_S = 0.15
# Candidates listed, and moves of each principal line.
TOP_CANDIDATES = 8
PV_MOVES = 12
# Solver nodes of each VCF/VCT check an analysis starts with: a few tens of milliseconds, since
# a request that replaces the analysis waits for the check in progress to end.
SOLVER_NODES = 20_000


class SearchStopped(Exception):
    """Raised inside a search whose connection asked it to stop (or went away)."""


class StoppableEvaluator:
    """Wraps a player's evaluator: raises SearchStopped at the next batch once ``stop`` is set,
    and calls ``on_batch`` after each batch (for live snapshots). Other attributes (the
    network's ``config``, which the search reads) come from the wrapped evaluator."""

    def __init__(self, inner, stop: threading.Event, on_batch: Callable[[], None] | None = None):
        self.inner = inner
        self.stop = stop
        self.on_batch = on_batch

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __call__(self, planes, legal):
        if self.stop.is_set():
            raise SearchStopped()
        out = self.inner(planes, legal)
        if self.on_batch is not None:
            self.on_batch()
        return out


def principal_line(forest: Forest, node: int, most: int) -> list[int]:
    """The most visited path below ``node`` of tree 0, as flat indices."""
    tr = forest.arrays
    line: list[int] = []
    while len(line) < most:
        first = int(tr.nodes[0, node, FIRST_EDGE])
        if first < 0:
            break
        count = int(tr.nodes[0, node, NUM_CHILDREN])
        if count == 0:
            break
        children = tr.edge_child[0, first:first + count]
        visits = tr.nodes[0, children, VISITS]
        k = int(np.argmax(visits))
        if visits[k] == 0:
            break
        line.append(int(tr.edge_move[0, first + k]))
        node = int(children[k])
    return line


def _child_of(forest: Forest, move: int) -> int:
    tr = forest.arrays
    first = int(tr.nodes[0, ROOT, FIRST_EDGE])
    if first < 0:
        return -1
    count = int(tr.nodes[0, ROOT, NUM_CHILDREN])
    for e in range(first, first + count):
        if int(tr.edge_move[0, e]) == move:
            return int(tr.edge_child[0, e])
    return -1


def search_snapshot(forest: Forest, position: Position) -> dict:
    """The search's view of its root: visit share, value and candidates."""
    visits = forest.visit_counts(0).astype(np.int64)
    total = int(visits.sum())
    priors = forest.root_priors(0)
    order = np.lexsort((-priors, -visits))  # most visited first, the prior breaks ties
    candidates = []
    for m in order[:TOP_CANDIDATES]:
        m = int(m)
        if visits[m] == 0 and candidates:
            break
        if visits[m] == 0 and priors[m] == 0:
            break
        child = _child_of(forest, m)
        pv = [m] + (principal_line(forest, child, PV_MOVES - 1) if child >= 0 else [])
        solved = None
        if child >= 0:
            status = int(forest.arrays.nodes[0, child, STATUS])
            solved = "win" if status == SOLVED_LOSS else "loss" if status == SOLVED_WIN else None
        candidates.append({
            "move": position.name(m), "visits": int(visits[m]),
            "value": round(forest.move_value(0, m), 4), "prior": round(float(priors[m]), 4),
            "pv": [position.name(p) for p in pv], "solved": solved,
        })
    share = (visits / total) if total else np.zeros(visits.shape)
    status = forest.root_status(0)
    return {
        "visits": forest.root_visits(0),
        "visit_share": [round(float(v), 4) for v in share],
        "search_value": round(forest.root_value(0), 4),
        "solved": "win" if status == SOLVED_WIN else "loss" if status == SOLVED_LOSS else None,
        "candidates": candidates,
    }


def network_view(position: Position, evaluator, vcf_plane_budget: int) -> dict:
    """The network's own answer for ``position``: its policy over the legal moves and its value
    for the side to move, before any search."""
    planes = position.planes(vcf_plane_budget, reads_rule_planes(evaluator),
                             reads_threat_planes(evaluator))[None]
    legal = position.legal_mask()[None]
    priors, values = evaluator(planes, legal)
    policy = np.where(legal[0], np.asarray(priors, dtype=np.float64).reshape(-1), 0.0)
    if policy.sum() > 0:
        policy = policy / policy.sum()
    return {"policy": [round(float(p), 4) for p in policy],
            "value_head": round(float(np.asarray(values).reshape(-1)[0]), 4)}


def solver_view(position: Position, stop: threading.Event | None = None,
                nodes: int = SOLVER_NODES) -> dict | None:
    """A proved forced win for either side, if the solvers find one: the side to move's VCF
    (the whole line), else its win by threats (the first move), else the opponent's VCF that it
    must stop. None when none is proved."""
    if position.is_over:
        return None
    mover = position.to_move
    own = solve_vcf(position, nodes)
    if own.found:
        return {"kind": "vcf", "attacker": mover, "line": list(own.names), "text": own.describe()}
    if stop is not None and stop.is_set():
        raise SearchStopped()
    vct = solve_vct(position, nodes)
    if vct.found:
        return {"kind": "vct", "attacker": mover, "line": [vct.name], "text": vct.describe()}
    if stop is not None and stop.is_set():
        raise SearchStopped()
    threat = solve_vcf(position, nodes, attacker=3 - mover)
    if threat.found:
        # The opponent's line starts as if it were to move: numbered the same way.
        return {"kind": "threat", "attacker": 3 - mover, "line": list(threat.names),
                "text": f"opponent threatens a VCF: {threat.describe()}"}
    return None


def analyse(position: Position, evaluator, base_config, simulations: int,
            stop: threading.Event, emit: Callable[[dict], None], seed: int = 0,
            clock: Callable[[], float] = time.monotonic,
            between_batches: Callable[[], None] | None = None) -> dict:
    """Search ``position`` for ``simulations`` simulations (fewer if ``stop`` is set or the
    search can go no further), calling ``emit`` with a live snapshot every SNAPSHOT_S, and
    return the final one. ``evaluator`` None searches with uniform priors (no network for this
    board): the snapshot then has no policy or value head. ``between_batches`` is called after
    each batch (the server's searches take turns there)."""
    if position.is_over:
        raise ValueError("the game is over: there is nothing to analyse")
    have_net = evaluator is not None
    evaluator = evaluator if have_net else uniform_evaluator
    cfg = base_config if base_config is not None else search_config()
    cfg = fit_to_evaluator(cfg.replace(num_simulations=max(2, simulations)), evaluator)
    base = {"network": have_net, "solver": solver_view(position, stop)}
    if stop.is_set():
        raise SearchStopped()
    if have_net:
        base.update(network_view(position, evaluator, cfg.vcf_plane_budget))
    forest = Forest(position.config, cfg, 1, seed=seed)
    forest.reset(0, position)
    active = np.ones(1, dtype=np.bool_)
    last = clock()
    while forest.root_visits(0) < simulations:
        if stop.is_set():
            break
        before = forest.root_visits(0)
        n = forest.gather(active)
        if n:
            priors, values = evaluator(forest.planes[:n], forest.legal[:n])
            forest.apply(priors, values)
        if forest.root_visits(0) == before:
            break  # solved, or no room to grow
        if between_batches is not None:
            between_batches()
        now = clock()
        if now - last >= SNAPSHOT_S:
            last = now
            emit({**base, **_proved(search_snapshot(forest, position), base, position),
                  "live": True})
    return {**base, **_proved(search_snapshot(forest, position), base, position), "live": False,
            "stopped": stop.is_set()}


def _proved(snapshot: dict, base: dict, position: Position) -> dict:
    """A win the solvers proved for the side to move is its value, whatever a short search
    says (the review's win-rate curve must not dip where the game was already won)."""
    solver = base["solver"]
    if solver and solver["attacker"] == position.to_move and solver["kind"] in ("vcf", "vct"):
        snapshot.update(search_value=1.0, solved="win")
    return snapshot
