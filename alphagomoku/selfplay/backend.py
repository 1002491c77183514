"""The self-play interface the trainer uses, and the choice between its two backends.

* ``pool`` (default): :class:`~alphagomoku.selfplay.pool.SelfPlayPool`, spawned processes on
  this machine.
* ``ray``: :class:`~alphagomoku.selfplay.ray_backend.RaySelfPlay`, Ray actors on this machine or
  on a cluster (docs/scaling.md); Ray is an optional extra.

Both play a list of :class:`~alphagomoku.selfplay.worker.SelfPlayTask` and call ``on_result``
with each :class:`~alphagomoku.selfplay.worker.TaskResult` in completion order; both replay the
games of a failed worker or actor, report each failure by kind, and stop with
:class:`~alphagomoku.selfplay.pool.SelfPlayError` after too many. The trainer only picks one.
"""

from __future__ import annotations

from typing import Callable, Iterable, Protocol

from alphagomoku.selfplay.pool import SelfPlayPool
from alphagomoku.selfplay.worker import SelfPlayTask, TaskResult, WorkerSpec

SELFPLAY_BACKENDS = ("pool", "ray")


class SelfPlayBackend(Protocol):
    failures: list[str]

    def play(self, tasks: Iterable[SelfPlayTask], on_result: Callable[[TaskResult], None]) -> None:
        """Play every task; ``on_result`` is called once per task, as results arrive."""

    def close(self) -> None:
        """Stop every worker or actor now."""

    def __enter__(self) -> "SelfPlayBackend": ...

    def __exit__(self, *exc) -> None: ...


def open_backend(kind: str, spec: WorkerSpec, num_workers: int, task_timeout: float,
                 max_failures: int, log: Callable[[str], None] = print, ray_options=None) -> SelfPlayBackend:
    """``kind`` is ``pool`` or ``ray``; ``ray_options`` (a RayOptions) only for Ray."""
    if kind == "pool":
        return SelfPlayPool(spec, num_workers, task_timeout, max_failures, log=log)
    if kind == "ray":
        from alphagomoku.selfplay.ray_backend import RayOptions, RaySelfPlay

        return RaySelfPlay(spec, max(1, num_workers), task_timeout, max_failures, log=log,
                           options=ray_options or RayOptions())
    raise ValueError(f"unknown self-play backend {kind!r}; choose one of {', '.join(SELFPLAY_BACKENDS)}")
