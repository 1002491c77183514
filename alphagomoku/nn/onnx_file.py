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
    over the legal points, values float32 ``(B,)``."""

    def __init__(self, graph: bytes | str | Path, config: ModelConfig, threads: int = 1):
        import onnxruntime as ort

        self.config = config
        self.threads = threads
        self._ort = ort
        self._open(graph)

    def _open(self, graph: bytes | str | Path) -> None:
        source = str(graph) if isinstance(graph, Path) else graph
        self._session = self._ort.InferenceSession(source, session_options(self._ort,
                                                                           self.threads),
                                                   providers=["CPUExecutionProvider"])

    def describe(self) -> str:
        return (f"{self.config.label} on cpu (fp32, onnxruntime {self._ort.__version__}, "
                f"{self.threads} thread{'s' if self.threads > 1 else ''})")

    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes, legal = check_inputs(self.config, planes, legal)
        if planes.shape[0] == 0:
            return np.zeros(legal.shape, np.float32), np.zeros(0, np.float32)
        priors, values = self._session.run(None, {"planes": planes, "legal": legal})
        return priors, values


def read_onnx_file(path, threads: int = 1) -> OnnxNetwork:
    """The network in an ONNX file written by :func:`write_onnx_file`; OnnxFileError says what is
    wrong with any other file."""
    path = Path(path)
    if not path.is_file():
        raise OnnxFileError(f"no ONNX file at {path}")
    try:
        # A stand-in config until the file's own is read from the session's metadata below.
        network = OnnxNetwork(path, ModelConfig(blocks=1, channels=1), threads)
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
