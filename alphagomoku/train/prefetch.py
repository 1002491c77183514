"""Gradient batches built on threads while the step before them runs.

On a GPU a step of a small network takes a few milliseconds, while making its batch (the planes
of 1,024 stored boards, their VCF planes from the solver, a symmetry each) takes several times
that on one core; built in the loop, the device waits for the CPU at every step. The kernels
that make the planes release the GIL, so a few threads build the next batches side by side.

What a batch holds is decided by ``plan(step)`` on the trainer's thread, in step order: it draws
the batch's buffer, positions and symmetries from the run's random stream, so these, and the
random stream after the epoch, do not depend on the number of threads. Only ``build``, which
draws nothing, runs on the threads. Step ``k`` goes to thread ``k mod threads``: each thread's
VCF solver keeps what it has proved from one position to the next (``game/solver_state.py``),
which can decide a search that runs out of its budget, so a fixed order of work on each thread
keeps a run's planes the same from one run to the next. Between thread counts the VCF planes of
a position can differ where the budget runs out, as the search's own planes can.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable


GPU_THREADS = 4


def batch_threads(requested: int, kind: str) -> int:
    """Threads building batches ahead: ``requested``, or for -1 (auto) GPU_THREADS on a GPU and
    none on a CPU, where the step itself keeps every core busy and a batch costs a few per cent
    of it."""
    if requested >= 0:
        return requested
    return 0 if kind == "cpu" else GPU_THREADS


class BatchPrefetch:
    """``take(step)`` gives ``build(plan(step))`` for steps 0, 1, 2 ... ``steps - 1`` in order.
    With ``threads`` > 0 up to ``2 * threads`` batches are planned and building ahead of the step
    taken, step ``k`` on thread ``k mod threads``; with 0 each is built when taken, on the
    calling thread. An error in ``build`` is raised by the ``take`` of its step."""

    def __init__(self, plan: Callable[[int], Any], build: Callable[[Any], Any], steps: int,
                 threads: int):
        if threads < 0:
            raise ValueError(f"threads must be 0 or more, got {threads}")
        self.plan, self.build, self.steps = plan, build, steps
        self.ahead = 2 * threads
        # One single-thread pool per thread, so that each builds its own steps in order.
        self.pools = [ThreadPoolExecutor(1, thread_name_prefix=f"batch-{i}") for i in range(threads)]
        self.pending: deque[Future] = deque()
        self.planned = 0
        self.taken = 0

    def take(self, step: int):
        if step != self.taken:
            raise ValueError(f"batches are taken in order: expected step {self.taken}, got {step}")
        if step >= self.steps:
            raise ValueError(f"step {step} is past the epoch's {self.steps} steps")
        self.taken += 1
        if not self.pools:
            self.planned += 1
            return self.build(self.plan(step))
        # Planned here, not on the threads, so that the draws keep their order.
        while self.planned < min(self.steps, step + 1 + self.ahead):
            pool = self.pools[self.planned % len(self.pools)]
            self.pending.append(pool.submit(self.build, self.plan(self.planned)))
            self.planned += 1
        return self.pending.popleft().result()

    def close(self) -> None:
        """Drops the batches not taken and waits for those being built (a few milliseconds)."""
        for future in self.pending:
            future.cancel()
        self.pending.clear()
        for pool in self.pools:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "BatchPrefetch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
