"""Which device runs the network: selection, per-worker GPU assignment, a memory plan, CPU threads.

``--device`` takes ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``. ``auto`` picks CUDA, then
MPS, then the CPU, and says why. A device that was asked for and is not there is an error
(:class:`DeviceError`), never a quiet fall-back to the CPU: a self-play run that silently trains
on the CPU wastes hours before anyone notices.

This module does not import torch at module level: a worker process calls
:func:`set_worker_gpu` first, and CUDA reads ``CUDA_VISIBLE_DEVICES`` only once, when it starts.
"""

from __future__ import annotations

import math
import os
import platform
import re
import sys
import warnings
from dataclasses import dataclass

from alphagomoku.checks import non_negative_int, positive_int

VALID_FORMS = "auto, cpu, cuda, cuda:N (N = 0, 1, ...), mps"
_REQUEST = re.compile(r"^(auto|cpu|mps|cuda)(?::(\d+))?$")

CUDA_CONTEXT_BYTES = 500 * 2**20  # what one process's CUDA context costs before any tensor
GiB = 2**30


class DeviceError(ValueError):
    """A device string that is malformed, or names a device this machine does not have."""


@dataclass(frozen=True)
class DeviceChoice:
    """The device picked, in words: ``kind`` is ``cuda``, ``mps`` or ``cpu``; ``name`` the
    hardware (``Tesla T4``); ``reason`` why it was picked."""

    device: "torch.device"  # noqa: F821 - torch is imported lazily
    kind: str
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.device} ({self.name}): {self.reason}"

    @property
    def short(self) -> str:
        """``CUDA: Tesla T4``, the line a worker prints when it starts."""
        return f"{self.kind.upper()}: {self.name}"


def parse_request(request: str) -> tuple[str, int | None]:
    """``"cuda:1"`` -> ``("cuda", 1)``; a malformed string raises DeviceError listing the forms."""
    if not isinstance(request, str):
        raise DeviceError(f"device must be a string ({VALID_FORMS}), got {request!r}")
    m = _REQUEST.match(request.strip().lower())
    if m is None or (m.group(2) is not None and m.group(1) != "cuda"):
        raise DeviceError(f"unknown device {request!r}: use one of {VALID_FORMS}")
    return m.group(1), None if m.group(2) is None else int(m.group(2))


