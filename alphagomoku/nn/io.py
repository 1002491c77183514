"""Inference weights on disk: one file holding the model config and its state dict.

The file is a plain dict ``{"format", "format_version", "model_config", "state_dict"}`` of
strings, integers and tensors, so ``torch.load(weights_only=True)`` reads it without unpickling
arbitrary objects. Training checkpoints (optimizer, schedule, RNG) live in ``alphagomoku.train``
and are a different file.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from alphagomoku.atomic import atomic_torch_save
from alphagomoku.nn.config import ModelConfig
from alphagomoku.nn.model import PolicyValueNet
from alphagomoku.read_errors import read_error_reason

FORMAT = "alphagomoku-model"
MODEL_FORMAT_VERSION = 1
# Training checkpoints (alphagomoku.train.checkpoint) hold a model too, under "model" and
# "model_config"; the readers here accept them, so any checkpoint works where weights are asked.
TRAINING_FORMAT = "alphagomoku-training-checkpoint"

# Added to parameter names by torch.compile and by DistributedDataParallel / DataParallel.
_WRAPPER_PREFIXES = ("_orig_mod.", "module.")


class CheckpointError(ValueError):
    """A weights file that cannot be used: missing, damaged, not ours, or for another shape."""


def strip_prefixes(state_dict: dict) -> dict:
    """``state_dict`` with the prefixes of compiled or distributed wrappers removed."""
    out = {}
    for key, value in state_dict.items():
        changed = True
        while changed:
            changed = False
            for prefix in _WRAPPER_PREFIXES:
                if key.startswith(prefix):
                    key = key[len(prefix):]
                    changed = True
        out[key] = value
    return out


def unwrap(model: nn.Module) -> nn.Module:
    """The PolicyValueNet inside a torch.compile or DDP wrapper."""
    while not isinstance(model, PolicyValueNet):
        inner = getattr(model, "_orig_mod", None)
        if inner is None:
            inner = getattr(model, "module", None)
        if not isinstance(inner, nn.Module):
            raise TypeError(f"expected a PolicyValueNet (possibly wrapped), got {type(model).__name__}")
        model = inner
    return model


def save_model(path, model: nn.Module) -> Path:
    """Write ``model``'s config and weights to ``path`` atomically: a reader sees the old file or
    the new one, never half of one. Returns the path."""
    net = unwrap(model)
    path = Path(path)
    payload = {
        "format": FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "model_config": net.config.to_dict(),
        "state_dict": {k: _without_denormals(v.detach().cpu())
                       for k, v in strip_prefixes(net.state_dict()).items()},
    }
    atomic_torch_save(payload, path)
    return path


def _without_denormals(t: torch.Tensor) -> torch.Tensor:
    """``t`` with its denormal floats (weights that weight decay has all but zeroed) set to zero:
    on a CPU each one costs a multiplication about a hundred times its time, in every reader of
    the file, torch or ONNX Runtime (alphagomoku.device.flush_denormals). A copy; ``t`` is kept."""
    if t.dtype not in _FLOAT_BITS:
        return t
    # From the bits, not by comparing values: where denormals already read as zero (this
    # process may have set that), a comparison would not see them.
    ints, exponent = _FLOAT_BITS[t.dtype]
    bits = t.view(ints)
    small = ((bits & exponent) == 0) & ((bits & ~exponent & ~_sign(ints)) != 0)
    return t.masked_fill(small, 0) if bool(small.any()) else t


# float dtype -> (the integers of its size, its exponent bits)
_FLOAT_BITS = {torch.float32: (torch.int32, 0x7F800000),
               torch.float64: (torch.int64, 0x7FF0000000000000),
               torch.float16: (torch.int16, 0x7C00),
               torch.bfloat16: (torch.int16, 0x7F80)}


def _sign(ints: torch.dtype) -> int:
    return torch.iinfo(ints).min  # the top bit alone


def read_model_file(path) -> tuple[ModelConfig, dict]:
    """The config and state dict stored in ``path``, checked; CheckpointError says what is
    wrong."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no model file at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many types for a damaged file
        raise CheckpointError(
            f"{path} is not a readable model file (truncated or corrupt?): {read_error_reason(e)}"
        ) from e
    if isinstance(payload, dict) and payload.get("format") == TRAINING_FORMAT:
        # The weight average, when the run kept one, is what plays.
        payload = {"format": FORMAT, "format_version": 1, "model_config": payload.get("model_config"),
                   "state_dict": payload.get("ema") or payload.get("model")}
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(
            f"{path} is not an alphagomoku model file or training checkpoint (no format tag "
            f"{FORMAT!r}); another program's weights?"
        )
    version = payload.get("format_version")
    if not isinstance(version, int) or version > MODEL_FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has model format version {version!r}; this code reads up to "
            f"{MODEL_FORMAT_VERSION}: update alphagomoku"
        )
    try:
        config = ModelConfig.from_dict(payload.get("model_config"))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path} holds an invalid model config: {e}") from e
    state_dict = payload.get("state_dict")
    if not isinstance(state_dict, dict):
        raise CheckpointError(f"{path} holds no state dict")
    return config, strip_prefixes(state_dict)


def model_from_state(config: ModelConfig, state_dict: dict, device="cpu", source: str = "") -> PolicyValueNet:
    """A PolicyValueNet built from ``config`` with ``state_dict`` loaded, on ``device``, in eval
    mode. A state dict of another shape raises CheckpointError naming the first mismatches."""
    model = PolicyValueNet(config)
    try:
        model.load_state_dict(strip_prefixes(state_dict))
    except RuntimeError as e:
        where = f"{source} " if source else ""
        raise CheckpointError(
            f"weights {where}do not fit a {config.label} model: {str(e).strip()}"
        ) from e
    return model.to(device).eval()


def load_model(path, device="cpu") -> PolicyValueNet:
    """The model saved by :func:`save_model` at ``path``, rebuilt from its stored config."""
    config, state_dict = read_model_file(path)
    return model_from_state(config, state_dict, device=getattr(device, "device", device), source=str(path))
