"""Searches take turns: at most one per core runs at a time, handing over batch by batch.

Every page's search runs in its own thread, and each of those threads lets go of the GIL at
every kernel call and network batch and wants it straight back. Twenty of them left the event
loop, which needs the GIL again after every socket call, queued behind all of them: a status
request took seconds, and the replies piled up. Twenty searches on two cores go no faster as
twenty threads than as two, so a search holds a turn while it runs and, at each batch, hands it
to the search that has waited longest (first come, first served, so every page moves on). A
thread waiting for its turn sleeps on an event and leaves the GIL to the others.
"""

from __future__ import annotations

import collections
import contextlib
import threading


class Turns:
    """``slots`` turns shared by the server's searches (see the module docstring)."""

    def __init__(self, slots: int):
        if slots < 1:
            raise ValueError(f"searches need at least one turn, got {slots}")
        self.slots = slots
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: collections.deque[threading.Event] = collections.deque()

    @property
    def waiting(self) -> int:
        """Searches waiting for a turn now."""
        with self._lock:
            return len(self._waiting)

    def _queue(self) -> threading.Event:
        turn = threading.Event()
        self._waiting.append(turn)
        return turn

    def take(self) -> None:
        """Wait for a turn (at once when one is free and nobody waits)."""
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return
            turn = self._queue()
        turn.wait()

    def give(self) -> None:
        """Give this thread's turn back: to the longest waiting search, or to the free ones."""
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._free += 1

    def pass_on(self) -> None:
        """Between batches: when another search waits, hand it this turn and wait for the next
        one; otherwise carry on."""
        with self._lock:
            if not self._waiting:
                return
            self._waiting.popleft().set()
            turn = self._queue()
        turn.wait()

    @contextlib.contextmanager
    def held(self):
        """A turn for the length of the block."""
        self.take()
        try:
            yield
        finally:
            self.give()
