"""A bounded cache of the network's answers, for searches that meet a position again.

Gumbel self-play starts each move's search from a new tree, since its policy target needs new
root statistics, and the players search one move at a time. So the new root and the positions
below it, mostly evaluated by the search a move or two earlier, go to the network again
(docs/benchmarks.md, "The evaluation cache", says how often). The network's answer depends only
on its input, so answers are kept under the planes and the legal mask themselves (packed to
bits), and the least recently used one is dropped when the cache is full. A cache belongs to one
set of weights: wrap a new evaluator when they change.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from alphagomoku.checks import positive_int
from alphagomoku.nn.cache_keys import keys as position_keys
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator, network_config


# Per kept answer beyond its data: the key's bytes object, the priors' row view, the tuple,
# the float and the OrderedDict's entry (CPython 3.11, tracemalloc; tests/test_nn_cache.py).
_ENTRY_OVERHEAD = 340


def entry_bytes(area: int, planes: int) -> int:
    """About the memory one kept answer takes: a network reading ``planes`` planes of ``area``
    points (its key packs them and the legal mask to bits; its priors are float32)."""
    return _ENTRY_OVERHEAD + -(-(planes + 1) * area // 8) + 4 * area


class EvaluationCache:
    """``evaluator(planes, legal) -> (priors, values)`` with the answers of up to ``capacity``
    positions kept. Positions met again, in an earlier call or twice in one batch, are not sent
    to the wrapped evaluator; its answers come back exactly as it gave them.

    ``hits`` counts the positions answered from the cache, ``misses`` those evaluated."""

    def __init__(self, evaluator: LeafEvaluator, capacity: int):
        self.evaluator = evaluator
        self.capacity = positive_int("capacity", capacity)
        # A NetworkEvaluator when the wrapped one is: the search reads the network's planes here.
        self.config = network_config(evaluator)
        self.hits = 0
        self.misses = 0
        self._answers: OrderedDict[bytes, tuple[np.ndarray, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._answers)

    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.submit(planes, legal).result()

    @property
    def overlaps(self) -> bool:
        """Whether the wrapped evaluator may still be working when :meth:`submit` returns."""
        return bool(getattr(self.evaluator, "overlaps", False))

    def submit(self, planes: np.ndarray, legal: np.ndarray):
        """Start the batch (alphagomoku.nn.inflight): the positions the cache knows are
        answered now, the others go to the wrapped evaluator's ``submit`` when it has one, and
        their answers are kept when the handle's ``result()`` is taken."""
        from alphagomoku.nn.inflight import Ready, submit

        planes = np.asarray(planes)
        legal = np.asarray(legal)
        n = len(planes)
        if n == 0:
            return submit(self.evaluator, planes, legal)
        keys = position_keys(planes, legal)
        answers = list(map(self._answers.get, keys))
        if answers.count(None) == n and len(set(keys)) == n:
            # Nothing known, nothing twice (half the calls in self-play): the evaluator's own
            # arrays, with no bookkeeping a row.
            self.misses += n
            return _Whole(self, keys, submit(self.evaluator, planes, legal))
        todo: dict[bytes, int] = {}  # a position to evaluate -> its first row in this batch
        for i, (key, answer) in enumerate(zip(keys, answers)):
            if answer is None:
                todo.setdefault(key, i)
            else:
                self._answers.move_to_end(key)
        self.hits += n - len(todo)
        self.misses += len(todo)
        priors = np.empty((n, legal[0].size), np.float32)
        values = np.empty(n, np.float32)
        known = [i for i, answer in enumerate(answers) if answer is not None]
        if known:
            priors[known] = np.stack([answers[i][0] for i in known])
            values[known] = [answers[i][1] for i in known]
        if not todo:
            return Ready(priors, values)
        rows = list(todo.values())
        asked = [i for i, answer in enumerate(answers) if answer is None]
        return _Part(self, list(todo), asked, [todo[keys[i]] for i in asked], rows, priors, values,
                     submit(self.evaluator, planes[rows], legal[rows]))

    def _store(self, keys: list[bytes], priors: np.ndarray, values: np.ndarray) -> None:
        # One copy for the batch (the caller may write into the arrays it is given); its rows
        # leave the cache at about the same time, and the copy with them.
        block = np.array(priors, copy=True)
        self._answers.update(zip(keys, zip(block, values.tolist())))
        for _ in range(len(self._answers) - self.capacity):
            self._answers.popitem(last=False)


class _Whole:
    """A batch the cache knew nothing of: the wrapped evaluator's answer, kept when taken."""

    def __init__(self, cache, keys, inner):
        self.cache, self.keys, self.inner = cache, keys, inner
        self.answer = None

    def result(self):
        if self.answer is None:
            priors, values = self.inner.result()
            values = np.asarray(values).reshape(-1)
            self.cache._store(self.keys, priors, values)
            self.answer = priors, values
        return self.answer


class _Part:
    """A batch partly answered by the cache: the rest from the wrapped evaluator."""

    def __init__(self, cache, new_keys, asked, source_rows, rows, priors, values, inner):
        self.cache, self.new_keys, self.inner = cache, new_keys, inner
        self.asked, self.rows = asked, rows
        # asked[i]'s answer is the evaluated row whose first appearance is ``source``.
        slot = {r: j for j, r in enumerate(rows)}
        self.source = [slot[r] for r in source_rows]
        self.priors, self.values = priors, values
        self.done = False

    def result(self):
        if not self.done:
            new_priors, new_values = self.inner.result()
            new_values = np.asarray(new_values).reshape(-1)
            self.cache._store(self.new_keys, new_priors, new_values)
            self.priors[self.asked] = new_priors[self.source]
            self.values[self.asked] = new_values[self.source]
            self.done = True
        return self.priors, self.values
