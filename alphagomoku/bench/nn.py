"""Network evaluations per second through the Evaluator, per network, batch size, CPU threads and inference backend.

The networks are the presets' (``--presets``) or the one a training recipe builds
(``--recipe``: its preset with its input planes and shape). A figure is positions evaluated per
second (planes in, priors and values out, as MCTS calls it), keyed
``"<preset or recipe> b<batch> t<threads>"`` for torch and ``"... onnx"`` for ONNX Runtime,
whose speed-up over torch at the same setting is ``"... onnx/torch"`` (the two are measured back
to back, so a busy machine slows both alike). On a CPU each measurement runs with one thread and
with all of them; a measurement whose single call would take longer than
``--max-call-seconds`` (estimated from the previous, smaller batch) is skipped and listed, so the
default run stays within a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from alphagomoku import device as dev
from alphagomoku.nn.inference_backend import AMP_MODES  # imports no torch
from alphagomoku.nn.config import PRESETS, ModelConfig


def _int_list(text: str) -> list[int]:
    try:
        values = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _presets(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in PRESETS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown preset(s) {', '.join(unknown) or '(none given)'}: choose from {', '.join(PRESETS)}")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="auto", help=f"{dev.VALID_FORMS} (default auto)")
    parser.add_argument("--presets", type=_presets, default=list(PRESETS),
                        help="comma-separated presets (default: all)")
    parser.add_argument("--batch-sizes", type=_int_list, default=[1, 16, 64, 256],
                        help="comma-separated batch sizes (default 1,16,64,256)")
    parser.add_argument("--recipe", metavar="NAME",
                        help="time the untrained network this training recipe builds "
                             "(configs/NAME.json: its preset, input planes and shape) instead "
                             "of --presets")
    parser.add_argument("--board-size", type=int,
                        help="board side (default 15, or the recipe's main board)")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="time spent on each measurement (default 1)")
    parser.add_argument("--threads", default="1,all",
                        help="CPU only: torch thread counts to measure, 'all' = every core "
                             "(default 1,all)")
    parser.add_argument("--max-call-seconds", type=float, default=2.0,
                        help="skip a measurement whose single call would take longer (default 2)")
    parser.add_argument("--amp", choices=tuple(AMP_MODES), default="auto",
                        help="mixed precision: auto = on CUDA only")
    parser.add_argument("--backends", type=_backends, default=["torch", "onnx"],
                        help="CPU only: inference backends to compare (default torch,onnx; onnx "
                             "is left out, and listed, where it is not installed)")


def _backends(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names or any(n not in ("torch", "onnx") for n in names):
        raise argparse.ArgumentTypeError(f"expected torch and/or onnx, comma-separated, got {text!r}")
    return list(dict.fromkeys(names))


def _thread_counts(text: str, kind: str) -> list[int]:
    import torch

    if kind != "cpu":
        return [torch.get_num_threads()]  # the GPU does the work; threads only feed it
    out = []
    for s in text.split(","):
        s = s.strip()
        n = dev.cpu_count() if s == "all" else int(s) if s.isdigit() else 0
        if n < 1:
            raise ValueError(f"thread counts must be positive or 'all', got {text!r}")
        if n not in out:
            out.append(n)
    return out


def measure(evaluator, batch: int, seconds: float, rng: np.random.Generator) -> float:
    """Positions per second for calls of ``batch`` random positions, after one warm-up call."""
    cfg = evaluator.config
    planes = (rng.random((batch, cfg.num_planes, cfg.height, cfg.width)) < 0.2).astype(np.float32)
    legal = rng.random((batch, cfg.area)) < 0.7
    evaluator(planes, legal)
    calls = 0
    start = time.perf_counter()
    while True:
        evaluator(planes, legal)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls * batch / elapsed


def networks(args) -> list[tuple[str, ModelConfig]]:
    """The networks to time, each with the name its figures are keyed by: the recipe's, or one
    per preset."""
    if not args.recipe:
        size = args.board_size or 15
        return [(preset, ModelConfig.preset(preset, size)) for preset in args.presets]
    from alphagomoku.bench import load_recipe

    changes = {"board_size": args.board_size} if args.board_size else {}
    return [(args.recipe, load_recipe(args.recipe, one_board=True, **changes).model)]


def run(args) -> dict:
    import torch

    from alphagomoku.nn.inference_backend import resolve_backend
    from alphagomoku.nn.evaluator import Evaluator
    from alphagomoku.nn.model import PolicyValueNet

    choice = dev.select_device(args.device)
    amp = AMP_MODES[args.amp]
    result: dict = {"device": str(choice.device), "device_name": choice.name,
                    "torch": torch.__version__, "seconds_per_measurement": args.seconds}
    to_time = networks(args)
    backends = [b for b in args.backends if resolve_backend(b, choice.kind)[0] == b]
    left_out = [f"{b} ({resolve_backend(b, choice.kind)[1] or 'not on a CPU'})"
                for b in args.backends if b not in backends]
    if not backends:
        raise ValueError(f"no inference backend to measure: {', '.join(left_out)}")
    skipped = []
    saved_threads = torch.get_num_threads()
    rng = np.random.default_rng(0)
    try:
        for name, config in to_time:
            torch.manual_seed(0)
            model = PolicyValueNet(config)
            result["board_size"] = config.width
            result[f"{name} network"] = config.label
            evaluator = Evaluator(model, choice.device, amp=amp)
            # The best rate seen for this network and backend so far: on a shared machine one
            # slow measurement must not get every larger batch skipped.
            best_rate: dict[str, float] = {}
            for threads in _thread_counts(args.threads, choice.kind):
                torch.set_num_threads(threads)
                evaluators = {"torch": evaluator}
                if "onnx" in backends:
                    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

                    evaluators["onnx"] = OnnxEvaluator(model, threads=threads)
                for batch in sorted(args.batch_sizes):
                    base = f"{name} b{batch} t{threads}"
                    for backend in backends:
                        key = base if backend == "torch" else f"{base} {backend}"
                        best = best_rate.get(backend)
                        if best is not None and batch / best > args.max_call_seconds:
                            skipped.append(f"{key} (~{batch / best:.1f} s per call)")
                            continue
                        rate = measure(evaluators[backend], batch, args.seconds, rng)
                        best_rate[backend] = max(rate, best or 0.0)
                        result[key] = rate
                    if base in result and f"{base} onnx" in result:
                        result[f"{base} onnx/torch"] = result[f"{base} onnx"] / result[base]
    finally:
        torch.set_num_threads(saved_threads)
    result["amp"] = evaluator.amp
    result["backends"] = ",".join(backends)
    result["backends_left_out"] = ", ".join(left_out) if left_out else "none"
    result["skipped"] = ", ".join(skipped) if skipped else "none"
    return result
