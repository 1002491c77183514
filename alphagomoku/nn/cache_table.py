"""The evaluation cache's table: compiled lookups and stores over preallocated arrays.

Entries live in fixed slots: the key (a position's planes and legal mask packed to bits, as
64-bit words), the network's priors and value, and links that keep the slots in order of last
use, the most recent at the head. An open-addressing index (linear probing on a 64-bit hash of
the key, twice as many places as slots or more) finds a key's slot; a hit compares the whole
key, so two positions are never confused, whatever their hashes. When every slot is taken, a
new entry takes the least recently used one's slot; its index entry is removed by shifting the
probe run back (no tombstones).

A batch costs one call each way (:func:`lookup`, :func:`store`), with no Python step a row: on
a fast device the cache's bookkeeping is the worker's own time (``docs/gpu-selfplay.md``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from alphagomoku.numba_config import JIT

_EMPTY = -1
_NONE = -1

# meta fields
COUNT = 0    # slots in use
_HEAD = 1    # most recently used slot (or _NONE)
_TAIL = 2    # least recently used slot (or _NONE)
_LIMIT = 3   # slots that may be in use (the capacity; at most the arrays' length)
_FREE = 4    # slots on the free stack


class CacheTable(NamedTuple):
    """A table of ``C`` slots for keys of ``K`` words and answers over ``A`` points."""

    keys: np.ndarray      # uint64 (C, K)
    hashes: np.ndarray    # uint64 (C,)
    priors: np.ndarray    # float32 (C, A)
    values: np.ndarray    # float32 (C,)
    newer: np.ndarray     # int64 (C,): the slot used next after this one (toward the head)
    older: np.ndarray     # int64 (C,)
    free: np.ndarray      # int64 (C,): a stack of the slots not in use, its top at meta[_FREE]
    index: np.ndarray     # int64 (S,): a slot, or _EMPTY; S a power of two >= 2C
    meta: np.ndarray      # int64 (5,)


def index_places(slots: int) -> int:
    """The index's length for ``slots`` slots: the power of two at or above twice as many."""
    return 1 << max(1, (2 * slots - 1).bit_length())


def allocate(slots: int, key_words: int, area: int) -> CacheTable:
    """An empty table of ``slots`` slots (its limit too)."""
    meta = np.array([0, _NONE, _NONE, slots, slots], dtype=np.int64)
    return CacheTable(
        keys=np.zeros((slots, key_words), np.uint64),
        hashes=np.zeros(slots, np.uint64),
        priors=np.zeros((slots, area), np.float32),
        values=np.zeros(slots, np.float32),
        newer=np.full(slots, _NONE, np.int64),
        older=np.full(slots, _NONE, np.int64),
        free=np.arange(slots - 1, -1, -1, dtype=np.int64),  # slot 0 on top: slots fill in order
        index=np.full(index_places(slots), _EMPTY, np.int64),
        meta=meta,
    )


@njit(**JIT)
def hash_key(words):
    """A 64-bit hash of one key (splitmix64's finaliser over the words, chained)."""
    h = np.uint64(0x9E3779B97F4A7C15)
    for x in words:
        h ^= x
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


@njit(**JIT)
def _same(a, b):
    for k in range(a.shape[0]):
        if a[k] != b[k]:
            return False
    return True


@njit(**JIT)
def _find(tb, h, words):
    """(index place, slot) of the key, or (the empty place where it would go, _NONE)."""
    mask = np.uint64(tb.index.shape[0] - 1)
    i = np.int64(h & mask)
    while True:
        s = tb.index[i]
        if s == _EMPTY:
            return i, np.int64(_NONE)
        if tb.hashes[s] == h and _same(tb.keys[s], words):
            return i, s
        i = (i + 1) & np.int64(mask)


@njit(**JIT)
def _unlink(tb, s):
    newer, older = tb.newer[s], tb.older[s]
    if newer != _NONE:
        tb.older[newer] = older
    else:
        tb.meta[_HEAD] = older
    if older != _NONE:
        tb.newer[older] = newer
    else:
        tb.meta[_TAIL] = newer


@njit(**JIT)
def _push_head(tb, s):
    head = tb.meta[_HEAD]
    tb.newer[s] = _NONE
    tb.older[s] = head
    if head != _NONE:
        tb.newer[head] = s
    else:
        tb.meta[_TAIL] = s
    tb.meta[_HEAD] = s


