"""A network saved as an ONNX file, run by ONNX Runtime without torch.

The engine needs the network's forward pass and nothing else, yet importing torch alone takes
about 220 MB of resident memory, more than half of what Gomocup allows an engine. An ONNX file
written by :func:`write_onnx_file` holds the graph (the legal-point softmax inside, as
:func:`~alphagomoku.nn.onnx_export.export_onnx` writes it) and the model config in its
metadata, so :func:`read_onnx_file` needs only onnxruntime and numpy. Writing one needs torch
and onnx::

    python -m alphagomoku.nn.onnx_file alphagomoku/assets/default.pt alphagomoku/assets/default.onnx

``tests/test_shipped_model.py`` checks that the shipped ONNX file answers as the shipped
weights do.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from alphagomoku.checks import positive_int
from alphagomoku.nn.config import ModelConfig, check_inputs

CONFIG_KEY = "alphagomoku_model_config"


def is_onnx_file(source) -> bool:
    """Whether ``source`` names a network saved as an ONNX file (by its suffix)."""
    return isinstance(source, (str, Path)) and str(source).lower().endswith(".onnx")


class OnnxFileError(ValueError):
    """An ONNX file this package did not write, or cannot read; the message says which."""


def session_options(ort, threads: int):
    """One sequential CPU session with ``threads`` intra-op threads, all graph optimisations on,
    denormal floats read as zero (:func:`alphagomoku.device.flush_denormals` says why), and only
    errors logged (its notes on unused initialisers are noise)."""
    positive_int("threads", threads)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.add_session_config_entry("session.set_denormal_as_zero", "1")
    return options


class OnnxNetwork:
    """A :class:`~alphagomoku.mcts.leaf_evaluator.NetworkEvaluator` run by ONNX Runtime on the
    CPU from ``graph`` (serialised ONNX bytes, or a file's path) for a network of ``config``:
    ``__call__(planes, legal) -> (priors, values)``, priors float32 ``(B, H*W)`` summing to one
    over the legal points, values float32 ``(B,)``.

    With ``precision="int8"`` the convolutions run in int8 (:mod:`alphagomoku.nn.int8`), their
    ranges calibrated on positions the network was asked about: it answers in fp32 until it has
    read :data:`~alphagomoku.nn.int8.CALIBRATION_POSITIONS` of them, quantises then (``log``
    gets one line), and quantises each new graph (:meth:`replace_graph`) at once on the
    positions it holds."""

    def __init__(self, graph: bytes | str | Path, config: ModelConfig, threads: int = 1,
                 precision: str = "fp32", log=None):
        import onnxruntime as ort

        from alphagomoku.nn.int8 import ONNX_PRECISIONS

        if precision not in ONNX_PRECISIONS:
            raise ValueError(f"ONNX Runtime precision must be one of "
                             f"{', '.join(ONNX_PRECISIONS)}, got {precision!r}")
        self.config = config
        self.threads = threads
        self.precision = precision
        self._ort = ort
        self._log = log
        self.sample = None
        self.quantized = False
        if precision == "int8":
            from alphagomoku.nn.int8 import InputSample

            self.sample = InputSample()
        self.replace_graph(graph)

    def replace_graph(self, graph: bytes | str | Path) -> None:
        """Run ``graph`` from now on (quantised in int8 when the sample allows)."""
        if self.sample is not None and not isinstance(graph, bytes):
            graph = Path(graph).read_bytes()  # kept: each calibration quantises it afresh
        self._fp32_graph = graph
        self._open()

    def _open(self) -> None:
        graph = self._fp32_graph
        self.quantized = self.sample is not None and self.sample.ready
        if self.quantized:
            from alphagomoku.nn.int8 import quantize_graph

            try:
                graph = quantize_graph(graph, self.sample.batches())
            except Exception as e:  # noqa: BLE001 - any failure: go on in fp32, and say so once
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                self.sample, self.quantized = None, False
                if self._log is not None:
                    self._log(f"inference: int8 quantisation failed ({type(e).__name__}: "
                              f"{first}); the network stays fp32")
        source = str(graph) if isinstance(graph, Path) else graph
        self._session = self._ort.InferenceSession(source, session_options(self._ort,
                                                                           self.threads),
                                                   providers=["CPUExecutionProvider"])

    @property
    def arithmetic(self) -> str:
        """What the network computes in now: ``fp32``, ``int8``, or int8 still to come."""
        if self.quantized:
            return "int8"
        return "fp32 until int8 is calibrated" if self.sample is not None else "fp32"

    def describe(self) -> str:
        return (f"{self.config.label} on cpu ({self.arithmetic}, onnxruntime "
                f"{self._ort.__version__}, {self.threads} thread{'s' if self.threads > 1 else ''})")

    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes, legal = check_inputs(self.config, planes, legal)
        if planes.shape[0] == 0:
            return np.zeros(legal.shape, np.float32), np.zeros(0, np.float32)
        priors, values = self._session.run(None, {"planes": planes, "legal": legal})
        if self.sample is not None:
            self.sample.add(planes, legal)
            if not self.quantized and self.sample.ready:
                self._open()
                if self.quantized and self._log is not None:
                    self._log(f"inference: int8 convolutions from now on (calibrated on "
                              f"{len(self.sample)} positions)")
        return priors, values


def read_onnx_file(path, threads: int = 1, precision: str = "fp32", log=None) -> OnnxNetwork:
    """The network in an ONNX file written by :func:`write_onnx_file`, run in ``precision``
    (:class:`OnnxNetwork`); OnnxFileError says what is wrong with any other file."""
    path = Path(path)
    if not path.is_file():
        raise OnnxFileError(f"no ONNX file at {path}")
    try:
        # A stand-in config until the file's own is read from the session's metadata below.
        network = OnnxNetwork(path, ModelConfig(blocks=1, channels=1), threads, precision, log)
        meta = network._session.get_modelmeta().custom_metadata_map
    except ImportError:
        raise
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types for a bad file
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OnnxFileError(f"{path} is not a readable ONNX file: {first}") from e
    if CONFIG_KEY not in meta:
        raise OnnxFileError(f"{path} holds no alphagomoku model config: not written by "
                            f"write_onnx_file (python -m alphagomoku.nn.onnx_file)")
    try:
        network.config = ModelConfig.from_dict(json.loads(meta[CONFIG_KEY]))
    except (TypeError, ValueError) as e:
        raise OnnxFileError(f"{path} holds an invalid model config: {e}") from e
    return network


def write_onnx_file(model, path) -> Path:
    """``model`` (a PolicyValueNet) exported to ``path`` with its config, atomically. Needs torch
    and onnx."""
    import onnx

    from alphagomoku.atomic import atomic_path
    from alphagomoku.nn.onnx_export import export_onnx

    proto = onnx.load_from_string(export_onnx(model.to("cpu").eval()))
    onnx.helper.set_model_props(proto, {CONFIG_KEY: json.dumps(model.config.to_dict())})
    with atomic_path(path) as tmp:
        tmp.write_bytes(proto.SerializeToString())
    return Path(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m alphagomoku.nn.onnx_file",
                                description="Write a weights file as an ONNX file that runs "
                                            "without torch.")
    p.add_argument("weights", help="a model file or training checkpoint")
    p.add_argument("out", help="the ONNX file to write")
    args = p.parse_args(argv)
    from alphagomoku.nn.io import CheckpointError, load_model

    try:
        model = load_model(args.weights)
    except CheckpointError as e:
        p.error(str(e))
    print(f"wrote {write_onnx_file(model, args.out)} ({model.config.label})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
