"""The one-move tactics no player should miss: win now if possible, else stop the opponent's win.

A search with few simulations, or a young network, can overlook both. Checking them first costs
one compiled win test per empty point, far less than any search, so the engine runs it before
every move whatever player it wraps. The threat solvers' helpers for the tactical player
(:mod:`alphagomoku.eval.tactical_player`) follow: the defences against a VCF, and a VCT search
deepened within a deadline.
"""

from __future__ import annotations

import time

import numpy as np

from alphagomoku.game import BLACK, EMPTY, WHITE, Position, kernels, solve_vcf, solve_vct, vcf


def winning_points(position: Position, color: int) -> list[int]:
    """Empty points where a stone of ``color`` would complete a winning line now (for the side
    to move, only the legal ones)."""
    c = position.config
    board = position.board
    if color == position.to_move:
        candidates = np.flatnonzero(position.legal_mask())
    else:
        candidates = np.flatnonzero(board == EMPTY)
    return [
        int(p) for p in candidates
        if kernels.would_win(board, c.height, c.width, c.n_in_row, c.rule_id, int(p), color)
    ]


def tactical_move(position: Position) -> int | None:
    """A winning move for the side to move if there is one; else a point that stops the
    opponent's immediate win; else None (nothing urgent: let the player decide).

    Against two or more winning points the game is lost anyway; blocking one of them still gives
    an opponent that errs a chance to miss the other.
    """
    if position.is_over:
        return None
    me = position.to_move
    wins = winning_points(position, me)
    if wins:
        return wins[0]
    threats = winning_points(position, WHITE if me == BLACK else BLACK)
    legal = position.legal_mask()
    for p in threats:
        if legal[p]:  # under renju black may be unable to block on a forbidden point
            return p
    return None


def four_moves(position: Position, color: int) -> list[int]:
    """Empty points where a stone of ``color`` would make a four (a five to play next)."""
    c = position.config
    board = position.board.copy()
    points = np.full(2, -1, dtype=np.int32)
    out = []
    for p in np.flatnonzero(board == EMPTY):
        board[p] = color
        if vcf.completions(board, c.height, c.width, c.n_in_row, c.rule_id, int(p), color,
                           points) > 0:
            out.append(int(p))
        board[p] = EMPTY
    return out


def vcf_defences(position: Position, threat, budget: int, deadline: float | None = None) -> list[int]:
    """Moves of the side to move after which the opponent's VCF ``threat`` (a VcfResult of the
    opponent) is proved gone, each checked with a VCF search of ``budget`` nodes. Candidates,
    in this order: the points of the opponent's line (its fours first, then the blocks it
    expects), then the side to move's own fours (each forces a reply and may break the line).
    Empty when none of them is proved to work. Past ``deadline`` (a ``time.monotonic()``
    time) no further candidate is checked."""
    me = position.to_move
    legal = position.legal_mask()
    seen = set()
    out = []
    line = [m for m in threat.moves[0::2] + threat.moves[1::2] if m >= 0]
    for p in line + four_moves(position, me):
        if deadline is not None and time.monotonic() > deadline:
            break
        if p in seen or not legal[p]:
            continue
        seen.add(p)
        after = position.copy()
        after.play(p)
        if after.is_over:
            return [p]  # cannot happen after tactical_move found no win; kept safe
        if solve_vcf(after, budget).status == "none":
            out.append(p)
    return out


# (vct_until) Threat depths tried, shallow first, and the VCT's speed assumed before any search
# has been timed in this process: below what `python scripts/benchmark.py vcf` measures, so the
# first searches end early rather than late.
VCT_MAX_DEPTH = 6
VCT_NODES_PER_S = 500_000
# (vct_until) Nodes of each VCF inside the VCT, ten times solve_vct's default: the default leaves
# answers unknown that this proves (two-threat wins among the benchmark's blunders), and an
# unknown answer ends the deepening, so the check of a move would say nothing at all.
VCT_INNER_VCF_BUDGET = 20_000


class NodeRate:
    """The VCT's nodes a second on this machine, learnt from its own timed calls.

    A search is given a node budget, not a deadline, so a rate set too low ends each search well
    before its time (and misses wins the whole time would have found); one set too high overruns
    the move time. Learning it from the
    calls themselves fits the budget to this machine and to its load."""

    def __init__(self, start: float = VCT_NODES_PER_S):
        self.value = float(start)

    def update(self, nodes: int, seconds: float) -> None:
        if nodes >= 2_000 and seconds > 0.002:  # short calls are mostly fixed overhead
            self.value = 0.7 * self.value + 0.3 * nodes / seconds


VCT_RATE = NodeRate()


def vct_until(position: Position, deadline: float | None, attacker: int | None = None,
              budget: int = 100_000, rate: NodeRate = VCT_RATE):
    """The VCT search of ``attacker`` (default: the side to move) deepened one threat at a time
    (1, 2, ... VCT_MAX_DEPTH) while time is left before ``deadline`` (``time.monotonic()``),
    each depth given the nodes the time left allows at ``rate``, at most ``budget``, and each
    call's speed fed back into ``rate``. Returns the first win, else the last answer (None if
    no depth could start). Without a deadline: depths up to 4 with ``budget`` nodes each."""
    result = None
    for depth in range(1, (VCT_MAX_DEPTH if deadline is not None else 4) + 1):
        nodes = budget
        start = time.monotonic()
        if deadline is not None:
            nodes = min(budget, int((deadline - start) * rate.value))
            if nodes < 100:
                break
        result = solve_vct(position, nodes, depth=depth, attacker=attacker,
                           vcf_budget=VCT_INNER_VCF_BUDGET)
        rate.update(result.nodes, time.monotonic() - start)
        if result.found or result.status == "unknown":
            break  # a deeper search with no more time would not finish either
    return result
