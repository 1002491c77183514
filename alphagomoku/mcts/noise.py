"""Compiled Dirichlet sampling on a per-tree xorshift stream.

Noise is drawn inside the kernels, where the root is expanded, so each tree needs its own
generator state (``TreeArrays.rng[t]``): a tree's noise then depends only on its own seed, and K
trees searched together match each searched alone.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from alphagomoku.game.kernels import xorshift
from alphagomoku.numba_config import JIT

_TWO_POW_53 = 9007199254740992.0


@njit(**JIT)
def uniform01(state):
    """Uniform in [0, 1) from the top 53 bits of one xorshift draw."""
    return np.float64(xorshift(state) >> np.uint64(11)) / _TWO_POW_53


@njit(**JIT)
def standard_normal(state):
    u1 = uniform01(state)
    while u1 <= 0.0:
        u1 = uniform01(state)
    u2 = uniform01(state)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(**JIT)
def log_gamma_sample(alpha, state):
    """log of a Gamma(alpha, 1) draw (Marsaglia and Tsang). Logs, because the small alphas of
    root noise (10/225) make the draw itself underflow to zero."""
    boost = 0.0
    a = alpha
    if a < 1.0:
        # Gamma(a) = Gamma(a + 1) * U^(1/a)
        u = uniform01(state)
        while u <= 0.0:
            u = uniform01(state)
        boost = math.log(u) / a
        a += 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = standard_normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform01(state)
        if u > 0.0 and math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
            return math.log(d * v) + boost


@njit(**JIT)
def dirichlet_into(alpha, n, state, out):
    """out[:n] = one draw of a symmetric Dirichlet(alpha) over n outcomes."""
    top = -np.inf
    for i in range(n):
        out[i] = log_gamma_sample(alpha, state)
        if out[i] > top:
            top = out[i]
    total = 0.0
    for i in range(n):
        out[i] = math.exp(out[i] - top)
        total += out[i]
    for i in range(n):
        out[i] /= total