@njit(**JIT)
def _remove_from_index(tb, i):
    """Empty index place ``i`` and shift the rest of its probe run back into the gap."""
    n = np.int64(tb.index.shape[0])
    mask = n - 1
    j = i
    while True:
        j = (j + 1) & mask
        s = tb.index[j]
        if s == _EMPTY:
            break
        home = np.int64(tb.hashes[s] & np.uint64(mask))
        # s may move back to i unless its home lies cyclically in (i, j].
        if (j > i and (home <= i or home > j)) or (j < i and (home <= i and home > j)):
            tb.index[i] = s
            i = j
    tb.index[i] = _EMPTY


@njit(**JIT)
def _evict_oldest(tb):
    s = tb.meta[_TAIL]
    i, _ = _find(tb, tb.hashes[s], tb.keys[s])
    _remove_from_index(tb, i)
    _unlink(tb, s)
    tb.meta[COUNT] -= 1
    tb.free[tb.meta[_FREE]] = s
    tb.meta[_FREE] += 1


@njit(**JIT)
def lookup(tb, words, hashes, priors, values, source, scratch):
    """Answer the rows of ``words`` (n, K) that the table holds, into ``priors`` and ``values``
    (each hit becomes the most recent entry, in row order). ``source[i]`` is -1 for a hit, else
    the first row of the batch with the same key (``i`` itself for a key's first row); rows
    that repeat a miss are answered from that row once it is evaluated. ``hashes`` receives
    each row's hash; ``scratch`` (at least index_places(n) places) is working memory. Returns
    the number of distinct keys the table lacks."""
    n = words.shape[0]
    mask = np.int64(scratch.shape[0] - 1)
    scratch[:] = _EMPTY
    missing = 0
    for r in range(n):
        h = hash_key(words[r])
        hashes[r] = h
        _, s = _find(tb, h, words[r])
        if s != _NONE:
            priors[r, :] = tb.priors[s]
            values[r] = tb.values[s]
            source[r] = -1
            if tb.meta[_HEAD] != s:
                _unlink(tb, s)
                _push_head(tb, s)
            continue
        i = np.int64(h & np.uint64(mask))
        while True:
            first = scratch[i]
            if first == _EMPTY:
                scratch[i] = r
                source[r] = r
                missing += 1
                break
            if hashes[first] == h and _same(words[first], words[r]):
                source[r] = first
                break
            i = (i + 1) & mask
    return missing


@njit(**JIT)
def store(tb, words, hashes, priors, values):
    """Keep the answers of rows ``words`` (n, K), in row order, each as the most recent entry;
    the least recently used entries go while the table is at its limit. A key already held
    (one evaluated twice by overlapping batches) only becomes the most recent."""
    for r in range(words.shape[0]):
        _, s = _find(tb, hashes[r], words[r])
        if s != _NONE:
            if tb.meta[_HEAD] != s:
                _unlink(tb, s)
                _push_head(tb, s)
            continue
        while tb.meta[COUNT] >= tb.meta[_LIMIT]:
            _evict_oldest(tb)
        place, _ = _find(tb, hashes[r], words[r])  # after the evictions, which shift the index
        tb.meta[_FREE] -= 1
        s = tb.free[tb.meta[_FREE]]
        tb.keys[s, :] = words[r]
        tb.hashes[s] = hashes[r]
        tb.priors[s, :] = priors[r]
        tb.values[s] = values[r]
        tb.index[place] = s
        _push_head(tb, s)
        tb.meta[COUNT] += 1


@njit(**JIT)
def oldest_first(tb, out):
    """Write the slots in use into ``out``, least recently used first; returns how many."""
    k = 0
    s = tb.meta[_TAIL]
    while s != _NONE:
        out[k] = s
        k += 1
        s = tb.newer[s]
    return k


@njit(**JIT)
def set_limit(tb, limit):
    """Set the table's limit to ``limit`` slots (at most its arrays' length), dropping the least
    recently used entries beyond it."""
    tb.meta[_LIMIT] = limit
    while tb.meta[COUNT] > limit:
        _evict_oldest(tb)
