"""Evaluator: the batched network call MCTS makes, numpy in and numpy out.

``evaluator(planes, legal) -> (priors, values)``: one device transfer each way per batch, the
softmax over legal points only, mixed precision and channels-last on CUDA, and an out-of-memory
back-off that halves the batch instead of losing it.

On CUDA, ``submit(planes, legal) -> handle`` starts a batch without waiting for it
(:mod:`alphagomoku.nn.inflight`): the inputs go into pinned buffers, the copies and the forward
pass are queued, and ``handle.result()`` waits on the batch's event. The forward pass runs as a
CUDA graph at fixed batch sizes, padded to the next one (:mod:`alphagomoku.nn.graphs`), or
eagerly where capture fails. Elsewhere ``submit`` answers at once.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
from torch import nn

from alphagomoku.device import cuda_autocast_dtype
from alphagomoku.nn.graphs import BATCH_SIZES, StaticBatches, padded_size
from alphagomoku.nn.inflight import Ready
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
    if any, shares the parameters and keeps working, and so do the CUDA graphs.

    ``graphs``: None = CUDA graphs on CUDA (not with ``compile``), True/False force them on or
    off (on a device without graphs, True is an error). ``batch_sizes``: the fixed sizes batches
    are padded to (default :data:`alphagomoku.nn.graphs.BATCH_SIZES` with graphs, none without;
    given on a CPU, the padding runs eagerly, which is how the tests check it).
    """

    def __init__(self, model: nn.Module, device=None, amp: bool | None = None,
                 compile: bool | str = False, max_batch: int | None = None,
                 graphs: bool | None = None, batch_sizes=None):
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

        if self.device.type == "cpu":
            from alphagomoku.device import flush_denormals

            flush_denormals()
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

        if graphs and self.device.type != "cuda":
            raise ValueError(f"CUDA graphs need a CUDA device, not {self.device}")
        self.graphs = (self.device.type == "cuda" and not compile) if graphs is None else graphs
        if batch_sizes is None and self.graphs:
            batch_sizes = BATCH_SIZES
        self.batch_sizes = tuple(sorted(set(batch_sizes))) if batch_sizes else ()
        self._static: StaticBatches | None = None  # made at the first batch
        self._static_note = ""
        self._slots: list = []  # free pinned buffers for submit (CUDA)

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
        graphs = ""
        if self.graphs:
            graphs = f", {self._static_note}" if self._static_note else ", CUDA graphs"
        return f"{self.config.label} on {self.device} ({precision}{compiled}{graphs})"

    def disable_graphs(self) -> None:
        """Run eagerly from now on, unpadded (``--graphs off``: eager calls, for comparison)."""
        self.graphs = False
        self.batch_sizes = ()
        self._static = None
        self._static_note = ""

    @property
    def overlaps(self) -> bool:
        """Whether :meth:`submit` returns before the batch is done (on CUDA)."""
        return self.device.type == "cuda"

    def load_state_dict(self, state_dict: dict) -> None:
        """Replace the weights in place (prefixes from torch.compile or DDP are removed)."""
        self.model.load_state_dict(strip_prefixes(state_dict))
        self.model.eval()

    # -- evaluation -----------------------------------------------------------------------------
    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes, legal = self._check(planes, legal)
        n = planes.shape[0]
        priors = np.zeros(legal.shape, dtype=np.float32)
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
        mask = torch.from_numpy(legal).to(self.device, non_blocking=True)
        priors, values = self._run(x, mask)
        return priors.cpu().numpy(), values.cpu().numpy()

    def _eager(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The forward pass and the masked softmax on device tensors, in float32 out."""
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.amp_dtype is not None:
            # No cast-weight cache with graphs: a captured graph must cast the weights itself on
            # every replay, or it would keep the half-precision copies of the weights it was
            # captured with after load_state_dict (PyTorch's CUDA graphs notes ask for this).
            with torch.autocast(self.device.type, dtype=self.amp_dtype,
                                cache_enabled=not self.graphs):
                logits, value = self._forward(x)
        else:
            logits, value = self._forward(x)
        return masked_softmax(logits.float(), mask), value.float().reshape(-1)

    def _run(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`_eager`, or at a padded fixed size (a CUDA graph's replay) when set up."""
        if self.batch_sizes and self._static is None:
            self._static = self._make_static()
        if self._static is not None:
            out = self._static(x, mask)
            if out is not None:
                return out
        return self._eager(x, mask)

    def _make_static(self) -> StaticBatches | None:
        cfg = self.config
        shape = (cfg.num_planes, cfg.height, cfg.width)
        if not self.graphs:
            return StaticBatches(self._eager, self.batch_sizes, shape, cfg.area, self.device,
                                 capture=False, channels_last=self.channels_last)
        try:
            static = StaticBatches(self._eager, self.batch_sizes, shape, cfg.area, self.device,
                                   capture=True, channels_last=self.channels_last)
        except Exception as e:  # noqa: BLE001 - any capture failure: run eagerly
            reason = f"{type(e).__name__}: {e}".splitlines()[0]
            self._static_note = f"eager (CUDA graph capture failed: {reason})"
            log.warning("%s: CUDA graph capture failed, running eagerly: %s", self.device, reason)
            self.batch_sizes = ()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            return None
        self._static_note = (f"CUDA graphs at batch {self.batch_sizes[0]}-"
                             f"{self.batch_sizes[-1]}")
        return static

    # -- batches in flight (CUDA) -----------------------------------------------------------------
    def submit(self, planes: np.ndarray, legal: np.ndarray):
        """Start a batch; ``handle.result()`` gives ``(priors, values)`` as a call would. On
        CUDA the inputs are copied into pinned buffers at once (the caller's arrays are free
        again when this returns) and the copies and the forward pass are queued; elsewhere, or
        for a batch above ``max_batch`` (the out-of-memory back-off), the answer is computed
        now."""
        planes, legal = self._check(planes, legal)
        n = planes.shape[0]
        if self.device.type != "cuda" or n == 0 or (
                self.max_batch is not None and n > self.max_batch):
            return Ready(*self(planes, legal))
        slot = self._take_slot(n, planes.shape[1:])
        try:
            with torch.inference_mode():
                slot.planes[:n] = planes
                slot.legal[:n] = legal
                x = slot.planes_t[:n].to(self.device, non_blocking=True)
                mask = slot.legal_t[:n].to(self.device, non_blocking=True)
                priors, values = self._run(x, mask)
                slot.priors_t[:n].copy_(priors, non_blocking=True)
                slot.values_t[:n].copy_(values, non_blocking=True)
                event = torch.cuda.Event()
                event.record()
        except Exception as error:  # noqa: BLE001 - out of memory: the call's back-off
            self._slots.append(slot)
            if not is_out_of_memory(error):
                raise
            return Ready(*self(planes, legal))
        return _CudaPending(self, slot, n, event)

    def _take_slot(self, n: int, shape: tuple) -> "_PinnedSlot":
        """Free pinned buffers for ``n`` rows of planes of ``shape`` (a network that plays
        every board may see several)."""
        shape = tuple(shape)
        for i, slot in enumerate(self._slots):
            if slot.rows >= n and slot.shape == shape:
                return self._slots.pop(i)
        rows = padded_size(n, self.batch_sizes) or n  # the size the batch is padded to
        return _PinnedSlot(rows, shape, shape[1] * shape[2])

    def _check(self, planes, legal) -> tuple[np.ndarray, np.ndarray]:
        return check_inputs(self.config, planes, legal)


class _PinnedSlot:
    """Pinned host buffers for one batch in flight: its inputs and its answers."""

    def __init__(self, rows: int, shape: tuple, area: int):
        self.rows = rows
        self.shape = tuple(shape)
        self.planes_t = torch.empty((rows, *shape), dtype=torch.float32, pin_memory=True)
        self.legal_t = torch.empty((rows, area), dtype=torch.bool, pin_memory=True)
        self.priors_t = torch.empty((rows, area), dtype=torch.float32, pin_memory=True)
        self.values_t = torch.empty(rows, dtype=torch.float32, pin_memory=True)
        self.planes = self.planes_t.numpy()
        self.legal = self.legal_t.numpy()
        self.priors = self.priors_t.numpy()
        self.values = self.values_t.numpy()


class _CudaPending:
    """A batch queued on the GPU: ``result()`` waits on its event and copies the answer out of
    the pinned buffers, which then serve the next batch."""

    def __init__(self, evaluator: Evaluator, slot: _PinnedSlot, n: int, event):
        self.evaluator, self.slot, self.n, self.event = evaluator, slot, n, event
        self.answer = None

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        if self.answer is None:
            self.event.synchronize()
            n = self.n
            self.answer = self.slot.priors[:n].copy(), self.slot.values[:n].copy()
            self.evaluator._slots.append(self.slot)
        return self.answer
