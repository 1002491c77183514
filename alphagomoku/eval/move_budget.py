"""What one move may spend: its time, and the memory of its search.

A searching player honours a move time by growing its search step by step until the time is up:
the PUCT players one evaluator batch at a time, pure MCTS in compiled steps sized from its
measured speed (:func:`fill_budget`). A search that cannot be continued is redone at growing
sizes instead (:func:`search_within`). A memory limit caps the nodes a timed search may grow to
(:func:`tree_cap`).
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

from alphagomoku.checks import positive_int
from alphagomoku.mcts.tree import node_bytes

T = TypeVar("T")

# With only a time limit, the most simulations one search may grow to: it bounds the tree's
# memory (about 115 MB on 15x15, 245 MB on 22x22) when no memory limit is given.
MAX_TIMED_SIMULATIONS = 50_000
# Under a memory limit, the most of it the network answers' cache may take before the tree gets
# the rest: the cache speeds up every move (about twice the simulations at 0.5 s), a larger tree
# only the long ones.
CACHE_MEMORY_SHARE = 0.5
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
    positive_int("the simulation limit", limit)
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
    positive_int("the simulation limit", limit)
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


def move_budget(own: float | None, given: float | None) -> float | None:
    """The time a move may take: the player's own ``own`` and the caller's ``given``, the
    smaller of the two; None when neither is set."""
    if own is None:
        return given
    return own if given is None else min(own, given)
