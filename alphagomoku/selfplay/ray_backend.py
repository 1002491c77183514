"""Self-play on Ray actors: the second backend behind the pool's interface (``play(tasks, on_result)``).

Ray is an optional extra (``pip install -e '.[ray]'``): nothing here imports it before a
:class:`RaySelfPlay` is made, and without it that fails with one line that gives the command.

How it works (docs/scaling.md has the cluster commands):

* each actor is one process that plays many games at once with
  :func:`~alphagomoku.selfplay.game_loop.play_games`, exactly as a pool worker does; Ray reserves
  ``num_cpus``/``num_gpus`` for it, and it uses CUDA only when Ray assigned it a GPU
  (``ray.get_gpu_ids()``): a CPU actor hides every GPU from torch, since Ray leaves
  ``CUDA_VISIBLE_DEVICES`` untouched for actors without GPUs;
* the weights of each version are read once and ``ray.put`` once, as CPU tensors; every task of
  that version gets the same reference, and every result comes back tagged with its version.
  A result more than ``max_lag`` versions behind the newest is dropped, counted and played again;
* one task in flight per actor; ``ray.wait`` hands results over in completion order;
* failures are counted and never retried silently (``max_task_retries=0``, ``max_restarts=0``):
  an actor that raises keeps its place and the task is played again; an actor that dies (killed,
  crashed, node lost), or hangs past the per-task deadline (then ``ray.kill``), is reported with
  its kind and node and replaced by a new actor, and its task is played again. After more than
  ``max_failures`` failures in one :meth:`RaySelfPlay.play` call, SelfPlayError says why.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from alphagomoku.selfplay.pool import FailureBudget, SelfPlayError, check_result
from alphagomoku.selfplay.training_game import TrainingGameError
from alphagomoku.selfplay.worker import (
    SelfPlayTask,
    TaskResult,
    WorkerSpec,
    task_game,
    task_search,
    task_settings,
)

INSTALL = "pip install -e '.[ray]'"


def import_ray():
    """The ray module, or SelfPlayError with the install command."""
    try:
        import ray
    except ImportError:
        raise SelfPlayError(
            f"--selfplay-backend ray needs Ray, which is not installed here: run  {INSTALL}  "
            "(or pip install 'ray==2.60.0'), or use --selfplay-backend pool"
        ) from None
    return ray


@dataclass(frozen=True)
class RayOptions:
    address: str = ""          # "" starts a local Ray (stopped again at close); "auto" or HOST:PORT joins one
    num_cpus: float = 1.0      # reserved per actor
    num_gpus: float = 0.0      # per actor; 0.5 lets two actors share a GPU
    max_lag: int = 0           # results this many versions behind the newest are still used
    startup_timeout: float = 300.0
    poll_seconds: float = 0.5
    local_cpus: int | None = None  # CPUs of a local Ray (None: Ray counts them)
    fault_fn: Callable | None = None  # test-only: called in the actor before each task


class SelfPlayActor:
    """One actor: a pool worker's state and its play loop, fed by Ray instead of a pipe."""

    def __init__(self, index: int, spec: WorkerSpec, fault_fn=None):
        import ray

        gpu_ids = ray.get_gpu_ids()
        if not gpu_ids:
            # Before torch is imported here: a CPU actor must not touch a GPU Ray gave to another.
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
        from alphagomoku.selfplay.worker import setup_worker

        self.spec = replace(spec, device="cuda" if gpu_ids else "cpu", num_gpus=0)
        self.state = setup_worker(index, self.spec)
        self.fault_fn = fault_fn
        ctx = ray.get_runtime_context()
        self.where = (f"node {ray.util.get_node_ip_address()} (id {ctx.get_node_id()[:8]}), "
                      f"pid {os.getpid()}, GPU ids {gpu_ids or 'none'}")

    def info(self) -> tuple[str, str, str]:
        return self.state.device_line, self.where, self.state.init_error

    def play(self, task: SelfPlayTask, version: int, weights) -> tuple[int, TaskResult]:
        """``weights``: (model config dict, CPU state dict), resolved by Ray from one ray.put."""
        from alphagomoku.nn import ModelConfig
        from alphagomoku.nn.inference_backend import make_evaluator
        from alphagomoku.nn.io import model_from_state
        from alphagomoku.selfplay.game_loop import play_games

        if self.fault_fn is not None:
            self.fault_fn(task, self.state.index)
        state = self.state
        if state.version != version:
            config, state_dict = weights
            model = model_from_state(ModelConfig.from_dict(config), state_dict, device=state.device,
                                     source=f"version {version}")
            old = state.evaluator
            if getattr(old, "sample", None) is not None and old.config == model.config:
                old.load_state_dict(model.state_dict())  # int8: calibrated on what it has read
            else:
                # The same inference backend as a pool worker (torch, or ONNX Runtime on the CPU).
                state.evaluator = make_evaluator(
                    model, state.device, state.backend, threads=self.spec.threads_per_worker,
                    precision=self.spec.onnx_precision,
                    log=lambda line: print(f"[actor {state.index}] {line}", file=sys.stderr,
                                           flush=True))
            state.version = version
        cpu_start = time.process_time()
        records, stats = play_games(state.evaluator, task_game(task, self.spec),
                                    task_search(task, self.spec), task_settings(task, self.spec),
                                    task.num_games, task.seed)
        stats.update(worker=state.index, weights_version=version, cpu_seconds=time.process_time() - cpu_start)
        return version, TaskResult(task_id=task.task_id, worker=state.index, pid=os.getpid(),
                                   records=records, stats=stats)


