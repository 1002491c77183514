"""The self-play pool: spawn-context worker processes, streamed results, failures detected.

``multiprocessing.Pool`` alone loses a task whose worker dies (it starts a replacement worker,
but the task's result never comes, and ``imap_unordered`` waits forever), and it cannot tell a
slow task from a hung one. So the pool here watches its workers: each registers its pid at start,
the parent polls for results with a timeout, and

* a task that raised comes back as a TaskFailure with the worker's traceback and is played again;
* a worker that died (killed, crashed) is noticed by its pid leaving ``active_children()``;
* no heartbeat (workers send one per search step, at most twice a second) and no result for
  ``task_timeout`` seconds means a hang.

For a death or a hang the pool is torn down and rebuilt and the tasks without a result are
played again. Past ``max_failures`` failures in one call the run stops with SelfPlayError, which
quotes what went wrong. Results are checked (a result with no games is an error, never data).
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import threading
import time
from typing import Callable, Iterable

from alphagomoku.selfplay.training_game import TrainingGameError
from alphagomoku.selfplay.worker import (
    SelfPlayTask,
    TaskFailure,
    TaskResult,
    WorkerSpec,
    init_worker,
    task_game,
    play_task,
    setup_worker,
)


class SelfPlayError(RuntimeError):
    """Self-play cannot go on; the message says which worker failed how."""


class _PoolBroken(Exception):
    pass


def check_result(result, task: SelfPlayTask, game) -> None:
    """Raise TrainingGameError unless ``result`` holds the task's games, each replaying legally:
    a result with missing or broken games is a failure, never data."""
    records = getattr(result, "records", None)
    if not isinstance(result, TaskResult) or records is None or len(records) != task.num_games:
        raise TrainingGameError(f"{len(records or [])} games returned, {task.num_games} asked for")
    for record in records:
        record.validate(game)


class FailureBudget:
    """Counting a backend's failures: each is logged with its number, and one past
    ``max_failures`` closes the backend and stops self-play with SelfPlayError."""

    failures: list[str]
    max_failures: int

    def _fail(self, message: str) -> None:
        self.failures.append(message)
        self.log(f"self-play failure {len(self.failures)}/{self.max_failures + 1}: {message}")
        if len(self.failures) > self.max_failures:
            self.close()
            raise SelfPlayError(
                f"self-play failed {len(self.failures)} time{'s' if len(self.failures) > 1 else ''}; "
                f"stopping. Last failure:\n{message}"
            )


def _terminate(pool, seconds: float, log: Callable[[str], None]) -> None:
    """``pool.terminate()``, but never an endless wait.

    An idle worker holds the task queue's read lock while it waits for work, and terminate()
    takes that lock before it kills anyone. A worker killed while idle (the OOM killer between
    epochs, say) never gives the lock back, so terminate() would wait forever. It runs in a
    thread given ``seconds``; past that the workers are killed here and the stuck thread, a
    daemon blocked on a lock nobody will release, is left behind."""
    stopper = threading.Thread(target=pool.terminate, name="selfplay-pool-terminate", daemon=True)
    stopper.start()
    stopper.join(seconds)
    if not stopper.is_alive():
        pool.join()
        return
    # Pool keeps its processes in ``_pool``; by now its worker handler has stopped replacing them.
    workers = [p for p in getattr(pool, "_pool", ()) if p.exitcode is None]
    for process in workers:
        process.kill()
    for process in workers:
        process.join(5)
    log(f"the self-play pool did not stop within {seconds:g} s (as when a worker dies holding its "
        f"task queue's lock); its {len(workers)} remaining worker process(es) were killed")


class SelfPlayPool(FailureBudget):
    """Plays self-play tasks on ``num_workers`` spawned processes (0: in this process)."""

    def __init__(
        self,
        spec: WorkerSpec,
        num_workers: int,
        task_timeout: float,
        max_failures: int = 3,
        log: Callable[[str], None] = print,
        poll_seconds: float = 0.5,
        task_fn: Callable = play_task,
        startup_timeout: float = 300.0,
    ):
        """``task_fn`` runs each task in a worker; it must be a module-level function (spawn
        finds it by name). Tests pass wrappers of :func:`play_task` that inject failures."""
        if num_workers < 0:
            raise ValueError("num_workers must be 0 or more")
        if num_workers > 0:
            # Spawn sends the task function and the spec to every worker by pickling; a lambda,
            # a nested function or a live model fails there, so fail here, at once and clearly.
            for what, obj in (("task function", task_fn), ("worker spec", spec)):
                try:
                    pickle.dumps(obj)
                except Exception as e:  # noqa: BLE001 - pickling raises many types
                    raise TypeError(
                        f"the {what} cannot be sent to spawned workers ({type(e).__name__}: {e}); "
                        "use module-level functions and plain data"
                    ) from None
        self.spec = spec
        self.num_workers = num_workers
        self.task_timeout = task_timeout
        self.max_failures = max_failures
        self.log = log
        self.poll_seconds = poll_seconds
        self.task_fn = task_fn
        self.startup_timeout = startup_timeout
        self.ctx = mp.get_context("spawn")
        # How long close() lets multiprocessing's own shutdown take before killing the workers.
        self.close_seconds = 10.0
        self._pool = None
        self._registry = None
        self._pids: dict[int, int] = {}  # pid -> worker index
        self._local_state = None
        self.worker_lines: list[str] = []
        self.failures: list[str] = []

    # -- lifecycle ----------------------------------------------------------------------------------
    def __enter__(self) -> "SelfPlayPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        if self.num_workers == 0:
            if self._local_state is None:
                self._local_state = setup_worker(0, self.spec)
                self.worker_lines.append(self._local_state.device_line)
            return
        counter = self.ctx.Value("i", 0)
        # SimpleQueue: put() writes before returning, so a worker killed right after registering
        # is still known (a Queue's background feeder thread could die with it, message unsent).
        self._registry = self.ctx.SimpleQueue()
        self._pids = {}
        self._pool = self.ctx.Pool(
            processes=self.num_workers, initializer=init_worker,
            initargs=(counter, self._registry, self.spec),
        )

    def close(self) -> None:
        """Stop every worker now; nothing is left running."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            _terminate(pool, self.close_seconds, self.log)
        if self._registry is not None:
            self._registry.close()
            self._registry = None

    # -- playing ------------------------------------------------------------------------------------
    def play(self, tasks: Iterable[SelfPlayTask], on_result: Callable[[TaskResult], None]) -> None:
        """Play every task; call ``on_result`` as each result arrives (in completion order)."""
        pending = {t.task_id: t for t in tasks}
        self.failures = []
        while pending:
            if self.num_workers == 0:
                self._play_local(pending, on_result)
                continue
            if self._pool is None:
                self._start()
            try:
                self._play_round(pending, on_result)
            except _PoolBroken as e:
                self._fail(str(e))
                self.close()

    def _play_local(self, pending: dict, on_result) -> None:
        from alphagomoku.selfplay import worker

        if self._local_state is None:
            self._start()
        worker._STATE = self._local_state
        for task_id in list(pending):
            self._accept(self.task_fn(pending[task_id]), pending, on_result)

    def _play_round(self, pending: dict, on_result) -> None:
        it = self._pool.imap_unordered(self.task_fn, list(pending.values()))
        expected = len(pending)
        received = 0
        last_progress = time.monotonic()
        while received < expected:
            try:
                result = it.next(timeout=self.poll_seconds)
            except mp.TimeoutError:
                if self._check_workers():
                    last_progress = time.monotonic()
                # Until a worker of this pool has started (spawn, imports, device set-up), the
                # longer start-up allowance applies.
                limit = self.task_timeout if self._pids else max(self.task_timeout, self.startup_timeout)
                if time.monotonic() - last_progress > limit:
                    raise _PoolBroken(
                        f"no progress from any self-play worker for {limit:.0f} s while "
                        f"{len(pending)} task(s) wait: a worker hangs (raise --worker-timeout if a "
                        "single search step can legitimately take this long)"
                    ) from None
                continue
            except Exception as e:  # noqa: BLE001 - e.g. a result that could not be pickled
                # The pool re-raises a task's exception here; its cause holds the worker's traceback.
                received += 1
                last_progress = time.monotonic()
                remote = f"\n{e.__cause__}" if e.__cause__ is not None else ""
                self._fail(f"a self-play task failed in its worker: {type(e).__name__}: {e}{remote}")
                continue
            received += 1
            last_progress = time.monotonic()
            self._accept(result, pending, on_result)
            self._check_workers()

    def _accept(self, result, pending: dict, on_result) -> None:
        if isinstance(result, TaskFailure) and result.fatal:
            self.close()
            raise SelfPlayError(f"{result.error}\n{result.traceback}")
        if isinstance(result, TaskFailure):
            self._fail(
                f"worker {result.worker} (pid {result.pid}) raised in task {result.task_id}: "
                f"{result.error}\n{result.traceback}"
            )
            return
        if not isinstance(result, TaskResult):
            self._fail(f"a worker returned {type(result).__name__} instead of a result: {result!r:.200}")
            return
        task = pending.get(result.task_id)
        if task is None:
            return  # a duplicate from before a rebuild
        try:
            check_result(result, task, task_game(task, self.spec))
        except TrainingGameError as e:
            self._fail(f"worker {result.worker} returned bad data for task {task.task_id}: {e}")
            return
        del pending[result.task_id]
        on_result(result)

    def _check_workers(self) -> bool:
        """Read the workers' registrations and heartbeats; a registered worker that is gone has
        died. Returns whether any worker showed progress (started or sent a heartbeat)."""
        progress = False
        while not self._registry.empty():
            kind, index, pid, line, init_error = self._registry.get()
            progress = True
            if kind == "beat":
                continue
            if index >= self.num_workers:
                # multiprocessing.Pool starts a replacement only when a worker has exited.
                self.worker_lines.append(line)
                raise _PoolBroken(
                    f"a worker died (killed or crashed) and the pool replaced it with worker {index}; "
                    "the pool is rebuilt and the missing games played again"
                )
            self._pids[pid] = index
            self.worker_lines.append(line)
            if init_error:
                self.close()
                raise SelfPlayError(f"{line}\n{init_error}")
        alive = {p.pid for p in mp.active_children()}
        for pid, index in list(self._pids.items()):
            if pid not in alive:
                del self._pids[pid]
                raise _PoolBroken(
                    f"worker {index} (pid {pid}) died (killed or crashed); "
                    "the pool is rebuilt and its games played again"
                )
        return progress
