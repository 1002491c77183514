"""A stand-in accelerator, for measuring self-play's overlap on a machine without a GPU.

**A measuring tool, never a training device**: it answers with fixed pseudo-random outputs, not
a network's. ``scripts/benchmark.py selfplay --simulated-device LAUNCH_MS,PER_POSITION_US``
uses it; a training config that names it is refused (:func:`refuse_in_training`).

It behaves like a launch-bound device with one queue: a batch of ``n`` positions takes
``launch_ms + n * per_position_us`` of device time, batches run one after the other in the
order they were submitted, and :meth:`SimulatedDevice.submit` returns at once. Waiting for a
result sleeps until the device would have finished that batch, so the device holds no core: the
worker's CPU is free for the other games meanwhile, as with a real GPU. The device's timeline
is kept as numbers (when it will next be free), not by a thread that sleeps, which would add
its own wake-up delays to every batch; waiting is the same ``time.sleep`` either way.

The outputs depend on each row alone, never on the rest of the batch, and are exact: a
position gets the same answer in any batch, so searches that batch differently play the same
games (the overlap tests rely on it). Priors: fixed positive weights per point on the legal
points (the search renormalises them). Value: a fixed table looked up by an integer feature of
the stones, in [-0.9, 0.9].
"""

from __future__ import annotations

import time

import numpy as np

#: The flag's form, for messages.
FLAG = "--simulated-device LAUNCH_MS,PER_POSITION_US"


def parse_simulated_device(text: str) -> tuple[float, float]:
    """``"1,1.5"`` -> ``(1.0, 1.5)``: milliseconds a call, microseconds a position."""
    parts = [s.strip() for s in str(text).split(",")]
    try:
        launch, per = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"expected {FLAG.split()[1]}, two numbers like 1,1.5, got {text!r}") \
            from None
    if not (launch >= 0 and per >= 0) or not np.isfinite(launch + per):
        raise ValueError(f"the simulated device's times must be finite and non-negative, got "
                         f"{text!r}")
    return launch, per


def refuse_in_training(data: dict) -> None:
    """ValueError when a training config asks for the stand-in device."""
    for key in data:
        if "simulated" in str(key):
            raise ValueError(
                f"{key}: the simulated device is a measuring tool for scripts/benchmark.py "
                f"selfplay ({FLAG}); it answers with made-up outputs and never trains a network")


class _Pending:
    __slots__ = ("done_at", "priors", "values")

    def __init__(self, done_at: float, priors: np.ndarray, values: np.ndarray):
        self.done_at = done_at
        self.priors = priors
        self.values = values

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        wait = self.done_at - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        return self.priors, self.values


class SimulatedDevice:
    """A launch-bound stand-in device (see the module docstring). ``config`` is the network
    config whose inputs it accepts (board size, VCF planes), so searches check it as they
    check a real network."""

    overlaps = True
    measuring_only = True

    def __init__(self, config, launch_ms: float, per_position_us: float, seed: int = 0):
        self.config = config
        self.launch = float(launch_ms) / 1e3
        self.per_position = float(per_position_us) / 1e6
        area = config.area
        rng = np.random.default_rng([seed, 1729])
        # Priors: weights in [0.5, 1.5), exact when multiplied by a 0/1 mask.
        self._weights = (0.5 + rng.random(area)).astype(np.float32)
        # Value: small integer weights on both stone planes; float32 sums of them stay exact
        # integers (far below 2**24), whatever order the sum takes.
        self._feature = rng.integers(-8, 9, size=2 * area).astype(np.float32)
        self._table = (0.9 * np.tanh(rng.normal(0.0, 1.0, 1024))).astype(np.float32)
        self._free_at = 0.0
        self.calls = 0
        self.positions = 0
        self.busy_seconds = 0.0

    def describe(self) -> str:
        return (f"simulated device ({1e3 * self.launch:g} ms a call, "
                f"{1e6 * self.per_position:g} us a position; a measuring tool)")

    def answer(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The outputs, computed now (no waiting)."""
        n = len(planes)
        legal = np.asarray(legal).reshape(n, -1)
        priors = legal * self._weights
        stones = np.asarray(planes)[:, :2].reshape(n, -1)
        feature = (stones @ self._feature).astype(np.int64)
        values = self._table[feature % len(self._table)]
        return priors.astype(np.float32, copy=False), values

    def submit(self, planes: np.ndarray, legal: np.ndarray) -> _Pending:
        priors, values = self.answer(planes, legal)
        n = len(planes)
        took = self.launch + n * self.per_position
        start = max(time.perf_counter(), self._free_at)
        self._free_at = start + took
        self.calls += 1
        self.positions += n
        self.busy_seconds += took
        return _Pending(self._free_at, priors, values)

    def __call__(self, planes: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.submit(planes, legal).result()

    def rate_at(self, batch: float) -> float:
        """Positions a second this device evaluates at a mean batch of ``batch``."""
        return batch / (self.launch + batch * self.per_position)
