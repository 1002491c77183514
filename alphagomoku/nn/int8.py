"""int8 convolutions for a CPU worker's ONNX Runtime network, calibrated on positions it has read.

On a CPU self-play worker the network's forward pass is most of the time a position costs, and
its convolutions run about twice as fast in int8 as in fp32 (``scripts/benchmark.py selfplay
--backends onnx,onnx-int8`` measures both; docs/benchmarks.md has the figures). Static
quantisation needs the range of every activation, which depends on the weights and on what the
network reads: :class:`InputSample` keeps a few hundred of the positions the worker's searches
asked about, and :func:`quantize_graph` runs the new weights over them to set the ranges.
Weights are quantised per output channel; only the convolutions change, so the pooling, the
dense value layers and the legal-point softmax stay fp32.

Needs ``onnx`` and ``onnxruntime`` (the ``onnx`` extra).
"""

from __future__ import annotations

import logging
import tempfile
from collections import deque
from pathlib import Path

import numpy as np

#: What ONNX Runtime can compute the convolutions in.
ONNX_PRECISIONS = ("fp32", "int8")
#: Positions a calibration reads: enough that the ranges of a few hundred positions set them
#: (a real position's activations, not a random board's: random boards set ranges that clip).
CALIBRATION_POSITIONS = 256
#: Positions per batch of the calibration pass.
_CALIBRATION_BATCH = 64


class InputSample:
    """The last :data:`CALIBRATION_POSITIONS` or so positions a network was asked about.

    :meth:`add` copies every call's rows until the sample is full, then one call in ``every``,
    so the sample follows the games as they move on at a small cost a call. Calls of several
    board sizes are kept apart by shape (a network of every size reads them all)."""

    def __init__(self, positions: int = CALIBRATION_POSITIONS, every: int = 8):
        self.positions = positions
        self.every = every
        self._batches: deque[tuple[np.ndarray, np.ndarray]] = deque()
        self._rows = 0
        self._calls = 0

    @property
    def ready(self) -> bool:
        return self._rows >= self.positions

    def __len__(self) -> int:
        return self._rows

    def add(self, planes: np.ndarray, legal: np.ndarray) -> None:
        self._calls += 1
        if len(planes) == 0 or (self.ready and self._calls % self.every):
            return
        take = min(len(planes), self.positions)
        self._batches.append((np.array(planes[:take], np.float32),
                              np.array(legal[:take], np.bool_)))
        self._rows += take
        while self._rows - len(self._batches[0][0]) >= self.positions:
            self._rows -= len(self._batches.popleft()[0])

    def batches(self) -> list[dict[str, np.ndarray]]:
        """The sample as network inputs: one board shape a batch, at most a calibration batch."""
        by_shape: dict[tuple, list[tuple[np.ndarray, np.ndarray]]] = {}
        for planes, legal in self._batches:
            by_shape.setdefault(planes.shape[1:], []).append((planes, legal))
        feeds = []
        for group in by_shape.values():
            planes = np.concatenate([p for p, _ in group])
            legal = np.concatenate([m for _, m in group])
            for i in range(0, len(planes), _CALIBRATION_BATCH):
                feeds.append({"planes": planes[i:i + _CALIBRATION_BATCH],
                              "legal": legal[i:i + _CALIBRATION_BATCH]})
        return feeds


def quantize_graph(graph: bytes, feeds: list[dict[str, np.ndarray]]) -> bytes:
    """``graph`` (an fp32 network's ONNX bytes) with int8 convolutions, the activations' ranges
    set by running it over ``feeds`` (:meth:`InputSample.batches`)."""
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not feeds:
        raise ValueError("int8 calibration needs at least one batch of positions")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._feeds = iter(feeds)

        def get_next(self):
            return next(self._feeds, None)

    # The quantiser warns on the root logger that the pre-pass below skipped its symbolic
    # shapes, which it cannot infer for a network of every board size and the convolutions do
    # not need.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with tempfile.TemporaryDirectory(prefix="alphagomoku-int8-") as tmp:
            fused, out = Path(tmp) / "fused.onnx", Path(tmp) / "int8.onnx"
            # ONNX Runtime's graph optimisations first: a batch norm folded into its convolution
            # leaves Conv-Relu pairs that run as one int8 kernel; left apart, every activation
            # goes back to fp32 between them, and int8 is slower than fp32.
            quant_pre_process(onnx.load_from_string(graph), fused, skip_symbolic_shape=True)
            quantize_static(fused, out, Reader(),
                            quant_format=QuantFormat.QDQ, op_types_to_quantize=["Conv"],
                            per_channel=True, activation_type=QuantType.QUInt8,
                            weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                            extra_options={"CalibTensorRangeSymmetric": False})
            return out.read_bytes()
    finally:
        root.setLevel(level)
