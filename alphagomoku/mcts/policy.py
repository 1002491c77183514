"""From visit counts to moves and training targets; the uniform evaluator."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from alphagomoku.checks import non_negative_int


def _check_visits(visits) -> np.ndarray:
    v = np.asarray(visits)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"visits must be a non-empty 1-D array, got shape {v.shape}")
    v = v.astype(np.float64)
    if not np.isfinite(v).all() or (v < 0).any():
        raise ValueError("visits must be finite and non-negative")
    if v.sum() <= 0:
        raise ValueError("visits are all zero: search the position before choosing a move")
    return v


def _check_temperature(temperature) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.floating)) \
            or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    return float(temperature)


def _policy64(v: np.ndarray, temperature: float) -> np.ndarray:
    out = np.zeros_like(v)
    if temperature == 0.0:
        out[int(np.argmax(v))] = 1.0
        return out
    # Scale by the largest count first: visits^(1/T) overflows for small T otherwise.
    scaled = (v / v.max()) ** (1.0 / temperature)
    return scaled / scaled.sum()


def visit_policy(visits, temperature: float = 1.0) -> np.ndarray:
    """visits^(1/T), normalised (float32). T = 0: one-hot on the most visited point, the lowest
    index among equals. With T = 1 this is the policy target of a training position."""
    v = _check_visits(visits)
    return _policy64(v, _check_temperature(temperature)).astype(np.float32)


def select_move(visits, temperature: float, rng: np.random.Generator) -> int:
    """A point drawn from :func:`visit_policy`; with T = 0 the most visited, ties broken by
    ``rng`` (so a deterministic player need not always prefer the top-left point)."""
    v = _check_visits(visits)
    t = _check_temperature(temperature)
    if t == 0.0:
        best = np.flatnonzero(v == v.max())
        return int(best[0]) if best.size == 1 else int(rng.choice(best))
    return int(rng.choice(v.size, p=_policy64(v, t)))


@dataclass(frozen=True)
class TemperatureSchedule:
    """Move temperature by ply: ``initial`` for the first ``moves`` plies of a game, then
    ``final`` (AlphaZero: 1 for the opening, then 0, i.e. the most visited move)."""

    initial: float = 1.0
    final: float = 0.0
    moves: int = 30

    def __post_init__(self):
        _check_temperature(self.initial)
        _check_temperature(self.final)
        non_negative_int("moves", self.moves)

    def __call__(self, ply: int) -> float:
        return self.initial if ply < self.moves else self.final


def uniform_evaluator(planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Uniform priors over the legal points and value 0: a search with no knowledge, for tests,
    benchmarks and the network-free baseline. :meth:`Forest.run` recognises it and evaluates
    inside the kernel, with the same result."""
    legal = np.asarray(legal, dtype=np.bool_)
    counts = legal.sum(axis=1, keepdims=True, dtype=np.float32)
    priors = legal.astype(np.float32) / np.maximum(counts, 1.0)
    return priors, np.zeros(legal.shape[0], dtype=np.float32)
