"""How long the engine may think for one move, from what the manager said with ``INFO``.

``timeout_turn`` caps each move; ``time_left`` (when the match has a clock, ``timeout_match`` >
0) is shared among the moves still to come. A reserve is kept back from both for everything
outside the search (reading the command, the tactical check, writing the answer, the pipe, a
slow scheduler on a busy machine).
"""

from __future__ import annotations

from dataclasses import dataclass

# Used until the manager sends INFO timeout_turn (the protocol lets it never send one).
DEFAULT_TURN_MS = 5_000
# The reserve: this much plus a share of the limit.
RESERVE_MS = 60
RESERVE_SHARE = 0.15
# Whatever the clocks say, search at least this long: an answer must come from some search.
MIN_BUDGET_S = 0.005
# The match clock is spread over at least this many and at most this many of our future moves.
MIN_MOVES_LEFT = 10
MAX_MOVES_LEFT = 40


@dataclass
class TimeControl:
    """The limits the manager gave, in milliseconds (0 = none for the match, as the protocol
    has it; ``timeout_turn`` 0 = play as fast as possible)."""

    timeout_turn_ms: int = DEFAULT_TURN_MS
    timeout_match_ms: int = 0
    time_left_ms: int | None = None

    def budget_s(self, empty_points: int) -> float:
        """Seconds the search may take for this move, ``empty_points`` being the empty points
        left on the board (an upper bound on the game's remaining length)."""
        turn = self.timeout_turn_ms * (1.0 - RESERVE_SHARE) - RESERVE_MS
        limit = turn
        if self.timeout_match_ms > 0 and self.time_left_ms is not None:
            moves_left = min(MAX_MOVES_LEFT, max(MIN_MOVES_LEFT, empty_points // 2))
            share = self.time_left_ms / moves_left
            limit = min(limit, share * (1.0 - RESERVE_SHARE) - RESERVE_MS)
        return max(MIN_BUDGET_S, limit / 1000.0)
