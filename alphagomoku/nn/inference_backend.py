"""Which inference backend evaluates the network: torch, or ONNX Runtime on the CPU.

``auto`` (the default) means ONNX Runtime on a CPU when it can be used, else torch, and torch
always on CUDA and MPS, where it is the fast path (mixed precision, channels-last). When ONNX
Runtime is missing or cannot load the model, ``auto`` falls back to torch and says so in one
line per process. ``onnx`` insists, as a ``--device`` one asks for does: on a CPU, a backend
that cannot load is an error saying why (it is still torch on a GPU). ``torch`` never tries.
"""

from __future__ import annotations

from typing import Callable

from alphagomoku.nn.int8 import ONNX_PRECISIONS  # imports neither torch nor onnx

INFERENCE_BACKENDS = ("auto", "torch", "onnx")
# Mixed precision for the torch evaluator: auto is bf16 (fp16 below compute capability 8.0) on CUDA
# and fp32 elsewhere; on and off force it. Where it pays depends on the GPU, the model and the
# batch (docs/benchmarks.md#gpu).
AMP_MODES = {"auto": None, "on": True, "off": False}

# Fallback reasons already reported by this process: one line, not one per weights version.
_REPORTED: set[str] = set()


def onnx_problem() -> str:
    """Why the ONNX backend cannot be used here ("" when it can): its packages must import."""
    try:
        import onnx  # noqa: F401 - torch's exporter needs it
        import onnxruntime  # noqa: F401
    except ImportError as e:
        return f"onnxruntime or onnx is not installed ({e}); pip install 'alphagomoku[onnx]'"
    return ""


def check_backend(name: str) -> str:
    if name not in INFERENCE_BACKENDS:
        raise ValueError(f"inference backend must be one of {', '.join(INFERENCE_BACKENDS)}, got {name!r}")
    return name


def wants_onnx(backend: str, device) -> bool:
    """Whether ``backend`` asks for ONNX Runtime on ``device`` (a kind, torch.device or
    DeviceChoice): only ever on the CPU."""
    check_backend(backend)
    device = getattr(device, "device", device)
    kind = getattr(device, "type", None) or str(device).split(":")[0]
    return backend != "torch" and kind == "cpu"


def resolve_backend(backend: str, device) -> tuple[str, str]:
    """``(chosen, why_not_onnx)``: the backend that will run (``"onnx"`` or ``"torch"``) and,
    when ONNX was wanted but cannot be had, the reason ("" otherwise)."""
    if not wants_onnx(backend, device):
        return "torch", ""
    problem = onnx_problem()
    return ("torch", problem) if problem else ("onnx", "")


def describe_backend(backend: str, device) -> str:
    """One phrase for a log line: ``inference: onnxruntime 1.32.0`` or ``inference: torch``
    with the reason when ONNX was wanted and is not available."""
    chosen, problem = resolve_backend(backend, device)
    if chosen == "onnx":
        import onnxruntime

        return f"inference: onnxruntime {onnxruntime.__version__}"
    return "inference: torch" + (f" (fallback: {problem})" if problem else "")


class InferenceBackendError(RuntimeError):
    """``--inference-backend onnx`` was asked for on a CPU and ONNX Runtime cannot be used."""


def require_backend(backend: str, device) -> None:
    """Raise InferenceBackendError when ``backend`` is ``onnx``, ``device`` a CPU and ONNX
    Runtime not installed; ``auto`` and ``torch`` never raise."""
    chosen, problem = resolve_backend(backend, device)
    if backend == "onnx" and problem:
        raise InferenceBackendError(f"inference backend onnx was asked for, but {problem}")


def make_evaluator(model, device="cpu", backend: str = "auto", threads: int = 1,
                   log: Callable[[str], None] = print, amp: str = "auto", precision: str = "fp32"):
    """An evaluator for ``model`` (``evaluator(planes, legal) -> (priors, values)``): an
    :class:`~alphagomoku.nn.onnx_evaluator.OnnxEvaluator` with ``threads`` threads when
    :func:`wants_onnx`, else :class:`~alphagomoku.nn.evaluator.Evaluator` on ``device``.

    With ``auto``, if ONNX Runtime cannot be used (not installed, or the export or the session
    fails), the torch Evaluator is returned and ``log`` gets one line saying why, once per
    process and reason: a new weights version that fails the same way adds nothing. With
    ``onnx`` the same failures raise InferenceBackendError. ``amp`` (a key of :data:`AMP_MODES`)
    is the torch evaluator's mixed precision; ``precision`` (fp32 or int8) ONNX Runtime's
    (:class:`~alphagomoku.nn.onnx_evaluator.OnnxEvaluator`); torch ignores it."""
    from alphagomoku.nn.evaluator import Evaluator

    if amp not in AMP_MODES:
        raise ValueError(f"mixed precision must be one of {', '.join(AMP_MODES)}, got {amp!r}")
    if precision not in ONNX_PRECISIONS:
        raise ValueError(f"ONNX Runtime precision must be one of {', '.join(ONNX_PRECISIONS)}, "
                         f"got {precision!r}")
    require_backend(backend, device)
    chosen, problem = resolve_backend(backend, device)
    if problem:
        _report(log, problem)
    if chosen == "onnx":
        try:
            from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

            return OnnxEvaluator(model, threads=threads, precision=precision, log=log)
        except Exception as e:  # noqa: BLE001 - any failure to load means: use torch
            reason = f"ONNX Runtime could not load the network ({type(e).__name__}: {e}".strip()
            reason = reason.splitlines()[0] + ")"
            if backend == "onnx":
                raise InferenceBackendError(f"inference backend onnx: {reason}") from e
            _report(log, reason)
    return Evaluator(model, device, amp=AMP_MODES[amp])


def _report(log: Callable[[str], None], reason: str) -> None:
    if reason not in _REPORTED:
        _REPORTED.add(reason)
        log(f"inference: falling back to torch on the CPU: {reason}")