# -- what this machine has --------------------------------------------------------------------
def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_count() -> int:
    """CPU cores this process may run on (the affinity mask, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def cuda_device_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def mps_available() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available_devices() -> list[str]:
    """Devices that can be requested here, e.g. ``["cuda:0", "cuda:1", "cpu"]``."""
    out = [f"cuda:{i}" for i in range(cuda_device_count())]
    if mps_available():
        out.append("mps")
    return out + ["cpu"]


def why_no_cuda() -> str:
    import torch

    if torch.version.cuda is None:
        return f"this torch build has no CUDA support (torch {torch.__version__})"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    hint = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
    return (f"torch {torch.__version__} was built with CUDA {torch.version.cuda} but sees no "
            f"GPU{hint}: is the NVIDIA driver loaded (does nvidia-smi list a GPU)?")


def why_no_mps() -> str:
    import torch

    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_built():
        return "this torch build has no MPS support (MPS needs macOS on Apple silicon)"
    return "torch was built with MPS but macOS reports no usable Metal device (macOS 12.3+ needed)"


# -- selection --------------------------------------------------------------------------------
def select_device(request: str = "auto") -> DeviceChoice:
    """The device for ``request``; DeviceError if it is malformed or not available here."""
    import torch

    kind, index = parse_request(request)
    if kind == "auto":
        if cuda_device_count() > 0:
            n = cuda_device_count()
            return _cuda_choice(0, f"auto: CUDA is available ({n} device{'s' * (n != 1)}), using the first")
        if mps_available():
            return DeviceChoice(torch.device("mps"), "mps", "Apple GPU (MPS)",
                                f"auto: no CUDA ({why_no_cuda()}), MPS is available")
        return DeviceChoice(torch.device("cpu"), "cpu", cpu_name(),
                            f"auto: no CUDA ({why_no_cuda()}), no MPS; using the CPU with "
                            f"{cpu_count()} cores")
    if kind == "cpu":
        return DeviceChoice(torch.device("cpu"), "cpu", cpu_name(), f"requested ({cpu_count()} cores)")
    if kind == "mps":
        if not mps_available():
            raise DeviceError(
                f"device 'mps' was requested but is not available: {why_no_mps()}. "
                f"Available here: {', '.join(available_devices())}"
            )
        return DeviceChoice(torch.device("mps"), "mps", "Apple GPU (MPS)", "requested")
    n = cuda_device_count()
    if n == 0:
        raise DeviceError(
            f"device {request!r} was requested but CUDA is not available: {why_no_cuda()}. "
            f"Available here: {', '.join(available_devices())}"
        )
    if index is not None and index >= n:
        raise DeviceError(
            f"device {request!r} was requested but only {n} CUDA device{'s' * (n != 1)} "
            f"{'are' if n != 1 else 'is'} visible (cuda:0..cuda:{n - 1}). "
            f"Available here: {', '.join(available_devices())}"
        )
    return _cuda_choice(index or 0, "requested")


def _cuda_choice(index: int, reason: str) -> DeviceChoice:
    import torch

    return DeviceChoice(torch.device("cuda", index), "cuda", torch.cuda.get_device_name(index), reason)


def cuda_autocast_dtype(device) -> "torch.dtype":  # noqa: F821
    """The half precision a CUDA device runs mixed precision in: bf16 where the GPU computes it
    natively (compute capability 8.0 and up), else fp16. ``torch.cuda.is_bf16_supported()`` is
    not the test: by default it says yes wherever a bf16 tensor can be made, the T4 and V100
    included, whose tensor cores run fp16 and not bf16. ROCm devices take bf16."""
    import torch

    if torch.version.hip:
        return torch.bfloat16
    major, _ = torch.cuda.get_device_capability(device)
    return torch.bfloat16 if major >= 8 else torch.float16


def training_memory_format(kind: str) -> "torch.memory_format":  # noqa: F821
    """The layout the trainer keeps its network's weights in on a device of ``kind``. On a CPU,
    channels-last: oneDNN's convolutions run on it without reordering every activation, and
    a gradient step of ``cpu-hour`` took 1.17 times less time, one of ``kata-all-rules`` 1.39
    (``benchmark.py train``). A convolution follows its weights' layout, so the batches need no
    change. Other devices keep the default layout: channels-last has not been timed there for
    training."""
    import torch

    return torch.channels_last if kind == "cpu" else torch.contiguous_format


def training_autocast_dtype(device: DeviceChoice, mode: str) -> "torch.dtype | None":  # noqa: F821
    """The trainer's autocast dtype on ``device`` for ``train_amp`` = ``mode`` (auto, on or
    off), or None for fp32. ``auto`` is mixed precision on CUDA only. On a CPU, ``on`` is bf16:
    with AMX (a Xeon from Sapphire Rapids on) a ``cpu-hour`` run's steps took 1.7 times less
    time, but a run trained so has not been shown to learn as well (docs/benchmarks.md, "The
    trainer on a CPU"). MPS trains in fp32 whatever the mode."""
    if mode == "off" or device.kind == "mps":
        return None
    if device.kind == "cuda":
        return cuda_autocast_dtype(device.device)
    import torch

    return torch.bfloat16 if mode == "on" else None


# -- worker processes -------------------------------------------------------------------------
def assign_gpu(worker_index: int, num_gpus: int) -> int | None:
    """The GPU (0-based, among the visible ones) for worker ``worker_index``: round-robin, so
    workers 0..5 on 2 GPUs get 0, 1, 0, 1, 0, 1. None when there is no GPU."""
    for name, v in (("worker_index", worker_index), ("num_gpus", num_gpus)):
        non_negative_int(name, v)
    return None if num_gpus == 0 else worker_index % num_gpus


def set_worker_gpu(worker_index: int, num_gpus: int, environ=None) -> str | None:
    """Give this worker process one GPU by setting ``CUDA_VISIBLE_DEVICES``: call it first thing
    in the worker, before anything imports torch. Inside the worker that GPU is then ``cuda:0``.

    Ids are taken from the parent's ``CUDA_VISIBLE_DEVICES`` when it has one, so a run limited to
    GPUs "2,3" keeps to them. Returns the value set, or None without GPUs (the variable is then
    left alone). Raises DeviceError when CUDA is already initialised in this process (the
    setting could no longer take effect) and warns when torch is merely imported (a call such as
    ``torch.cuda.is_available()`` may already have read the variable).
    """
    environ = os.environ if environ is None else environ
    gpu = assign_gpu(worker_index, num_gpus)
    if gpu is None:
        return None
    torch = sys.modules.get("torch")
    if torch is not None:
        if torch.cuda.is_initialized():
            raise DeviceError(
                f"worker {worker_index}: CUDA is already initialised in this process, so setting "
                "CUDA_VISIBLE_DEVICES has no effect; call set_worker_gpu() before any torch "
                "import in the worker (keep torch imports inside functions of the worker module)"
            )
        warnings.warn(
            f"worker {worker_index}: torch was imported before set_worker_gpu(); if anything "
            "already asked torch about CUDA, this worker may see every GPU",
            RuntimeWarning, stacklevel=2,
        )
    parent = environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    ids = [s.strip() for s in parent.split(",") if s.strip()] if parent else []
    if ids and len(ids) < num_gpus:
        raise DeviceError(
            f"num_gpus={num_gpus} but CUDA_VISIBLE_DEVICES={parent!r} lists only {len(ids)}"
        )
    value = ids[gpu] if ids else str(gpu)
    environ["CUDA_VISIBLE_DEVICES"] = value
    return value


def cpu_threads_per_worker(num_workers: int, cores: int | None = None) -> int:
    """Torch threads for each of ``num_workers`` CPU workers sharing ``cores``: the cores split
    evenly, at least one. More threads than cores makes every worker slower."""
    positive_int("num_workers", num_workers)
    cores = cpu_count() if cores is None else cores
    return max(1, cores // num_workers)


def limit_cpu_threads(threads: int) -> None:
    """Make this process use ``threads`` CPU threads for torch (and the BLAS/OpenMP libraries
    under it). Self-play and arena workers call it with 1: the workers are the parallelism."""
    positive_int("threads", threads)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)  # read by the libraries when they load, if not yet loaded
    import torch

    torch.set_num_threads(threads)
    flush_denormals()


def flush_denormals() -> None:
    """Make this process's CPU arithmetic in torch treat denormal floats as zero. Weights that
    weight decay shrinks towards zero (a dead channel's) pass through the denormal range, where
    each multiplication costs the CPU about a hundred times a normal one: a network holding a
    few thousand of them made a run's self-play ten times slower within minutes. Zero changes
    no answer that matters; GPUs are not affected."""
    import torch

    torch.set_flush_denormal(True)


def describe_cpu_threads() -> str:
    import torch

    return (f"{cpu_count()} cores available to this process; torch uses {torch.get_num_threads()} "
            f"intra-op thread(s)")


# -- memory plan ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryPlan:
    """How many self-play workers fit on one GPU. ``workers_per_gpu`` 0 means not even one:
    ``explanation`` then says what to change."""

    workers_per_gpu: int
    per_worker_bytes: int
    usable_bytes: int
    explanation: str

    @property
    def fits(self) -> bool:
        return self.workers_per_gpu > 0

    def require(self) -> "MemoryPlan":
        """This plan, or DeviceError when not one worker fits."""
        if not self.fits:
            raise DeviceError(self.explanation)
        return self


def worker_bytes(model_config, batch_size: int, cuda_overhead: int = CUDA_CONTEXT_BYTES,
                 amp: bool = True) -> int:
    """Device memory one inference worker needs: CUDA context + weights + activations."""
    act_bytes = 2 if amp else 4
    return (cuda_overhead + model_config.weight_bytes()
            + model_config.activation_bytes(batch_size, bytes_per_value=act_bytes))


def plan_workers(total_memory_bytes: int, model_config, batch_size: int,
                 cuda_overhead: int = CUDA_CONTEXT_BYTES, headroom: float = 0.1,
                 amp: bool = True, max_workers: int | None = None) -> MemoryPlan:
    """Workers per GPU of ``total_memory_bytes`` for ``model_config`` evaluating batches of
    ``batch_size``. ``headroom`` is the fraction kept free (the trainer, fragmentation);
    ``max_workers`` caps the answer (e.g. at the CPU cores that drive the workers)."""
    positive_int("total_memory_bytes", total_memory_bytes)
    positive_int("batch_size", batch_size)
    if not 0 <= headroom < 1:
        raise ValueError(f"headroom must be a fraction in [0, 1), got {headroom!r}")
    usable = int(total_memory_bytes * (1 - headroom))
    per = worker_bytes(model_config, batch_size, cuda_overhead, amp)
    fit = usable // per
    sizes = (f"{_gib(total_memory_bytes)} GPU, {_gib(usable)} usable after {headroom:.0%} "
             f"headroom; one worker needs {_gib(per)} (CUDA context {_gib(cuda_overhead)}, "
             f"weights {_gib(model_config.weight_bytes())}, activations at batch {batch_size} "
             f"{_gib(per - cuda_overhead - model_config.weight_bytes())}) for {model_config.label}")
    if fit == 0:
        best = largest_batch(usable, model_config, cuda_overhead, amp)
        advice = (f"use a batch of at most {best}" if best else
                  "even batch 1 does not fit: use a smaller preset")
        return MemoryPlan(0, per, usable, f"not even one worker fits: {sizes}; {advice}")
    workers = fit if max_workers is None else max(1, min(fit, max_workers))
    capped = f", capped at {max_workers}" if max_workers is not None and fit > max_workers else ""
    return MemoryPlan(workers, per, usable, f"{fit} worker(s) fit{capped}: {sizes}")


def largest_batch(usable_bytes: int, model_config, cuda_overhead: int = CUDA_CONTEXT_BYTES,
                  amp: bool = True) -> int:
    """The largest power-of-two batch for which one worker fits in ``usable_bytes`` (0: none)."""
    batch = 0
    while worker_bytes(model_config, max(1, 2 * batch), cuda_overhead, amp) <= usable_bytes:
        batch = max(1, 2 * batch)
        if batch >= 2**20:
            break
    return batch


def _gib(n: int) -> str:
    return f"{n / GiB:.2f} GiB" if n >= GiB / 10 else f"{math.ceil(n / 2**20)} MiB"
