"""An exponential moving average of the network's weights, for everything that plays.

The weights after the last gradient step carry that step's noise; their average over the last
few hundred steps plays more steadily (KataGo's and KataGomo's play networks are such averages).
The trainer keeps training the raw weights and hands the average to self-play, snapshots, the
arena and the exported model.
"""

from __future__ import annotations

import copy

import torch
from torch import nn


class WeightAverage:
    """``decay`` per gradient step: after each step the average moves ``1 - decay`` of the way to
    the weights. Batch-norm statistics are averaged the same way, so the averaged network's
    normalisation matches its averaged weights."""

    def __init__(self, model: nn.Module, decay: float):
        if not 0.0 < decay < 1.0:
            raise ValueError(f"the weight average's decay must be within (0, 1), got {decay!r}")
        self.decay = decay
        self.model = copy.deepcopy(model).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        mine = self.model.state_dict()
        for name, value in model.state_dict().items():
            avg = mine[name]
            if avg.dtype.is_floating_point:
                avg.lerp_(value.to(avg.dtype), 1.0 - self.decay)
            else:
                avg.copy_(value)   # counters such as num_batches_tracked

    def state_dict(self) -> dict:
        return self.model.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state)
