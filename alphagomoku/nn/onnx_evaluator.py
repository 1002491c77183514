"""OnnxEvaluator: the network evaluator run by ONNX Runtime on the CPU.

A CPU self-play worker spends nearly all its time in the forward pass, and ONNX Runtime runs
this network faster than torch eager with one thread (``scripts/benchmark.py nn`` measures it;
docs/benchmarks.md has the figures). The model is exported in memory, with the legal-point
softmax inside the graph (:mod:`alphagomoku.nn.onnx_export`), once per weights version:
:meth:`OnnxEvaluator.load_state_dict` exports again. Nothing is kept on disk, so spawned
workers share no files and leave none behind.

With ``precision="int8"`` the convolutions run in int8 once the evaluator has read enough
positions to calibrate on (:class:`~alphagomoku.nn.onnx_file.OnnxNetwork`).

Needs the ``onnx`` extra (``pip install 'alphagomoku[onnx]'``: onnxruntime, and onnx for
torch's exporter). :func:`alphagomoku.nn.inference_backend.make_evaluator` chooses between this
and the torch Evaluator and falls back to torch when this cannot load.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from alphagomoku.nn.io import strip_prefixes
from alphagomoku.nn.onnx_export import export_onnx
from alphagomoku.nn.onnx_file import OnnxNetwork


class OnnxEvaluator(OnnxNetwork):
    """Runs ``model``'s ONNX export with ONNX Runtime on the CPU, with ``threads`` intra-op
    threads (one in a self-play worker: the workers are the parallelism), in ``precision``
    (:class:`~alphagomoku.nn.onnx_file.OnnxNetwork` says how int8 starts).

    ``__call__(planes, legal) -> (priors, values)`` as :class:`alphagomoku.nn.Evaluator`: priors
    float32 ``(B, H*W)`` summing to one over the legal points and zero elsewhere (all zeros for a
    row without a legal point), values float32 ``(B,)``. Raises ImportError when onnxruntime is
    missing and RuntimeError when the export fails; the caller decides what to fall back to.
    """

    def __init__(self, model: nn.Module, threads: int = 1, precision: str = "fp32",
                 log: Callable[[str], None] | None = None):
        import onnxruntime  # noqa: F401 - ImportError here, before the export: use torch

        config = getattr(model, "config", None)
        if config is None:
            raise TypeError("the evaluator's model needs a .config (a ModelConfig)")
        self.device = torch.device("cpu")
        self.model = model.to("cpu").eval()
        super().__init__(export_onnx(self.model), config, threads, precision, log)

    def load_state_dict(self, state_dict: dict) -> None:
        """Replace the weights (prefixes from torch.compile or DDP are removed) and export again
        (quantised at once on the positions read so far, in int8)."""
        self.model.load_state_dict(strip_prefixes(state_dict))
        self.model.eval()
        self.replace_graph(export_onnx(self.model))
