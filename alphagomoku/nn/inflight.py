"""Batches in flight: the evaluator interface that lets a worker search while the device works.

Any evaluator is a callable ``evaluator(planes, legal) -> (priors, values)``. One that can start
a batch and hand its answer back later also has ``submit(planes, legal) -> handle``; the
handle's ``result()`` waits for the batch and returns ``(priors, values)``. The self-play loop
splits its games into groups and, while one group's batch is on the device, runs selection,
expansion and input planes for the others (``docs/gpu-selfplay.md``).

The arrays given to ``submit`` belong to the caller again only once the handle's ``result()``
has returned: an evaluator may read them late (the self-play loop does not touch a group's
planes until it has its answer). :func:`submit` gives every plain callable the same interface,
answering at once, so the loop has one code path whatever the evaluator.

This module imports no torch.
"""

from __future__ import annotations

import numpy as np


class Ready:
    """A handle whose answer is already there (a synchronous evaluator's)."""

    __slots__ = ("_answer",)

    def __init__(self, priors: np.ndarray, values: np.ndarray):
        self._answer = (priors, values)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        return self._answer


def submit(evaluator, planes: np.ndarray, legal: np.ndarray):
    """Start evaluating a batch with ``evaluator``: its own ``submit`` when it has one, else the
    plain call, done now. Returns a handle; ``handle.result()`` gives ``(priors, values)``."""
    start = getattr(evaluator, "submit", None)
    if start is not None:
        return start(planes, legal)
    priors, values = evaluator(planes, legal)
    return Ready(priors, values)


def can_overlap(evaluator) -> bool:
    """Whether ``evaluator`` may still be working when ``submit`` returns (its ``overlaps``
    attribute, false for a plain callable): with one that cannot, more groups only cost calls."""
    return bool(getattr(evaluator, "overlaps", False))