@dataclass
class _Slot:
    index: int       # the actor's number; a replacement gets a new one
    handle: object
    where: str = "starting"
    task: SelfPlayTask | None = None
    ref: object = None
    started: float = 0.0


class RaySelfPlay(FailureBudget):
    """Plays self-play tasks on ``num_actors`` Ray actors."""

    def __init__(self, spec: WorkerSpec, num_actors: int, task_timeout: float, max_failures: int = 3,
                 log: Callable[[str], None] = print, options: RayOptions = RayOptions()):
        if num_actors < 1:
            raise ValueError("num_actors must be at least 1")
        self.ray = import_ray()
        self.spec = spec
        self.num_actors = num_actors
        self.task_timeout = task_timeout
        self.max_failures = max_failures
        self.log = log
        self.options = options
        self.slots: list[_Slot] = []
        self.failures: list[str] = []
        self.stale_dropped = 0
        self.latest_version = -1
        self.actor_lines: list[str] = []
        self._weights: dict[int, object] = {}  # version -> ObjectRef
        self._next_index = 0
        self._owns_ray = False
        self._remote_cls = None

    # -- lifecycle ----------------------------------------------------------------------------------
    def __enter__(self) -> "RaySelfPlay":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        ray, opt = self.ray, self.options
        if not ray.is_initialized():
            self._owns_ray = not opt.address
            try:
                # "local" always starts a new Ray: address=None would join any cluster that
                # `ray start` left on this machine (or one that died and left its address file).
                ray.init(address=opt.address or "local",
                         num_cpus=opt.local_cpus if not opt.address else None,
                         include_dashboard=False, log_to_driver=True)
            except Exception as e:  # noqa: BLE001 - connection or start-up failures
                raise SelfPlayError(
                    f"could not {'connect to Ray at ' + opt.address if opt.address else 'start a local Ray'}: "
                    f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}; see docs/scaling.md"
                ) from None
        have = ray.cluster_resources()
        need_cpu, need_gpu = self.num_actors * opt.num_cpus, self.num_actors * opt.num_gpus
        if need_cpu > have.get("CPU", 0) or need_gpu > have.get("GPU", 0):
            raise SelfPlayError(
                f"Ray cannot place {self.num_actors} self-play actor(s) of {opt.num_cpus:g} CPU and "
                f"{opt.num_gpus:g} GPU each: the cluster has {have.get('CPU', 0):g} CPU and "
                f"{have.get('GPU', 0):g} GPU. Lower --parallel-workers, --ray-actor-cpus or "
                "--ray-actor-gpus, or add nodes (docs/scaling.md)"
            )
        # No silent retries: the driver resubmits and counts every failure itself.
        self._remote_cls = ray.remote(max_restarts=0, max_task_retries=0)(SelfPlayActor)
        self.slots = [self._new_slot() for _ in range(self.num_actors)]
        deadline = time.monotonic() + opt.startup_timeout
        for slot in self.slots:
            self._wait_ready(slot, deadline)

    def _new_slot(self) -> _Slot:
        index = self._next_index
        self._next_index += 1
        handle = self._remote_cls.options(num_cpus=self.options.num_cpus, num_gpus=self.options.num_gpus).remote(index, self.spec, self.options.fault_fn)
        return _Slot(index, handle)

    def _wait_ready(self, slot: _Slot, deadline: float) -> None:
        ray = self.ray
        try:
            line, where, init_error = ray.get(slot.handle.info.remote(),
                                              timeout=max(1.0, deadline - time.monotonic()))
        except ray.exceptions.GetTimeoutError:
            raise SelfPlayError(
                f"self-play actor {slot.index} did not start within {self.options.startup_timeout:.0f} s "
                "(Ray could not place it, or its node is too slow to import torch); see docs/scaling.md"
            ) from None
        except ray.exceptions.RayError as e:
            raise SelfPlayError(f"self-play actor {slot.index} failed to start: {e}") from None
        slot.where = where
        self.actor_lines.append(f"[actor {slot.index}] {line.split('] ', 1)[-1]} on {where}")
        self.log(self.actor_lines[-1])
        if init_error:
            raise SelfPlayError(f"{line}\n{init_error}")

    def close(self) -> None:
        """Stop every actor (and the local Ray this backend started)."""
        ray = self.ray
        for slot in self.slots:
            try:
                ray.kill(slot.handle, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.slots = []
        self._weights = {}
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
            self._owns_ray = False

    # -- playing ------------------------------------------------------------------------------------
    def _weights_ref(self, task: SelfPlayTask):
        """One ray.put per weights version, of CPU tensors (no CUDA object crosses to an actor)."""
        if task.weights_version not in self._weights:
            from alphagomoku.nn.io import read_model_file

            config, state_dict = read_model_file(task.weights_path)
            self._weights[task.weights_version] = self.ray.put(
                (config.to_dict(), {k: v.cpu() for k, v in state_dict.items()}))
            for old in sorted(self._weights)[:-2]:
                del self._weights[old]
        return self._weights[task.weights_version]

    def play(self, tasks: Iterable[SelfPlayTask], on_result: Callable[[TaskResult], None]) -> None:
        """Play every task; call ``on_result`` as each result arrives (in completion order)."""
        ray = self.ray
        queue = list(tasks)
        self.failures = []
        if not self.slots:
            self._start()
        for task in queue:
            if task.weights_version >= self.latest_version:
                self.latest_version, self._latest_path = task.weights_version, task.weights_path
        left = len(queue)
        while left:
            for slot in self.slots:
                if slot.task is None and queue:
                    self._submit(slot, queue.pop(0))
            busy = {slot.ref: slot for slot in self.slots if slot.task is not None}
            ready, _ = ray.wait(list(busy), num_returns=1, timeout=self.options.poll_seconds)
            for ref in ready:
                slot = busy[ref]
                task, slot.task, slot.ref = slot.task, None, None
                again = self._collect(slot, task, ref, on_result)
                if again is None:
                    left -= 1
                else:
                    queue.append(again)
            now = time.monotonic()
            for slot in self.slots:
                if self._overdue(slot, now):
                    task = slot.task
                    self._replace(slot, "hang", f"no result for task {task.task_id} within "
                                  f"{self.task_timeout:.0f} s (raise --worker-timeout if a task of "
                                  f"{task.num_games} games can legitimately take this long)")
                    queue.append(task)

    def _overdue(self, slot: _Slot, now: float) -> bool:
        """Whether ``slot``'s task has gone past the timeout without a result. A result that came
        back while the driver was busy elsewhere (starting a replacement actor can take longer
        than a task) is not a hang: it is collected on the next pass."""
        return (slot.task is not None and now - slot.started > self.task_timeout
                and not self.ray.wait([slot.ref], num_returns=1, timeout=0)[0])

    def _submit(self, slot: _Slot, task: SelfPlayTask) -> None:
        slot.task, slot.started = task, time.monotonic()
        slot.ref = slot.handle.play.remote(task, task.weights_version, self._weights_ref(task))

    _latest_path: str | None = None

    def _collect(self, slot: _Slot, task: SelfPlayTask, ref, on_result) -> SelfPlayTask | None:
        """Hand a finished task's result on; or return the task to play again."""
        ray = self.ray
        try:
            version, result = ray.get(ref)
        except ray.exceptions.RayActorError as e:
            self._replace(slot, "death", f"died during task {task.task_id} "
                          f"({type(e).__name__}: {_first_line(e)})")
            return task
        except ray.exceptions.RayTaskError as e:
            self._fail(f"actor {slot.index} on {slot.where} raised in task {task.task_id} [kind: raise]: "
                       f"{_first_line(e.cause) if getattr(e, 'cause', None) else _first_line(e)}\n{e}")
            return task
        if version < self.latest_version - self.options.max_lag:
            self.stale_dropped += 1
            self.log(f"dropped a result of weights version {version} (newest {self.latest_version}, "
                     f"lag allowed {self.options.max_lag}); task {task.task_id} is played again with "
                     "the newest weights")
            return replace(task, weights_version=self.latest_version, weights_path=self._latest_path)
        try:
            check_result(result, task, task_game(task, self.spec))
        except TrainingGameError as e:
            self._fail(f"actor {slot.index} returned bad data for task {task.task_id}: {e}")
            return task
        on_result(result)
        return None

    def _replace(self, slot: _Slot, kind: str, what: str) -> None:
        """Report a dead or hung actor by kind and node, then put a new actor in its place."""
        old, where = slot.index, slot.where
        try:
            self.ray.kill(slot.handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already dead
            pass
        self._fail(f"actor {old} on {where} [kind: {kind}]: {what}; replaced, its games are played again")
        new = self._new_slot()
        self._wait_ready(new, time.monotonic() + self.options.startup_timeout)
        slot.index, slot.handle, slot.where, slot.task, slot.ref = new.index, new.handle, new.where, None, None


def _first_line(e) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


__all__ = ["RayOptions", "RaySelfPlay", "SelfPlayActor", "import_ray", "INSTALL"]
