"""The policy-value network, its presets, the batched evaluator and the weights file.

Names are loaded on first use (PEP 562), so ``from alphagomoku.nn.config import ModelConfig``
does not import torch: a self-play worker must choose its GPU before torch loads.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "ModelConfig": "config",
    "PRESETS": "config",
    "PolicyValueNet": "model",
    "Evaluator": "evaluator",
    "EvaluatorOutOfMemoryError": "evaluator",
    "CheckpointError": "io",
    "load_model": "io",
    "save_model": "io",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'alphagomoku.nn' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"alphagomoku.nn.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
