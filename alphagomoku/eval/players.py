"""Players: anything that picks a move for a position, behind one small interface.

Every player has a ``name``, ``reset(game)`` before each game (where it loads, checks and warms
up whatever it needs for that board) and ``choose(position, time_left_s)``, which returns a legal
flat index for the side to move. ``time_left_s`` is the time this move may take; None means no
limit. The searching players honour it by growing one search step by step until the time is up:
the PUCT players one evaluator batch at a time, pure MCTS in compiled steps sized from its
measured speed (:func:`fill_budget`). A player with resources to free also has ``close()``.

The MCTS and network modules are imported inside the players that use them, so the arena, the
engine and their tests load without torch until a network player is built.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Protocol, TypeVar, runtime_checkable

import numpy as np

from alphagomoku.eval.tactics import tactical_move
from alphagomoku.game import BLACK, GameConfig, Position
from alphagomoku.mcts.tree import node_bytes
from alphagomoku.nn.cache import EvaluationCache, entry_bytes
from alphagomoku.nn.onnx_file import is_onnx_file

T = TypeVar("T")

# With only a time limit, the most simulations one search may grow to: it bounds the tree's
# memory on a fast device.
MAX_TIMED_SIMULATIONS = 20_000
# The network answers a NetworkPlayer keeps. Each move's search meets again much of what the two
# searches before it evaluated below the new root (60% of its positions at 0.5 s a move:
# `benchmark.py cache`). About 1.5 KB a position on 15x15: 46 MB.
PLAYER_EVAL_CACHE = 32_768
# The first search (search_within) or step (fill_budget), and the warm-up search of reset().
# Small, so that even a tiny budget gets an answer.
FIRST_CHUNK = 16
# (search_within) A search is planned to fill this share of the time left, since later
# simulations cost a little more than earlier ones (deeper trees).
CHUNK_SAFETY = 0.75
# (search_within) Searches are kept to this share of the budget until one that long has been timed.
CALIBRATION_SHARE = 0.05
# (search_within, fill_budget) A search or step is at most this many times larger than the last
# one timed.
MAX_GROWTH = 4
# (fill_budget) The share of its budget a continued search plans to use: the rest covers a step
# that runs a little slower than the one before it, and the answer's way back to the caller.
BUDGET_SHARE = 0.92
# (fill_budget) The longest step: a step cannot be stopped once started, so this bounds how far a
# misjudged one can overrun.
MAX_STEP_S = 0.05
# With only a time limit, the most playouts a pure-MCTS search may grow to: it bounds the tree's
# memory (every expanded node keeps an edge per legal move, ~2 KB on 15x15).
MAX_TIMED_PLAYOUTS = 200_000


# A memory limit never shrinks a timed search below this many nodes: 2.3 MB on 15x15, inside
# the engine's margin (engine/memory.py), and a search much smaller plays far worse.
MIN_TREE_NODES = 1_000


def tree_cap(memory_bytes: int | None, area: int, most: int) -> int:
    """The most nodes a timed search may grow to: ``most``, or fewer when its tree must fit in
    ``memory_bytes`` (None: no limit), but never fewer than MIN_TREE_NODES."""
    if memory_bytes is None:
        return most
    return min(most, max(MIN_TREE_NODES, memory_bytes // node_bytes(area)))


def limit_memory(player, memory_bytes: int | None) -> None:
    """Keep what ``player``'s searches hold (their trees and caches) within ``memory_bytes``, or
    lift the limit with None; wrapped players are limited too, each to the whole amount, since
    one of them plays at a time."""
    for attr in ("inner", "primary", "fallback"):
        wrapped = getattr(player, attr, None)
        if wrapped is not None:
            limit_memory(wrapped, memory_bytes)
    if hasattr(player, "memory_bytes"):
        player.memory_bytes = memory_bytes


@runtime_checkable
class Player(Protocol):
    name: str

    def reset(self, game: GameConfig) -> None: ...

    def choose(self, position: Position, time_left_s: float | None = None) -> int: ...


def close_player(player) -> None:
    """Free what ``player`` holds (an engine subprocess, say), if it holds anything."""
    close = getattr(player, "close", None)
    if callable(close):
        close()


def _check_can_move(position: Position) -> None:
    if position.is_over:
        raise ValueError(f"the game is over ({position.win_reason or 'finished'}): nothing to choose")


def search_within(run: Callable[[int], T], limit: int, budget_s: float | None,
                  first: int = FIRST_CHUNK, clock: Callable[[], float] = time.monotonic) -> T:
    """``run(n)`` searches with ``n`` simulations (or playouts) from scratch and returns its
    result. Without a budget: ``run(limit)``. With one: searches of growing size, each planned
    from the timing of the one before, until a larger one would not fit; returns the result of
    the largest (at most ``limit``). It always makes the first, however small the budget.

    A tiny first search overstates the cost per simulation (fixed costs dominate it), so the
    searches stay small (CALIBRATION_SHARE of the budget) until one has been timed at a useful
    size; the last one then gets most of the budget. Only for a search that cannot be
    continued: the earlier searches are thrown away, so :func:`fill_budget` gets more from the
    same time where the search can go on."""
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"the simulation limit must be a positive integer, got {limit!r}")
    if budget_s is None:
        return run(limit)
    budget = max(0.0, float(budget_s))
    deadline = clock() + budget
    n = min(first, limit)
    t0 = clock()
    result = run(n)
    spent = max(clock() - t0, 1e-6)
    while n < limit:
        remaining = deadline - clock()
        planned = CHUNK_SAFETY * remaining
        nxt = int(n * planned / spent)
        if spent < CALIBRATION_SHARE * budget:
            # Still calibrating: stay small, but at least double so that timer noise on tiny
            # searches cannot keep it creeping.
            nxt = max(2 * n, min(nxt, int(n * CALIBRATION_SHARE * budget / spent)))
        # Costs per simulation grow with the tree (deeper descents, more cache misses), so a
        # plan far beyond what was timed is not trusted.
        nxt = min(limit, nxt, MAX_GROWTH * n)
        if nxt <= n:
            break
        t0 = clock()
        result = run(nxt)
        spent = max(clock() - t0, 1e-6)
        n = nxt
    return result


def fill_budget(step: Callable[[int, bool], T], limit: int, budget_s: float,
                first: int = FIRST_CHUNK, clock: Callable[[], float] = time.monotonic) -> T:
    """``step(n, more)`` runs ``n`` more simulations of one search (a new search when ``more``
    is False) and returns its result so far. Steps until ``limit`` simulations in all or until
    BUDGET_SHARE of ``budget_s`` is spent, each sized from the speed of the step before to end
    by then, and none planned longer than MAX_STEP_S; returns the last step's result. The first step
    (``first`` simulations) is always made, however small the budget."""
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"the simulation limit must be a positive integer, got {limit!r}")
    start = clock()
    end = start + BUDGET_SHARE * max(0.0, float(budget_s))
    size = min(first, limit)
    result = step(size, False)
    done = size
    now = clock()
    spent = now - start
    while done < limit:
        left = end - now
        if left <= 0.0:
            break
        # The speed of the last step: a search slows as its tree grows, so the latest step
        # predicts the next better than the whole search's average does. A small step's fixed
        # costs make it look slow, which errs on the safe side; MAX_GROWTH limits the rest.
        rate = size / max(spent, 1e-9)
        size = min(int(rate * min(left, MAX_STEP_S)), limit - done, MAX_GROWTH * size)
        if size < 1:
            break
        result = step(size, True)
        done += size
        before, now = now, clock()
        spent = now - before
    return result


def _budget(own: float | None, given: float | None) -> float | None:
    if own is None:
        return given
    return own if given is None else min(own, given)


class RandomPlayer:
    """A uniformly random legal move."""

    def __init__(self, seed: int = 0, name: str = "random"):
        self.name = name
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def reset(self, game: GameConfig) -> None:
        pass

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        _check_can_move(position)
        return int(self._rng.choice(position.legal_moves()))


# (TacticalPlayer) Solver nodes of each VCF or VCT search when no move time is given. With one,
# the time sizes each search, up to TIMED_MAX_NODES: a cap of 100,000 left a VCT check that needed
# 160,000 nodes (50 ms) "unknown" with a tenth of a second to spare, and more at longer moves.
VCF_NODES = 100_000
TIMED_MAX_NODES = 100_000_000
# (TacticalPlayer) With a move time: each VCF search is sized to this share of it at the solver
# speed below (a low estimate: `python scripts/benchmark.py vcf` measures it), never fewer nodes
# than VCF_MIN_NODES, and the checks of defences against an opponent's VCF stop once the searches
# together have taken that share.
VCF_TIME_SHARE = 0.2
VCF_NODES_PER_S = 200_000  # measured 660,000 to 920,000 on the benchmark's positions (2026-11-23)
VCF_MIN_NODES = 300
# (TacticalPlayer) With ``vct``: the share of a move's time kept back to check the chosen move
# against the opponent's threats, and how many other moves of its search may replace it.
VCT_CHECK_SHARE = 0.25
# (TacticalPlayer) The same when the opponent has a VCF: the search then only orders the few
# moves that stop it, and which of those leaves no win by threats matters more.
VCT_DEFENCE_CHECK_SHARE = 0.5
VCT_ALTERNATIVES = 8
# (TacticalPlayer) With ``vct``: when the check of the chosen move leaves at least this much of
# its time unused (in a quiet position it proves "none" early), the inner search goes on with it.
THINK_MORE_MIN_S = 0.02
# (TacticalPlayer) With ``vct``: the share of a move's time its own VCT search may take.
VCT_OWN_SHARE = 0.15
# (TacticalPlayer) With ``vcf``, the wrapped PUCT player's search also runs a VCF search of this
# many nodes at every new node (SearchConfig.vcf_leaf_budget), unless its config sets one.
VCF_LEAF_NODES = 100
# (TacticalPlayer) With ``vct``, the wrapped PUCT player's search also runs a VCT search at each
# of the root's moves, for the opponent (SearchConfig.vct_leaf_budget, _depth, _plies), unless its
# config sets one: a move that lets the opponent win by threats is then proved lost inside the
# search, which spends its visits on the others. Every node instead of the root's moves, or 300
# nodes at depth 1, cost more network evaluations than they saved (docs/benchmarks.md).
VCT_LEAF_NODES = 3000
VCT_LEAF_DEPTH = 2
VCT_LEAF_PLIES = 1


def _search_with_solvers(player, vct: bool = False) -> None:
    """Turn on the leaf VCF check (and with ``vct`` the VCT of the root's moves) in ``player``'s
    PUCT search (and in a BoardFallbackPlayer's)."""
    if isinstance(player, BoardFallbackPlayer):
        _search_with_solvers(player.primary, vct)
        _search_with_solvers(player.fallback, vct)
    elif isinstance(player, _SearchPlayer):
        from alphagomoku.mcts import search_config as player_defaults

        base = player.search_config or player_defaults()
        if base.vcf_leaf_budget == 0:
            # The root was searched already, with the larger budget, before the player is asked.
            base = base.replace(vcf_leaf_budget=VCF_LEAF_NODES, vcf_root_budget=0)
        if vct and base.vct_leaf_budget == 0:
            base = base.replace(vct_leaf_budget=VCT_LEAF_NODES, vct_leaf_depth=VCT_LEAF_DEPTH,
                                vct_leaf_plies=VCT_LEAF_PLIES)
        player.search_config = base


class TacticalPlayer:
    """Wraps a player: opens at the centre, and plays an immediate win, or blocks the
    opponent's, before asking it.

    With ``vcf``, also: a proved VCF (:func:`alphagomoku.game.solve_vcf`) is played at once;
    when the opponent has one, the player's own choice is kept only if it is proved to stop it,
    else the first move that is (:func:`alphagomoku.eval.tactics.vcf_defences`). With ``vct``
    (which implies ``vcf``), a win by continuous threats (:func:`alphagomoku.game.solve_vct`,
    threes as well as fours) is played too, deepened within VCT_OWN_SHARE of the move time; and
    when the opponent has no VCF, the inner player's move is checked: if the opponent would then
    win by threats, the next move of its search that leaves no such win is played instead; when
    it has one, the moves that stop it are checked the same way, in the order the search liked
    them (a block on the wrong side of the line can stop the VCF and still lose).
    ``last_note`` says what it found for the last move (None when nothing), for the engine's
    MESSAGE line. A wrapped PUCT player's search gets the leaf VCF check too (VCF_LEAF_NODES),
    and with ``vct`` a VCT of the opponent after each of the root's moves (VCT_LEAF_NODES).
    """

    def __init__(self, inner: Player, vcf: bool = False, vcf_budget: int | None = None,
                 vct: bool = False):
        """``vcf_budget``: the most nodes of each solver search; None: VCF_NODES without a move
        time, and with one as many as the time allows."""
        if vcf_budget is not None and (isinstance(vcf_budget, bool)
                                       or not isinstance(vcf_budget, int) or vcf_budget < 1):
            raise ValueError(f"vcf_budget must be a positive integer or None, got {vcf_budget!r}")
        vcf = vcf or vct
        self.inner = inner
        self.name = inner.name
        self.vcf = vcf
        self.vct = vct
        self.vcf_budget = vcf_budget
        self.last_note: str | None = None
        if vcf:
            _search_with_solvers(inner, vct)

    def reset(self, game: GameConfig) -> None:
        self.inner.reset(game)
        if self.vcf:
            from alphagomoku.eval.tactics import four_moves
            from alphagomoku.game import solve_vcf

            # Compile or load the solver's kernels now, not in the first move's time.
            solve_vcf(Position(game), 1)
            four_moves(Position(game), BLACK)
            if self.vct:
                from alphagomoku.game import solve_vct

                solve_vct(Position(game), 1)

    def _node_cap(self, timed: bool) -> int:
        """The most nodes of one solver search (a timed one also stops at its time)."""
        if self.vcf_budget is not None:
            return self.vcf_budget
        return TIMED_MAX_NODES if timed else VCF_NODES

    def _vcf_nodes(self, time_left_s: float | None) -> int:
        if time_left_s is None:
            return self._node_cap(timed=False)
        nodes = int(VCF_TIME_SHARE * time_left_s * VCF_NODES_PER_S)
        return max(VCF_MIN_NODES, min(self._node_cap(timed=True), nodes))

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        _check_can_move(position)
        self.last_note = None
        if not position.moves:
            # Every strong program opens at the centre (renju's rules require it), and the
            # networks here rarely see an empty board: nine in ten training games start from an
            # opening of a few stones.
            return position.index((position.width // 2, position.height // 2))
        move = tactical_move(position)
        if move is not None:
            return move
        if not self.vcf:
            return self.inner.choose(position, time_left_s)
        from alphagomoku.eval.tactics import vcf_defences
        from alphagomoku.game import solve_vcf

        start = time.monotonic()
        nodes = self._vcf_nodes(time_left_s)
        own = solve_vcf(position, nodes)
        if own.found:
            self.last_note = f"vcf: {own.describe()}"
            return own.first_move
        if self.vct:
            from alphagomoku.eval.tactics import vct_until

            # Its threats were checked against the opponent's VCF, so it goes before the threat.
            deadline = None if time_left_s is None else start + VCT_OWN_SHARE * time_left_s
            mine = vct_until(position, deadline, budget=self._node_cap(deadline is not None))
            if mine is not None and mine.found:
                self.last_note = f"vct: {mine.describe()}"
                return mine.first_move
        threat = solve_vcf(position, nodes, attacker=3 - position.to_move)
        defences = []
        if threat.found:
            deadline = None if time_left_s is None else start + VCF_TIME_SHARE * time_left_s
            defences = vcf_defences(position, threat, max(1, nodes // 4), deadline)
        # With vct, time is kept back to check the move below against the opponent's threats;
        # when the opponent has a VCF, only where there are defences to choose between.
        check = self.vct and (not threat.found or len(defences) > 1)
        check_s = None
        if time_left_s is not None:
            time_left_s = max(0.0, time_left_s - (time.monotonic() - start))
            if check:
                share = VCT_DEFENCE_CHECK_SHARE if threat.found else VCT_CHECK_SHARE
                check_s = share * time_left_s
                time_left_s -= check_s
        move = self.inner.choose(position, time_left_s)
        deadline = None if check_s is None else time.monotonic() + check_s
        if not threat.found:
            if check:
                move = self._keep_clear_of_threats(position, move, deadline)
                if deadline is not None and self.last_note is None:
                    move = self._think_more(position, move, deadline)
            return move
        note = f"vcf: opponent threatens {threat.describe()}"
        if not defences:
            self.last_note = note + "; no defence proved"
            return move
        # A move that stops the VCF can still leave a win by threats (a block on the wrong side
        # of the line): the defences are checked in the order the inner search liked them.
        ranked = self._by_visits(defences, first=move)
        chosen = ranked[0]
        if check:
            found, lost = self._first_clear_of_threats(position, ranked, deadline)
            if lost and found is None:
                note += "; every defence checked leaves a win by threats"
            elif lost:
                note += f"; {position.name(ranked[0])} would leave a win by threats"
            chosen = ranked[0] if found is None else found
            if found is not None and deadline is not None:
                chosen = self._think_more(position, chosen, deadline, among=defences)
        if chosen != move:
            note += f"; {position.name(chosen)} stops it, not {position.name(move)}"
        self.last_note = note
        return chosen

    def _by_visits(self, moves: list[int], first: int) -> list[int]:
        """``moves`` with ``first`` (if among them) ahead, then by the inner search's visits
        (most first), ties in the order given."""
        visits = getattr(self.inner, "last_visits", None)
        if visits is None:
            return sorted(moves, key=lambda m: m != first)
        return sorted(moves, key=lambda m: (m != first, -float(visits[m])))

    def _first_clear_of_threats(self, position: Position, moves: list[int],
                                deadline: float | None) -> tuple[int | None, list[int]]:
        """The first of ``moves`` (the player's own choice first) that is not lost to a win by
        threats of the opponent, each searched with half the time left: the first move unless
        its search proves a win, a later one only if its search ran and found none (None when
        no move qualifies before ``deadline``); and the moves proved lost before it."""
        lost = []
        for i, m in enumerate(moves):
            if deadline is not None and time.monotonic() > deadline:
                break
            until = None if deadline is None else time.monotonic() + (deadline - time.monotonic()) / 2
            answer = self._opponent_wins(position, m, until)
            if answer is not None and answer.found:
                lost.append(m)
            elif i == 0 or answer is not None:
                return m, lost
        return None, lost

    def _keep_clear_of_threats(self, position: Position, move: int,
                               deadline: float | None) -> int:
        """``move``, unless the opponent would then win by threats: then the most visited move
        of the inner player's search after which it would not, tried until ``deadline``."""
        visits = getattr(self.inner, "last_visits", None)
        others = []
        if visits is not None:
            legal = position.legal_mask()
            others = [int(m) for m in np.argsort(-np.asarray(visits), kind="stable")
                      if legal[m] and visits[m] > 0 and m != move][:VCT_ALTERNATIVES]
        chosen, lost = self._first_clear_of_threats(position, [move] + others, deadline)
        if not lost:
            return move
        note = f"vct: {position.name(move)} lets the opponent win by threats"
        if chosen is None:
            self.last_note = f"{note}; no other move checked does better"
            return move
        self.last_note = f"{note}; {position.name(chosen)} does not"
        return chosen

    def _opponent_wins(self, position: Position, m: int, until: float | None):
        """The opponent's VCT answer after ``m``, searched until ``until``; None when no search
        could start."""
        from alphagomoku.eval.tactics import vct_until

        position.play(m)
        try:
            return vct_until(position, until, budget=self._node_cap(until is not None))
        finally:
            position.undo()

    def _think_more(self, position: Position, move: int, deadline: float,
                    among: list[int] | None = None) -> int:
        """``move`` passed its check with time to spare: the inner search goes on for half of
        what is left, again while it still prefers ``move``; a move it comes to prefer is
        played if a check with the rest finds no opponent win by threats after it. With
        ``among`` (the moves that stop the opponent's VCF), its preference among those."""
        more = getattr(self.inner, "think_more", None)
        while more is not None and deadline - time.monotonic() >= THINK_MORE_MIN_S:
            better = more(position, (deadline - time.monotonic()) / 2)
            if better is None:
                break
            if among is not None and better not in among:
                better = self._by_visits(among, first=-1)[0]  # by visits alone
            if better != move:
                answer = self._opponent_wins(position, better, deadline)
                return better if answer is not None and not answer.found else move
        return move

    def close(self) -> None:
        close_player(self.inner)


class BoardFallbackPlayer:
    """Plays ``primary`` where it can (a network plays only the board it was trained on) and
    ``fallback`` on any other board. The engine uses it for the shipped model, so a manager's
    ``START 20`` still gets a game."""

    def __init__(self, primary: Player, fallback: Player):
        self.primary = primary
        self.fallback = fallback
        self.active = primary
        self.name = primary.name

    def reset(self, game: GameConfig) -> None:
        try:
            self.primary.reset(game)
            self.active = self.primary
        except ValueError:
            self.fallback.reset(game)
            self.active = self.fallback
        self.name = self.active.name

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        return self.active.choose(position, time_left_s)

    @property
    def last_visits(self) -> np.ndarray | None:
        return getattr(self.active, "last_visits", None)

    def think_more(self, position: Position, budget_s: float) -> int | None:
        more = getattr(self.active, "think_more", None)
        return None if more is None else more(position, budget_s)

    def close(self) -> None:
        close_player(self.primary)
        close_player(self.fallback)


class PureMCTSPlayer:
    """MCTS with random playouts and no network (``alphagomoku.mcts.PureMCTS``): ``playouts``
    per move, or as many as fit in a time budget (at most MAX_TIMED_PLAYOUTS), searched as
    one tree continued step by step."""

    def __init__(self, playouts: int = 1000, seed: int = 0, time_per_move: float | None = None,
                 name: str | None = None):
        if not isinstance(playouts, int) or playouts < 1:
            raise ValueError(f"playouts must be a positive integer, got {playouts!r}")
        self.playouts = playouts
        self.seed = seed
        self.time_per_move = time_per_move
        self.name = name or f"pure:{playouts}"
        self.game: GameConfig | None = None
        self.memory_bytes: int | None = None  # the most its tree may take (limit_memory)
        self._mcts = None  # the PureMCTS of the last search, kept to reuse its arrays

    def reset(self, game: GameConfig) -> None:
        from alphagomoku.mcts import PureMCTS

        self.game = game
        # Compile or load the kernels now, not mid-game; a fresh search and a continued one
        # call the same kernel.
        PureMCTS(game, FIRST_CHUNK, seed=self.seed).search(Position(game))

    def _tree(self, game: GameConfig, capacity: int):
        from alphagomoku.mcts import PureMCTS

        m = self._mcts
        if m is None or m.playouts != capacity or m.game != game:
            m = self._mcts = PureMCTS(game, capacity, seed=self.seed)
        return m

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        _check_can_move(position)
        budget = _budget(self.time_per_move, time_left_s)
        seed = self.seed + len(position.moves)
        if budget is None:
            visits = self._tree(position.config, self.playouts).search(position, seed=seed)
        else:
            limit = min(self.playouts, tree_cap(self.memory_bytes, position.config.area,
                                                MAX_TIMED_PLAYOUTS))
            mcts = self._tree(position.config, limit)

            def step(n: int, more: bool) -> np.ndarray:
                if more:
                    return mcts.search(position, n, continue_=True)
                return mcts.search(position, n, seed=seed)

            visits = fill_budget(step, limit, budget)
        # The most visited move (the lowest point among equals), as PureMCTS.best_move has it.
        return int(np.argmax(np.where(position.legal_mask(), visits, -1)))


class _SearchPlayer:
    """Shared by the players that run the PUCT search of ``alphagomoku.mcts``; each subclass
    supplies ``_evaluator()``. Without a time budget: one ``search`` of the simulation limit.
    With one: a single tree searched one evaluator batch at a time until the budget or the
    limit is reached, so no work is thrown away."""

    simulations: int | None
    time_per_move: float | None
    seed: int
    search_config = None  # a SearchConfig whose constants replace the defaults
    last_visits: np.ndarray | None = None  # visits per move of the last choice
    memory_bytes: int | None = None  # the most its tree (and cache) may take (limit_memory)

    def _config(self, n: int):
        import dataclasses

        from alphagomoku.mcts import search_config as player_defaults

        if self.search_config is None:
            return player_defaults(num_simulations=n)
        return dataclasses.replace(self.search_config, num_simulations=n)

    def _search(self, position: Position, n: int) -> np.ndarray:
        """Visits per move after ``n`` simulations."""
        from alphagomoku.mcts import search

        return search(position, self._evaluator(), self._config(n),
                      seed=self.seed + len(position.moves)).visits

    def _search_until(self, position: Position, limit: int, budget_s: float,
                      clock: Callable[[], float] = time.monotonic) -> np.ndarray:
        """Visits per move after simulating on one tree until ``limit`` simulations or the
        budget runs out, whichever is first. A batch is started only when one more is expected
        to end in time (a network on a slow CPU can take tens of milliseconds a batch); at least
        one batch is always made. The tree is kept for :meth:`think_more`."""
        from alphagomoku.mcts import Forest
        from alphagomoku.mcts.search import fit_to_evaluator

        evaluator = self._evaluator()
        forest = Forest(position.config, fit_to_evaluator(self._config(limit), evaluator), 1,
                        seed=self.seed + len(position.moves))
        forest.reset(0, position)
        self._tree = (position.config, tuple(position.moves), forest, evaluator, limit)
        return self._grow(forest, evaluator, limit, budget_s, clock)

    def _grow(self, forest, evaluator, limit: int, budget_s: float,
              clock: Callable[[], float]) -> np.ndarray:
        start = clock()
        deadline = start + budget_s
        active = np.ones(1, dtype=np.bool_)
        batches = 0
        last = 0.0
        while forest.root_visits(0) < limit:
            t0 = clock()
            before = forest.root_visits(0)
            n = forest.gather(active)
            if n:
                priors, values = evaluator(forest.planes[:n], forest.legal[:n])
                forest.apply(priors, values)
            now = clock()
            batches += 1
            last = now - t0
            expected = max(last, (now - start) / batches)
            if forest.root_visits(0) == before or now + expected > deadline:
                break
        return forest.visit_counts(0)

    def think_more(self, position: Position, budget_s: float,
                   clock: Callable[[], float] = time.monotonic) -> int | None:
        """The move after searching the last timed search's tree for ``budget_s`` more
        seconds; None unless that search was of ``position`` and its tree could still grow
        (a simulation cap ends it). A TacticalPlayer gives it the time its check of the move
        did not use."""
        kept = getattr(self, "_tree", None)
        if kept is None or kept[:2] != (position.config, tuple(position.moves)):
            return None
        _, _, forest, evaluator, limit = kept
        before = forest.root_visits(0)
        visits = self._grow(forest, evaluator, limit, budget_s, clock)
        if forest.root_visits(0) == before:
            return None
        self.last_visits = visits
        return self._pick(np.where(position.legal_mask(), visits, -1))

    def _warm_up(self, game: GameConfig) -> None:
        """A tiny search both ways (the kernels differ), so that compiling or loading them does
        not eat into the first move's time."""
        self._search(Position(game), FIRST_CHUNK)
        self._search_until(Position(game), FIRST_CHUNK, budget_s=3600.0)

    def _limit(self, budget: float | None, area: int) -> int:
        if self.simulations is not None:
            return self.simulations
        if budget is not None:
            return tree_cap(self.memory_bytes, area, MAX_TIMED_SIMULATIONS)
        if self.search_config is not None:
            return self.search_config.num_simulations
        from alphagomoku.mcts import search_config as player_defaults

        return player_defaults().num_simulations

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        _check_can_move(position)
        budget = _budget(self.time_per_move, time_left_s)
        limit = self._limit(budget, position.config.area)
        if budget is None:
            self._tree = None
            visits = self._search(position, limit)
        else:
            visits = self._search_until(position, limit, budget)
        self.last_visits = visits  # the TacticalPlayer's next choices if this move loses
        # The legal mask only guards against a bad search result.
        return self._pick(np.where(position.legal_mask(), visits, -1))

    def _pick(self, visits: np.ndarray) -> int:
        """The most visited move (the lowest point among equals)."""
        return int(np.argmax(visits))


# (UniformMCTSPlayer) Relative size of the random factor on its uniform priors.
PRIOR_JITTER = 1e-3


class UniformMCTSPlayer(_SearchPlayer):
    """PUCT search with uniform priors and zero values: the network-free baseline of the
    network player (same search, no knowledge).

    It sees only what the search proves (wins, forced blocks, lost lines); between moves the
    proofs cannot tell apart it has no preference at all. Equal priors would be tried in board
    order, so on a quiet board it would always play the top-left corner; instead each prior
    gets a random factor of up to 1 + PRIOR_JITTER, which shuffles the order moves are tried
    in, and ties of the visit counts are broken at random: its quiet moves are random moves.
    """

    def __init__(self, simulations: int = 200, seed: int = 0, time_per_move: float | None = None,
                 name: str | None = None):
        if not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"simulations must be a positive integer, got {simulations!r}")
        self.simulations = simulations
        self.seed = seed
        self.time_per_move = time_per_move
        self.name = name or f"uniform:{simulations}"
        self._rng = np.random.default_rng(seed)

    def _evaluator(self):
        from alphagomoku.mcts import uniform_evaluator

        rng = self._rng

        def jittered(planes, legal):
            priors, values = uniform_evaluator(planes, legal)
            priors *= 1.0 + PRIOR_JITTER * rng.random(priors.shape, dtype=np.float32)
            return priors, values

        return jittered

    def _pick(self, visits: np.ndarray) -> int:
        best = np.flatnonzero(visits == visits.max())
        return int(best[0]) if best.size == 1 else int(self._rng.choice(best))

    def reset(self, game: GameConfig) -> None:
        self._warm_up(game)
        self._rng = np.random.default_rng(self.seed)  # each game from the same stream


class NetworkPlayer(_SearchPlayer):
    """The trained network guiding MCTS: no exploration noise, the most visited move.

    ``source`` is a weights file (``alphagomoku.nn.io.load_model``) or a model object.
    ``simulations`` caps the search; ``time_per_move`` (seconds) bounds it by time instead or as
    well; with neither, the SearchConfig default number of simulations. Each move's search
    starts a new tree, so the network's answers are kept in an evaluation cache of
    ``eval_cache`` positions (0: none), emptied by :meth:`reset`: a game, one set of weights.

    ``source`` may also be an ONNX file written by :mod:`alphagomoku.nn.onnx_file`, which runs
    on ONNX Runtime on the CPU without torch.

    ``backend`` (:mod:`alphagomoku.nn.inference_backend`): with ``auto`` a network read from a file runs on
    ONNX Runtime on a CPU, with ``threads`` threads, where it searches 1.5x to 2.3x as many
    simulations a move as with torch (docs/benchmarks.md, "The players on ONNX Runtime"). A
    model object stays on torch: its caller may change its weights between games, and ONNX
    Runtime runs a copy.
    """

    def __init__(self, source, simulations: int | None = None, time_per_move: float | None = None,
                 device: str = "auto", seed: int = 0, search_config=None, name: str | None = None,
                 eval_cache: int = PLAYER_EVAL_CACHE, backend: str = "auto", threads: int = 1):
        if simulations is not None and (not isinstance(simulations, int) or simulations < 1):
            raise ValueError(f"simulations must be a positive integer or None, got {simulations!r}")
        if time_per_move is not None and not time_per_move > 0:
            raise ValueError(f"time_per_move must be a positive number of seconds, got {time_per_move!r}")
        if isinstance(eval_cache, bool) or not isinstance(eval_cache, int) or eval_cache < 0:
            raise ValueError(f"eval_cache must be 0 (off) or a positive integer, "
                             f"got {eval_cache!r}")
        if is_onnx_file(source):
            # Written by alphagomoku.nn.onnx_file: runs on the CPU, without importing torch.
            from alphagomoku.device import DeviceChoice, cpu_name
            from alphagomoku.nn.onnx_file import read_onnx_file

            if device not in ("auto", "cpu") or backend == "torch":
                raise ValueError(f"{source} is an ONNX file, which runs on ONNX Runtime on the "
                                 f"CPU; give the .pt weights for device {device!r} or torch")
            self.device = DeviceChoice("cpu", "cpu", cpu_name(), "an ONNX file runs on the CPU")
            self.model = self.evaluator = read_onnx_file(source, threads)
            label = Path(source).name
        else:
            self._load(source, device, backend, threads)
            label = Path(source).name if isinstance(source, (str, Path)) else "model"
        self.eval_cache = eval_cache
        self.cache: EvaluationCache | None = None  # this game's, once the search first asks
        self.simulations = simulations
        self.time_per_move = time_per_move
        self.seed = seed
        self.search_config = search_config
        self.name = name or (f"net:{label}" + (f":{simulations}" if simulations else ""))

    def _load(self, source, device: str, backend: str, threads: int) -> None:
        from alphagomoku.device import select_device
        from alphagomoku.nn.inference_backend import make_evaluator
        from alphagomoku.nn.io import load_model

        self.device = select_device(device)
        if isinstance(source, (str, Path)):
            self.model = load_model(source, device=self.device.device)
        else:
            self.model = source
            backend = "torch"
        self.evaluator = make_evaluator(self.model, self.device.device, backend, threads=threads)

    def cache_capacity(self) -> int:
        """The answers its cache keeps: ``eval_cache``, or fewer when a memory limit must also
        hold a whole tree of a timed search."""
        config = getattr(self.model, "config", None)
        if self.memory_bytes is None or config is None:
            return self.eval_cache
        area = config.width * config.height
        left = self.memory_bytes - tree_cap(self.memory_bytes, area,
                                            MAX_TIMED_SIMULATIONS) * node_bytes(area)
        return min(self.eval_cache, max(0, left // entry_bytes(area, config.num_planes)))

    def _evaluator(self):
        capacity = self.cache_capacity()
        if not capacity:
            return self.evaluator
        if self.cache is None:
            self.cache = EvaluationCache(self.evaluator, capacity)
        self.cache.capacity = capacity  # a new limit mid-game: the oldest answers go as new come
        return self.cache

    def reset(self, game: GameConfig) -> None:
        self.cache = None  # the caller may have changed the model's weights between games
        config = getattr(self.model, "config", None)
        size = (getattr(config, "width", None), getattr(config, "height", None))
        if None not in size and size != (game.width, game.height):
            raise ValueError(
                f"the network ({getattr(config, 'label', 'model')}) plays {size[0]}x{size[1]} "
                f"boards; this game is {game.width}x{game.height}"
            )
        self._warm_up(game)
