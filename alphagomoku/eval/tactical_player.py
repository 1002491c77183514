"""The solvers in front of a player: tactics first, proved wins played, proved losses avoided.

:class:`TacticalPlayer` wraps any player. It opens at the centre and plays an immediate win or
block itself; with ``vcf`` and ``vct`` it runs the threat solvers (:mod:`alphagomoku.game`'s
``solve_vcf`` and ``solve_vct``) around the wrapped player's choice. :class:`BoardFallbackPlayer`
plays a second player on the boards the first cannot play.
"""

from __future__ import annotations

import time

import numpy as np

from alphagomoku.checks import positive_int
from alphagomoku.eval.player_types import (
    Player,
    ThinksMore,
    Wrapping,
    check_can_move,
    close_player,
    last_visits,
)
from alphagomoku.eval.search_players import PuctPlayer
from alphagomoku.eval.tactics import four_moves, tactical_move, vcf_defences, vct_until
from alphagomoku.game import BLACK, GameConfig, Position, solve_vcf, solve_vct
from alphagomoku.mcts import search_config as player_defaults

# Solver nodes of each VCF or VCT search when no move time is given. With one, the time sizes
# each search, up to TIMED_MAX_NODES: a fixed cap left checks "unknown" with time to spare.
VCF_NODES = 100_000
TIMED_MAX_NODES = 100_000_000
# With a move time: each VCF search is sized to this share of it at the solver speed below (a
# low estimate: `python scripts/benchmark.py vcf` measures it), never fewer nodes than
# VCF_MIN_NODES, and the checks of defences against an opponent's VCF stop once the searches
# together have taken that share.
VCF_TIME_SHARE = 0.2
VCF_NODES_PER_S = 200_000  # well below what the benchmark measures, so a search ends in time
VCF_MIN_NODES = 300
# With ``vct``: the share of a move's time kept back to check the chosen move against the
# opponent's threats, and how many other moves of its search may replace it.
VCT_CHECK_SHARE = 0.25
# The same when the opponent has a VCF: the search then only orders the few moves that stop it,
# and which of those leaves no win by threats matters more.
VCT_DEFENCE_CHECK_SHARE = 0.5
VCT_ALTERNATIVES = 8
# With ``vct``: when the check of the chosen move leaves at least this much of its time unused
# (in a quiet position it proves "none" early), the inner search goes on with it.
THINK_MORE_MIN_S = 0.02
# With ``vct``: the share of a move's time its own VCT search may take.
VCT_OWN_SHARE = 0.15
# With ``vcf``, the wrapped PUCT player's search also runs a VCF search of this many nodes at
# every new node (SearchConfig.vcf_leaf_budget), unless its config sets one.
VCF_LEAF_NODES = 100
# With ``vct``, the wrapped PUCT player's search also runs a VCT search at each of the root's
# moves, for the opponent (SearchConfig.vct_leaf_budget, _depth, _plies), unless its config sets
# one: a move that lets the opponent win by threats is then proved lost inside the search, which
# spends its visits on the others. At every node (300 nodes, depth 1), or deeper at the root's
# moves (10,000 nodes, depth 3), the proofs cost more network evaluations than they save and the
# player loses (docs/benchmarks.md, "The players' search settings").
VCT_LEAF_NODES = 3000
VCT_LEAF_DEPTH = 2
VCT_LEAF_PLIES = 1


def _search_with_solvers(player: Player, vct: bool = False) -> None:
    """Turn on the leaf VCF check (and with ``vct`` the VCT of the root's moves) in ``player``'s
    PUCT search (and in those of the players it wraps)."""
    if isinstance(player, Wrapping):
        for inner in player.wrapped:
            _search_with_solvers(inner, vct)
    elif isinstance(player, PuctPlayer):
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
        positive_int("vcf_budget", vcf_budget, none_ok=True)
        vcf = vcf or vct
        self.inner = inner
        self.name = inner.name
        self.vcf = vcf
        self.vct = vct
        self.vcf_budget = vcf_budget
        self.last_note: str | None = None
        if vcf:
            _search_with_solvers(inner, vct)

    @property
    def wrapped(self) -> tuple[Player, ...]:
        return (self.inner,)

    def reset(self, game: GameConfig) -> None:
        self.inner.reset(game)
        if self.vcf:
            # Compile or load the solver's kernels now, not in the first move's time.
            solve_vcf(Position(game), 1)
            four_moves(Position(game), BLACK)
            if self.vct:
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
        check_can_move(position)
        self.last_note = None
        if not position.moves:
            # Every strong program opens at the centre (renju's rules require it), and the
            # networks here rarely see an empty board: most training games start from an
            # opening of a few stones.
            return position.index((position.width // 2, position.height // 2))
        move = tactical_move(position)
        if move is not None:
            return move
        if not self.vcf:
            return self.inner.choose(position, time_left_s)
        start = time.monotonic()
        nodes = self._vcf_nodes(time_left_s)
        own = solve_vcf(position, nodes)
        if own.found:
            self.last_note = f"vcf: {own.describe()}"
            return own.first_move
        if self.vct:
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
        visits = last_visits(self.inner)
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
        visits = last_visits(self.inner)
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
        more = self.inner.think_more if isinstance(self.inner, ThinksMore) else None
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
    """Plays ``primary`` where it can (a network with dense heads plays only the board it was
    trained on) and
    ``fallback`` on any other board. The engine uses it for the shipped model, so a manager's
    ``START 20`` still gets a game."""

    def __init__(self, primary: Player, fallback: Player):
        self.primary = primary
        self.fallback = fallback
        self.active = primary
        self.name = primary.name

    @property
    def wrapped(self) -> tuple[Player, ...]:
        return (self.primary, self.fallback)

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
        return last_visits(self.active)

    def think_more(self, position: Position, budget_s: float) -> int | None:
        if not isinstance(self.active, ThinksMore):
            return None
        return self.active.think_more(position, budget_s)

    def close(self) -> None:
        close_player(self.primary)
        close_player(self.fallback)
