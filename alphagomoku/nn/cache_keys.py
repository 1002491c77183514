"""The evaluation cache's keys, packed in one compiled pass.

A key is a position's input planes and legal mask as bits: the planes' values (0 or 1 in every
plane this project makes) one bit each, padded to a whole byte, then the legal mask likewise,
in :func:`numpy.packbits` order (the first value is the high bit), the whole padded with zeros
to 64-bit words for the table (:mod:`alphagomoku.nn.cache_table`). numpy takes several passes
over a batch's planes for that (a check that they are 0 or 1, the packing, a join); this kernel
reads each value once, and the cache's bookkeeping then costs a worker less on a fast device.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from alphagomoku.numba_config import JIT


@njit(**JIT)
def _pack_row(values, out, start):
    """Pack ``values`` (0/1 as any number type) into ``out[start:]``, eight a byte, high bit
    first, the last byte padded with zeros; returns the next free byte."""
    m = values.shape[0]
    k = start
    for base in range(0, m - m % 8, 8):
        b = 0
        for t in range(8):
            b = (b << 1) | (values[base + t] != 0)
        out[k] = b
        k += 1
    if m % 8:
        b = 0
        for t in range(m - m % 8, m):
            b = (b << 1) | (values[t] != 0)
        out[k] = b << (8 - m % 8)
        k += 1
    return k


@njit(**JIT)
def pack_keys(planes, legal, out):
    """Pack row ``i`` of ``planes`` (n, m) and ``legal`` (n, a) into ``out[i]``, which holds
    ceil(m / 8) + ceil(a / 8) bytes. Returns False, with ``out`` unfinished, when a plane value
    is neither 0 nor 1 (then the raw bytes must be the key)."""
    n, m = planes.shape
    for i in range(n):
        row = planes[i]
        odd = False
        for j in range(m):  # no branch a value: checked once a row
            odd |= (row[j] != 0.0) & (row[j] != 1.0)
        if odd:
            return False
        k = _pack_row(row, out[i], 0)
        _pack_row(legal[i], out[i], k)
    return True


def key_words(planes: np.ndarray, legal: np.ndarray) -> np.ndarray | None:
    """One exact key a position of the batch, as uint64 words (n, K): its planes and legal mask
    as bits, zero-padded to whole words. None when a plane value is neither 0 nor 1: such
    inputs are not this project's, and the cache passes them through."""
    n = len(planes)
    flat = np.ascontiguousarray(planes).reshape(n, -1)
    mask = np.ascontiguousarray(legal).reshape(n, -1)
    if mask.dtype != np.bool_:
        mask = mask != 0
    width = -(-flat.shape[1] // 8) + -(-mask.shape[1] // 8)
    out = np.zeros((n, 8 * -(-width // 8)), np.uint8)
    if not pack_keys(flat, mask, out):
        return None
    return out.view(np.uint64)
