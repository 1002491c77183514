"""Evaluator: the batched network call MCTS makes, numpy in and numpy out.

``evaluator(planes, legal) -> (priors, values)``: one device transfer each way per batch, the
softmax over legal points only, mixed precision and channels-last on CUDA, and an out-of-memory
back-off that halves the batch instead of losing it.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
from torch import nn

from alphagomoku.device import cuda_autocast_dtype
from alphagomoku.nn.config import check_inputs  # noqa: F401 - also imported from here
from alphagomoku.nn.io import strip_prefixes

log = logging.getLogger(__name__)


def masked_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The softmax of ``logits`` over the points where ``legal`` is true, exactly zero elsewhere.
    Shared with the ONNX export (alphagomoku.nn.onnx_export), so both backends mask alike."""
    priors = torch.softmax(logits.masked_fill(~legal, float("-inf")), dim=1)
    # A row with no legal point is all -inf, whose softmax is NaN: give it zeros instead.
    return torch.where(legal.any(dim=1, keepdim=True), priors, torch.zeros_like(priors))


class EvaluatorOutOfMemoryError(RuntimeError):
    """The device ran out of memory even for a batch of one position."""


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is a device out-of-memory error (CUDA's own class, or the plain
    RuntimeError that MPS and older CUDA builds raise)."""
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(error, oom_type):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def _as_device(device) -> torch.device:
    # Accept a DeviceChoice from alphagomoku.device without importing it here.
    device = getattr(device, "device", device)
    return device if isinstance(device, torch.device) else torch.device(device)


class Evaluator:
    """Runs ``model`` on ``device`` for MCTS.

    ``__call__(planes, legal)``: ``planes`` float32 ``(B, num_planes, H, W)``, ``legal`` bool
    ``(B, H*W)``. Returns ``priors`` float32 ``(B, H*W)`` (the softmax of the logits over the legal
    points: they sum to one there and are exactly zero elsewhere; a row with no legal point gets
    all zeros rather than NaN) and ``values`` float32 ``(B,)`` in [-1, 1] for the side to move.

    ``amp``: None = mixed precision on CUDA only (bf16, or fp16 on older GPUs:
    :func:`alphagomoku.device.cuda_autocast_dtype`); True/False force it on or off (on CPU it
    means bf16 autocast). ``compile``: False, True
    (``torch.compile`` with the default backend) or a backend name.

    ``max_batch`` caps the positions sent to the device at once (None: the whole call). After an
    out-of-memory error it holds the halved size that worked, and later calls keep to it;
    ``oom_backoffs`` counts the halvings.

    Self-play workers swap weights in place with :meth:`load_state_dict`; the compiled function,
    if any, shares the parameters and keeps working.
    """

    def __init__(self, model: nn.Module, device=None, amp: bool | None = None,
                 compile: bool | str = False, max_batch: int | None = None):
        if device is None:
            param = next(model.parameters(), None)
            device = param.device if param is not None else "cpu"
        self.device = _as_device(device)
        self.config = getattr(model, "config", None)
        if self.config is None:
            raise TypeError("the evaluator's model needs a .config (a ModelConfig)")
        if max_batch is not None and (not isinstance(max_batch, int) or max_batch < 1):
            raise ValueError(f"max_batch must be a positive integer or None, got {max_batch!r}")
        self.max_batch = max_batch
        self.oom_backoffs = 0

        self.channels_last = self.device.type == "cuda"
        model = model.to(self.device).eval()
        if self.channels_last:
            model = model.to(memory_format=torch.channels_last)
        self.model = model

        self.amp_dtype = self._amp_dtype(amp)
        if compile:
            backend = compile if isinstance(compile, str) else "inductor"
            self._forward = torch.compile(model, backend=backend)
        else:
            self._forward = model

    def _amp_dtype(self, amp: bool | None) -> torch.dtype | None:
        kind = self.device.type
        if amp is None:
            amp = kind == "cuda"
        if not amp:
            return None
        if kind == "cuda":
            return cuda_autocast_dtype(self.device)
        if kind == "mps":
            return torch.float16
        return torch.bfloat16

    @property
    def amp(self) -> bool:
        return self.amp_dtype is not None

    def describe(self) -> str:
        precision = {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[self.amp_dtype]
        compiled = ", compiled" if self._forward is not self.model else ""
        return f"{self.config.label} on {self.device} ({precision}{compiled})"

    def load_state_dict(self, state_dict: dict) -> None:
        """Replace the weights in place (prefixes from torch.compile or DDP are removed)."""
        self.model.load_state_dict(strip_prefixes(state_dict))
        self.model.eval()

    # -- evaluation -----------------------------------------------------------------------------
    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes, legal = self._check(planes, legal)
        n = planes.shape[0]
        priors = np.zeros((n, self.config.area), dtype=np.float32)
        values = np.zeros(n, dtype=np.float32)
        start = 0
        while start < n:
            size = n - start if self.max_batch is None else min(self.max_batch, n - start)
            try:
                p, v = self._evaluate(planes[start:start + size], legal[start:start + size])
            except Exception as error:  # noqa: BLE001 - anything but OOM is re-raised below
                if not is_out_of_memory(error):
                    raise
                self._back_off(size, error)
                continue  # the same rows again, at the smaller size
            priors[start:start + size] = p
            values[start:start + size] = v
            start += size
        return priors, values

    def _back_off(self, size: int, error: BaseException) -> None:
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        if size <= 1:
            raise EvaluatorOutOfMemoryError(
                f"{self.device} ran out of memory evaluating a single position with the "
                f"{self.config.label} model: use a smaller preset, fewer workers per GPU, or "
                f"another device ({error})"
            ) from error
        self.max_batch = size // 2
        self.oom_backoffs += 1
        log.warning("out of memory on %s at batch %d: evaluating in batches of %d from now on",
                    self.device, size, self.max_batch)

    @torch.inference_mode()
    def _evaluate(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = torch.from_numpy(planes).to(self.device, non_blocking=True)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        mask = torch.from_numpy(legal).to(self.device, non_blocking=True)
        if self.amp_dtype is not None:
            with torch.autocast(self.device.type, dtype=self.amp_dtype):
                logits, value = self._forward(x)
        else:
            logits, value = self._forward(x)
        priors = masked_softmax(logits.float(), mask)
        return priors.cpu().numpy(), value.float().cpu().numpy()

    def _check(self, planes, legal) -> tuple[np.ndarray, np.ndarray]:
        return check_inputs(self.config, planes, legal)
