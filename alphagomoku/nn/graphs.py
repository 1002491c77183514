"""Fixed batch sizes for the forward pass: CUDA graphs on a GPU, and the padding they need.

At self-play's batches (tens of positions) a GPU spends its time launching kernels, not
computing. A CUDA graph records the forward pass's kernels once and replays them with one
launch; it needs fixed shapes, so one graph is captured per batch size in :data:`BATCH_SIZES`
and a batch is padded to the next size. The padding rows are zero planes with every point
legal; they are cut off before the answer leaves this module, so they never reach a tree.

:class:`StaticBatches` holds one input buffer per size. ``batches(x, legal)`` copies the real
rows in, zeroes the rest, runs the size's forward (a graph replay on CUDA, the eager function
elsewhere) and returns the real rows' outputs. The padding is the same code on every device,
so the CPU tests check it. Weights changed in place (``load_state_dict``) keep the graphs
valid: a graph reads the parameters' memory, not their values at capture.

Capture can fail (an operation a graph cannot hold, too little memory, an old driver): the
evaluator then runs eagerly and says so in one line.
"""

from __future__ import annotations

import logging
from typing import Callable

import torch

log = logging.getLogger(__name__)

#: The batch sizes graphs are captured for; a larger batch runs eagerly.
BATCH_SIZES = (8, 16, 32, 64, 128, 256, 512, 1024)


def padded_size(n: int, sizes) -> int | None:
    """The smallest of ``sizes`` that holds ``n`` rows, or None when none does."""
    fits = [s for s in sizes if s >= n]
    return min(fits) if fits else None


class StaticBatches:
    """The forward pass at fixed batch sizes (see the module docstring).

    ``forward(x, legal) -> (priors, values)`` on tensors of one size; ``shape`` is a row's
    planes ``(C, H, W)``; ``capture``: record a CUDA graph per size (CUDA only)."""

    def __init__(self, forward: Callable, sizes, shape: tuple, area: int, device,
                 capture: bool = False, channels_last: bool = False):
        sizes = sorted({int(s) for s in sizes})
        if not sizes or sizes[0] < 1:
            raise ValueError(f"batch sizes must be positive integers, got {sizes!r}")
        self.forward = forward
        self.sizes = tuple(sizes)
        self.shape = tuple(shape)
        self.device = torch.device(device)
        self._x: dict[int, torch.Tensor] = {}
        self._legal: dict[int, torch.Tensor] = {}
        for size in self.sizes:
            x = torch.zeros((size, *shape), device=self.device)
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            self._x[size] = x
            self._legal[size] = torch.ones((size, area), dtype=torch.bool, device=self.device)
        self._graphs: dict[int, tuple] = {}
        if capture:
            self._capture()

    @property
    def captured(self) -> bool:
        return bool(self._graphs)

    def _capture(self) -> None:
        """One graph per size, the largest first, all in one memory pool."""
        if self.device.type != "cuda":
            raise ValueError("CUDA graphs need a CUDA device")
        stream = torch.cuda.Stream(self.device)
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream), torch.inference_mode():
            for size in self.sizes:  # warm-up outside the graph: allocations, autotuning
                for _ in range(2):
                    self.forward(self._x[size], self._legal[size])
        torch.cuda.current_stream(self.device).wait_stream(stream)
        pool = None
        for size in sorted(self.sizes, reverse=True):
            graph = torch.cuda.CUDAGraph()
            with torch.inference_mode(), torch.cuda.graph(graph, pool=pool):
                priors, values = self.forward(self._x[size], self._legal[size])
            pool = graph.pool()
            self._graphs[size] = (graph, priors, values)
        torch.cuda.synchronize(self.device)

    def __call__(self, x: torch.Tensor, legal: torch.Tensor):
        """``(priors, values)`` for the ``n`` rows of ``x`` (on this device), or None when ``n``
        is above the largest size or the rows are of another shape than captured. On CUDA the outputs are the graph's own memory: copy them
        (as the evaluator does, on the same stream) before the next call."""
        n = x.shape[0]
        size = padded_size(n, self.sizes)
        if size is None or tuple(x.shape[1:]) != self.shape:
            return None   # larger than any size, or another board (a network of every size)
        bx, bl = self._x[size], self._legal[size]
        bx[:n].copy_(x)
        bx[n:].zero_()
        bl[:n].copy_(legal)
        bl[n:].fill_(True)
        if size in self._graphs:
            graph, priors, values = self._graphs[size]
            graph.replay()
        else:
            priors, values = self.forward(bx, bl)
        return priors[:n], values[:n]
