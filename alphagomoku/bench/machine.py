"""What a benchmark figure was measured on, stored beside the figure."""

from __future__ import annotations

import os
import platform


def describe() -> dict:
    info = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    try:
        import numba

        info["numba"] = numba.__version__
    except ImportError:  # pragma: no cover - numba is a hard dependency
        pass
    return info


# The figure docs/benchmarks.md gives a machine's speed by: how many positions a second the
# `tiny` network (15x15) evaluates in calls of 64 on one thread. One 2-core cloud machine has
# ranged from 4,700 to 6,000 on it between days, which moves an hour's positions, and with them
# its strength, as much as many recipe changes do; so each timed run records it beside its result.
SPEED_PROBE = "tiny network, 15x15, batch 64, one thread"


def forward_speed(seconds: float = 1.0, repeats: int = 3) -> dict | None:
    """The speed probe, measured ``repeats`` times for ``seconds`` each, on ONNX Runtime where it
    is installed and on torch otherwise; None when ``seconds`` is 0."""
    if seconds <= 0:
        return None
    import numpy as np
    import torch

    from alphagomoku.bench.nn import measure
    from alphagomoku.nn.config import ModelConfig
    from alphagomoku.nn.evaluator import Evaluator
    from alphagomoku.nn.inference_backend import resolve_backend
    from alphagomoku.nn.model import PolicyValueNet

    saved_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        model = PolicyValueNet(ModelConfig.preset("tiny", 15))
        backend = resolve_backend("onnx", torch.device("cpu"))[0]
        if backend == "onnx":
            from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

            evaluator = OnnxEvaluator(model, threads=1)
        else:
            evaluator = Evaluator(model, torch.device("cpu"))
        rng = np.random.default_rng(0)
        rates = [measure(evaluator, 64, seconds, rng) for _ in range(repeats)]
    finally:
        torch.set_num_threads(saved_threads)
    return {"probe": SPEED_PROBE, "backend": backend,
            "positions_per_second": [round(r, 1) for r in rates],
            "median": round(float(np.median(rates)), 1)}
