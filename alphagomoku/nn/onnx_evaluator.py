"""OnnxEvaluator: the Evaluator's interface, run by ONNX Runtime on the CPU.

A CPU self-play worker spends nearly all its time in the forward pass, and ONNX Runtime runs
this network 1.2x to 5x as fast as torch eager with one thread (``scripts/benchmark.py nn``;
docs/benchmarks.md has the figures). The model is exported in memory, with the legal-point
softmax inside the graph (the same :func:`masked_softmax` torch uses), once per weights version:
:meth:`OnnxEvaluator.load_state_dict` exports again. Nothing is written to disk, so spawned
workers share no files and leave none behind.

Needs the ``onnx`` extra (``pip install 'alphagomoku[onnx]'``: onnxruntime, and onnx for
torch's exporter). :func:`alphagomoku.nn.backend.make_evaluator` chooses between this and the
torch Evaluator and falls back to torch when this cannot load.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import torch
from torch import nn

from alphagomoku.nn.evaluator import masked_softmax
from alphagomoku.nn.io import strip_prefixes
from alphagomoku.nn.onnx_file import OnnxNetwork

# Opset 17 is read by every onnxruntime from 1.13 on and has all the operators the net uses.
OPSET = 17


class _MaskedNet(nn.Module):
    """What is exported: planes and legal mask in, priors (masked softmax) and values out."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, planes: torch.Tensor, legal: torch.Tensor):
        logits, value = self.model(planes)
        return masked_softmax(logits, legal), value


def export_onnx(model: nn.Module) -> bytes:
    """``model`` (a PolicyValueNet on the CPU, eval mode) as an ONNX model, batch size dynamic.

    torch's TorchScript-based exporter (``dynamo=False``) needs only the ``onnx`` package and
    takes a tenth of a second; it is deprecated, so if it is gone or fails, the torch.export-based
    one (which needs ``onnxscript`` too) is tried before giving up with both reasons."""
    cfg = model.config
    wrapper = _MaskedNet(model).eval()
    planes = torch.zeros(2, cfg.num_planes, cfg.height, cfg.width)
    legal = torch.ones(2, cfg.area, dtype=torch.bool)
    axes = {name: {0: "batch"} for name in ("planes", "legal", "priors", "values")}
    if cfg.any_board:
        # One file for every board size: height and width stay free in the graph.
        axes["planes"].update({2: "height", 3: "width"})
        axes["legal"][1] = axes["priors"][1] = "points"
    errors = []
    for dynamo in (False, True):
        buffer = io.BytesIO()
        try:
            with warnings.catch_warnings():
                # The deprecation notice, and the tracer noting that the forward pass's shape
                # check is fixed at export: expected, and the batch axis stays dynamic.
                warnings.simplefilter("ignore")
                torch.onnx.export(wrapper, (planes, legal), buffer, input_names=["planes", "legal"],
                                  output_names=["priors", "values"], dynamic_axes=axes,
                                  # The new exporter writes its own opset (18 and up) and
                                  # converting it down fails; it also prints unless told not to.
                                  opset_version=None if dynamo else OPSET, dynamo=dynamo,
                                  verbose=False)
            return buffer.getvalue()
        except Exception as e:  # noqa: BLE001 - exporters raise many types; both are reported
            errors.append(f"{'torch.export' if dynamo else 'TorchScript'} exporter: "
                          f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    raise RuntimeError("could not export the network to ONNX (" + "; ".join(errors) + ")")


class OnnxEvaluator(OnnxNetwork):
    """Runs ``model``'s ONNX export with ONNX Runtime on the CPU, with ``threads`` intra-op
    threads (one in a self-play worker: the workers are the parallelism).

    ``__call__(planes, legal) -> (priors, values)`` as :class:`alphagomoku.nn.Evaluator`: priors
    float32 ``(B, H*W)`` summing to one over the legal points and zero elsewhere (all zeros for a
    row without a legal point), values float32 ``(B,)``. Raises ImportError when onnxruntime is
    missing and RuntimeError when the export fails; the caller decides what to fall back to.
    """

    def __init__(self, model: nn.Module, threads: int = 1):
        import onnxruntime  # noqa: F401 - ImportError here, before the export: use torch

        config = getattr(model, "config", None)
        if config is None:
            raise TypeError("the evaluator's model needs a .config (a ModelConfig)")
        self.device = torch.device("cpu")
        self.model = model.to("cpu").eval()
        super().__init__(export_onnx(self.model), config, threads)

    def load_state_dict(self, state_dict: dict) -> None:
        """Replace the weights (prefixes from torch.compile or DDP are removed) and export again."""
        self.model.load_state_dict(strip_prefixes(state_dict))
        self.model.eval()
        self._open(export_onnx(self.model))
