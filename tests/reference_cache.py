"""The evaluation cache in plain Python: the compiled table's slow twin.

An OrderedDict from each position's bytes to its answer, least recently used first. Same
contract as :class:`alphagomoku.nn.cache.EvaluationCache` for 0/1 planes: hits become the most
recent in row order, a batch's new positions are evaluated once each in the order first asked
and kept in that order, and the oldest answers go while more than ``capacity`` are kept.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np


class ReferenceCache:
    def __init__(self, evaluator, capacity: int):
        self.evaluator = evaluator
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self.answers: OrderedDict[bytes, tuple[np.ndarray, float]] = OrderedDict()

    def _shrink(self):
        while len(self.answers) > self.capacity:
            self.answers.popitem(last=False)

    def __call__(self, planes, legal):
        self._shrink()  # a capacity lowered since the last batch
        n = len(planes)
        keys = [p.tobytes() + m.tobytes() for p, m in zip(planes, legal)]
        priors = np.empty((n, legal.shape[1]), np.float32)
        values = np.empty(n, np.float32)
        todo: dict[bytes, int] = {}
        for i, key in enumerate(keys):
            if key in self.answers:
                self.answers.move_to_end(key)
                priors[i], values[i] = self.answers[key]
            elif key not in todo:
                todo[key] = i
        self.hits += n - len(todo)
        self.misses += len(todo)
        if todo:
            rows = list(todo.values())
            new_p, new_v = self.evaluator(planes[rows], legal[rows])
            for j, (key, row) in enumerate(todo.items()):
                self.answers[key] = (np.array(new_p[j], np.float32), float(new_v[j]))
                self._shrink()
            for i, key in enumerate(keys):
                if key in todo:
                    j = list(todo).index(key)
                    priors[i], values[i] = new_p[j], new_v[j]
        return priors, values
