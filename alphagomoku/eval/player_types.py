"""What a player is: the interface every player has, and the optional parts some have.

Every player has a ``name``, ``reset(game)`` before each game (where it loads, checks and warms
up whatever it needs for that board) and ``choose(position, time_left_s)``, which returns a legal
flat index for the side to move. ``time_left_s`` is the time this move may take; None means no
limit.

The optional parts are protocols of their own, so a caller asks ``isinstance(player, Closable)``
rather than probing for attributes:

==================  ====================================================================
protocol            what it offers
==================  ====================================================================
``Closable``        ``close()``: frees what it holds (an engine subprocess, say)
``MemoryBounded``   ``memory_bytes``: the most its search trees and caches may take
``Wrapping``        ``wrapped``: the players it plays through (limits reach them too)
``ReportsVisits``   ``last_visits``: visits per move of its last search (None before one)
``ThinksMore``      ``think_more(position, budget_s)``: goes on with its last search
``Explains``        ``last_note``: what it found for its last move (None: nothing to say)
==================  ====================================================================
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from alphagomoku.game import GameConfig, Position


@runtime_checkable
class Player(Protocol):
    name: str

    def reset(self, game: GameConfig) -> None: ...

    def choose(self, position: Position, time_left_s: float | None = None) -> int: ...


@runtime_checkable
class Closable(Protocol):
    def close(self) -> None: ...


@runtime_checkable
class MemoryBounded(Protocol):
    memory_bytes: int | None


@runtime_checkable
class Wrapping(Protocol):
    @property
    def wrapped(self) -> tuple[Player, ...]: ...


@runtime_checkable
class ReportsVisits(Protocol):
    last_visits: np.ndarray | None


@runtime_checkable
class ThinksMore(Protocol):
    def think_more(self, position: Position, budget_s: float) -> int | None:
        """The move after searching the last search's tree for ``budget_s`` more seconds; None
        when that search was not of ``position`` or cannot grow."""


@runtime_checkable
class Explains(Protocol):
    last_note: str | None


def close_player(player: Player) -> None:
    """Free what ``player`` holds, if it holds anything."""
    if isinstance(player, Closable):
        player.close()


def limit_memory(player: Player, memory_bytes: int | None) -> None:
    """Keep what ``player``'s searches hold (their trees and caches) within ``memory_bytes``, or
    lift the limit with None; wrapped players are limited too, each to the whole amount, since
    one of them plays at a time."""
    if isinstance(player, Wrapping):
        for inner in player.wrapped:
            limit_memory(inner, memory_bytes)
    if isinstance(player, MemoryBounded):
        player.memory_bytes = memory_bytes


def last_visits(player: Player) -> np.ndarray | None:
    """Visits per move of ``player``'s last search; None for a player that does not say."""
    return player.last_visits if isinstance(player, ReportsVisits) else None


def move_note(player: Player) -> str | None:
    """What ``player`` found for its last move, for the engine's MESSAGE line; None when it
    has nothing to say."""
    return player.last_note if isinstance(player, Explains) else None


def check_can_move(position: Position) -> None:
    if position.is_over:
        raise ValueError(f"the game is over ({position.win_reason or 'finished'}): nothing to choose")


class RandomPlayer:
    """A uniformly random legal move."""

    def __init__(self, seed: int = 0, name: str = "random"):
        self.name = name
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def reset(self, game: GameConfig) -> None:
        pass

    def choose(self, position: Position, time_left_s: float | None = None) -> int:
        check_can_move(position)
        return int(self._rng.choice(position.legal_moves()))
