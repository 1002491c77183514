"""The network as an ONNX graph: planes and legal mask in, priors and values out.

The legal-point softmax is inside the graph (the same :func:`masked_softmax` torch uses), so
ONNX Runtime answers exactly what :class:`~alphagomoku.nn.evaluator.Evaluator` answers. Used by
:class:`~alphagomoku.nn.onnx_evaluator.OnnxEvaluator` (in memory) and by
:func:`~alphagomoku.nn.onnx_file.write_onnx_file` (to a file). Needs torch and onnx.
"""

from __future__ import annotations

import io
import warnings

import torch
from torch import nn

from alphagomoku.nn.evaluator import masked_softmax

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
