"""A bounded cache of the network's answers, for searches that meet a position again.

Gumbel self-play starts each move's search from a new tree, since its policy target needs new
root statistics, and the players search one move at a time. So the new root and the positions
below it, mostly evaluated by the search a move or two earlier, go to the network again
(docs/benchmarks.md, "The evaluation cache", says how often). The network's answer depends only
on its input, so answers are kept under the planes and the legal mask themselves (packed to
bits, compared whole), and the least recently used one is dropped when the cache is full. The
answers live in a compiled table of preallocated slots (:mod:`alphagomoku.nn.cache_table`),
made at the first batch for its board. A cache belongs to one set of weights: wrap a new
evaluator when they change.
"""

from __future__ import annotations

import numpy as np

from alphagomoku.checks import positive_int
from alphagomoku.mcts.leaf_evaluator import LeafEvaluator, network_config
from alphagomoku.nn import cache_table
from alphagomoku.nn.cache_keys import key_words
from alphagomoku.numba_config import EntryPoints

# Every call passes arrays of the same types (the tables', this module's own, and answers made
# C-contiguous, writable float32), and working out the types of a table's eight arrays costs
# more than a small batch's lookups.
_run = EntryPoints()


def _writable_float32(a) -> np.ndarray:
    a = np.ascontiguousarray(a, np.float32)
    return a if a.flags.writeable else a.copy()


# Per kept answer beyond its priors and key: the hash, the value, the links, the free stack and
# about three index places (tests/test_nn_cache.py measures the whole).
_ENTRY_OVERHEAD = 8 + 4 + 16 + 8 + 24


def entry_bytes(area: int, planes: int) -> int:
    """About the memory one kept answer takes: a network reading ``planes`` planes of ``area``
    points (its key packs them and the legal mask to bits, in 64-bit words; its priors are
    float32)."""
    key_bytes = -(-planes * area // 8) + -(-area // 8)
    return _ENTRY_OVERHEAD + 8 * -(-key_bytes // 8) + 4 * area


class EvaluationCache:
    """``evaluator(planes, legal) -> (priors, values)`` with the answers of up to ``capacity``
    positions kept. Positions met again, in an earlier call or twice in one batch, are not sent
    to the wrapped evaluator; its answers come back exactly as it gave them. Inputs with plane
    values other than 0 and 1 (none of this project's) pass through, never kept.

    ``hits`` counts the positions answered from the cache, ``misses`` those evaluated."""

    def __init__(self, evaluator: LeafEvaluator, capacity: int):
        self.evaluator = evaluator
        self._capacity = positive_int("capacity", capacity)
        # A NetworkEvaluator when the wrapped one is: the search reads the network's planes here.
        self.config = network_config(evaluator)
        self.hits = 0
        self.misses = 0
        self._table: cache_table.CacheTable | None = None

    @property
    def capacity(self) -> int:
        return self._capacity

    @capacity.setter
    def capacity(self, value: int) -> None:
        """A new bound: the least recently used answers go at once when it is lower."""
        self._capacity = positive_int("capacity", value)
        table = self._table
        if table is None:
            return
        if self._capacity <= len(table.values):
            cache_table.set_limit(table, self._capacity)
            return
        # More slots than the table has: a larger one, the answers moved oldest first.
        slots = np.empty(len(table.values), np.int64)
        order = slots[:cache_table.oldest_first(table, slots)]
        self._table = cache_table.allocate(self._capacity, table.keys.shape[1],
                                           table.priors.shape[1])
        cache_table.store(self._table, table.keys[order], table.hashes[order],
                          table.priors[order], table.values[order])

    def __len__(self) -> int:
        return 0 if self._table is None else int(self._table.meta[cache_table.COUNT])

    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.submit(planes, legal).result()

    @property
    def overlaps(self) -> bool:
        """Whether the wrapped evaluator may still be working when :meth:`submit` returns."""
        return bool(getattr(self.evaluator, "overlaps", False))

    def _table_for(self, key_words_: int, area: int) -> cache_table.CacheTable:
        table = self._table
        if table is None or table.keys.shape[1] != key_words_ or table.priors.shape[1] != area:
            # The first batch, or another board: answers for the old one could never match.
            table = self._table = cache_table.allocate(self._capacity, key_words_, area)
        return table

    def submit(self, planes: np.ndarray, legal: np.ndarray):
        """Start the batch (alphagomoku.nn.inflight): the positions the cache knows are
        answered now, the others go to the wrapped evaluator's ``submit`` when it has one, and
        their answers are kept when the handle's ``result()`` is taken."""
        from alphagomoku.nn.inflight import Ready, submit

        planes = np.asarray(planes)
        legal = np.asarray(legal)
        n = len(planes)
        words = key_words(planes, legal) if n else None
        if words is None:
            self.misses += n
            return submit(self.evaluator, planes, legal)
        area = legal[0].size
        table = self._table_for(words.shape[1], area)
        priors = np.empty((n, area), np.float32)
        values = np.empty(n, np.float32)
        hashes = np.empty(n, np.uint64)
        source = np.empty(n, np.int64)
        scratch = np.empty(cache_table.index_places(n), np.int64)
        missing = int(_run(cache_table.lookup, table, words, hashes, priors, values, source,
                           scratch))
        self.hits += n - missing
        self.misses += missing
        if missing == 0:
            return Ready(priors, values)
        if missing == n:
            # Nothing known, nothing twice (half the calls in self-play): the evaluator's own
            # arrays, with no copying.
            return _Answer(self, table, words, hashes, None, None, None, None,
                           submit(self.evaluator, planes, legal))
        # A row repeating a miss takes the answer of that key's first row.
        rows = np.flatnonzero(source == np.arange(n))
        asked = np.flatnonzero(source >= 0)
        place = np.empty(n, np.int64)
        place[rows] = np.arange(len(rows))
        return _Answer(self, table, words[rows], hashes[rows], asked, place[source[asked]],
                       priors, values, submit(self.evaluator, planes[rows], legal[rows]))


class _Answer:
    """A batch's handle: the wrapped evaluator's answer for the positions the cache lacked,
    kept when taken, and with ``asked`` the batch's whole answer (rows ``asked`` take the
    evaluated rows ``source``, the others were answered by the cache)."""

    def __init__(self, cache, table, words, hashes, asked, source, priors, values, inner):
        self.cache, self.table, self.words, self.hashes = cache, table, words, hashes
        self.asked, self.source, self.priors, self.values = asked, source, priors, values
        self.inner = inner
        self.answer = None

    def result(self):
        if self.answer is None:
            new_priors, new_values = self.inner.result()
            new_values = np.asarray(new_values).reshape(-1)
            if self.table is self.cache._table:  # not replaced meanwhile for another board
                _run(cache_table.store, self.table, self.words, self.hashes,
                     _writable_float32(new_priors), _writable_float32(new_values))
            if self.asked is None:
                self.answer = new_priors, new_values
            else:
                self.priors[self.asked] = new_priors[self.source]
                self.values[self.asked] = new_values[self.source]
                self.answer = self.priors, self.values
        return self.answer
