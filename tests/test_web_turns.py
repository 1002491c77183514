"""The server's searches take turns: never more at once than there are turns, first come first
served, and a turn handed on between batches reaches the search that waited longest."""

from __future__ import annotations

import threading
import time

import pytest

from alphagomoku.web.turns import Turns

JOIN_S = 20


def _start(fn, *args) -> threading.Thread:
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


def _until_waiting(turns: Turns, count: int) -> None:
    deadline = time.monotonic() + JOIN_S
    while turns.waiting < count:
        assert time.monotonic() < deadline, f"{count} searches never queued"
        time.sleep(0.001)


def _joined(threads) -> None:
    for t in threads:
        t.join(JOIN_S)
        assert not t.is_alive(), "a search never got its turn"


def test_never_more_searches_at_once_than_turns_and_every_one_ends():
    turns = Turns(3)
    lock = threading.Lock()
    running, most, batches = [0], [0], [0]

    def search():
        with turns.held():
            for _ in range(20):
                with lock:
                    running[0] += 1
                    most[0] = max(most[0], running[0])
                time.sleep(0.0005)
                with lock:
                    running[0] -= 1
                    batches[0] += 1
                turns.pass_on()

    _joined([_start(search) for _ in range(12)])
    assert most[0] == 3
    assert batches[0] == 12 * 20
    # All turns are free again: three more can take one without waiting.
    for _ in range(3):
        turns.take()
    assert turns.waiting == 0


def test_turns_go_first_come_first_served():
    turns = Turns(1)
    turns.take()
    order = []

    def search(name):
        with turns.held():
            order.append(name)

    threads = []
    for i, name in enumerate("abcd"):
        threads.append(_start(search, name))
        _until_waiting(turns, i + 1)
    turns.give()
    _joined(threads)
    assert order == list("abcd")


def test_passing_on_lets_the_waiting_search_run_a_batch_first():
    turns = Turns(1)
    events = []
    turns.take()
    other = _start(lambda: (turns.take(), events.append("other's batch"), turns.give()))
    _until_waiting(turns, 1)
    events.append("first batch")
    turns.pass_on()  # returns once the other search has given its turn back
    events.append("second batch")
    turns.give()
    _joined([other])
    assert events == ["first batch", "other's batch", "second batch"]


def test_passing_on_with_nobody_waiting_keeps_the_turn():
    turns = Turns(1)
    with turns.held():
        start = time.monotonic()
        for _ in range(1000):
            turns.pass_on()
        assert time.monotonic() - start < 1.0
        assert turns.waiting == 0
    turns.take()  # given back on leaving the block


def test_a_search_that_fails_gives_its_turn_back():
    turns = Turns(1)
    with pytest.raises(RuntimeError):
        with turns.held():
            raise RuntimeError("the search failed")
    other = _start(lambda: turns.held().__enter__())
    _joined([other])


def test_at_least_one_turn():
    with pytest.raises(ValueError, match="at least one turn"):
        Turns(0)
