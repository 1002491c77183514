"""The code that runs inside a self-play worker process.

Everything here is module level so that the spawn start method can find it by name. A worker
sets its GPU before torch is imported, says which device it uses, loads the network when a task
names a weights version it has not loaded yet, and returns either a TaskResult or a TaskFailure
with the traceback: an exception never leaves a worker as a bare, unexplained error, and a task
never returns nothing.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field, replace

from alphagomoku.game.config import GameConfig
from alphagomoku.parent_watch import exit_with_parent


@dataclass(frozen=True)
class WorkerSpec:
    """What every worker needs, sent once through the pool's initializer (small and picklable)."""

    game: GameConfig
    search: object               # alphagomoku.mcts.SearchConfig
    settings: object             # alphagomoku.selfplay.game_loop.SelfPlaySettings
    device: str = "cpu"          # the device the parent resolved: cpu, mps or cuda
    num_gpus: int = 0            # GPUs to spread workers over, round-robin (0: no CUDA)
    threads_per_worker: int = 1  # torch (or ONNX Runtime) threads in a CPU worker
    inference_backend: str = "auto"  # auto | torch | onnx (alphagomoku.nn.inference_backend)
    inference_amp: str = "auto"      # auto | on | off: the torch evaluator's mixed precision
    onnx_precision: str = "fp32"     # fp32 | int8: ONNX Runtime's convolutions (CPU workers)
    cuda_graphs: str = "auto"        # auto | off: CUDA graphs for a GPU worker's forward pass


def worker_devices(choice, request: str) -> tuple[str, int]:
    """``(device, num_gpus)`` for a WorkerSpec, from the parent's DeviceChoice and the request
    it came from: a named GPU (``cuda:N``) takes every worker; ``cuda`` or ``auto`` spreads the
    workers round-robin over all GPUs; otherwise the device kind (cpu, mps)."""
    if choice.kind != "cuda":
        return choice.kind, 0
    if request in ("auto", "cuda"):
        import torch

        return "cuda", torch.cuda.device_count()
    return str(choice.device), 0


@dataclass(frozen=True)
class SelfPlayTask:
    task_id: int
    num_games: int
    seed: int
    weights_path: str
    weights_version: int
    # The trainer's current idea of an even opening (OpeningSettings.black_target); it changes
    # every epoch, so it travels with the task rather than in the WorkerSpec fixed at start-up.
    opening_black_target: float = 0.0
    # The board and rule of this task's games when the run trains several (None: the spec's).
    game: GameConfig | None = None
    # Simulations a move when the run's count grows as it goes (progressive simulation; 0: the
    # spec's).
    simulations: int = 0


def task_game(task: SelfPlayTask, spec: WorkerSpec) -> GameConfig:
    """The game ``task`` plays: its own, or the one every task of the run plays."""
    return task.game if task.game is not None else spec.game


def task_search(task: SelfPlayTask, spec: WorkerSpec):
    """The search ``task``'s games use: the spec's, with the task's simulations where it has its own."""
    if task.simulations and task.simulations != spec.search.num_simulations:
        return replace(spec.search, num_simulations=task.simulations)
    return spec.search


def task_settings(task: SelfPlayTask, spec: WorkerSpec):
    """The game loop's settings for ``task``: the spec's, aiming its openings at the trainer's
    current even value."""
    settings = spec.settings
    if settings.openings is None:
        return settings
    return replace(settings, openings=replace(settings.openings,
                                              black_target=task.opening_black_target))


@dataclass
class TaskResult:
    task_id: int
    worker: int
    pid: int
    records: list
    stats: dict = field(default_factory=dict)


@dataclass
class TaskFailure:
    task_id: int
    worker: int
    pid: int
    error: str       # one line
    traceback: str   # the worker's full traceback
    fatal: bool = False  # retrying cannot help (the worker's device does not work)


@dataclass
class _WorkerState:
    index: int
    spec: WorkerSpec
    device: object = None
    device_line: str = ""
    init_error: str = ""
    evaluator: object = None
    backend: str = "torch"    # what run_task asks make_evaluator for (decided at setup)
    version: int = -1
    registry: object = None   # the pool's SimpleQueue: registration and heartbeats
    last_beat: float = 0.0

    def beat(self) -> None:
        """Tell the parent this worker is making progress (at most twice a second)."""
        now = time.monotonic()
        if self.registry is not None and now - self.last_beat >= 0.5:
            self.last_beat = now
            self.registry.put(("beat", self.index, os.getpid(), "", ""))


_STATE: _WorkerState | None = None


def init_worker(counter, registry, spec: WorkerSpec) -> None:
    """Pool initializer. Must not raise: a raising initializer makes ``Pool`` restart workers
    forever. A failure is stored and reported by the first task instead."""
    global _STATE
    # Ctrl-C goes to the whole process group; the parent alone decides how to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent()
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    _STATE = setup_worker(index, spec)
    _STATE.registry = registry
    registry.put(("hello", index, os.getpid(), _STATE.device_line, _STATE.init_error))


def setup_worker(index: int, spec: WorkerSpec) -> _WorkerState:
    state = _WorkerState(index=index, spec=spec)
    try:
        from alphagomoku.device import limit_cpu_threads, select_device, set_worker_gpu

        # Before torch is imported in this process: afterwards it would be too late.
        set_worker_gpu(index, spec.num_gpus)
        choice = select_device("cuda:0" if spec.num_gpus else spec.device)
        if choice.kind == "cpu":
            limit_cpu_threads(spec.threads_per_worker)
        state.device = choice.device
        state.device_line = f"[worker {index}] using {choice.kind.upper()}: {choice.name}"
        if choice.kind == "cpu":
            from alphagomoku.nn.inference_backend import describe_backend, require_backend, resolve_backend

            # Here rather than at the first task: an onnx that cannot load stops the run at
            # once (as a missing device does), and this line says which backend plays and, for
            # a fall-back, why: the one line about it, so the tasks then ask for torch.
            require_backend(spec.inference_backend, choice.kind)
            state.device_line += f"; {describe_backend(spec.inference_backend, choice.kind)}"
            if resolve_backend(spec.inference_backend, choice.kind)[0] == "onnx":
                state.backend = spec.inference_backend
                if spec.onnx_precision == "int8":
                    state.device_line += " (int8 convolutions once calibrated)"
        if spec.num_gpus:
            state.device_line += f" (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})"
        groups = getattr(spec.settings, "groups", 1)
        if choice.kind == "cuda" or groups > 1:
            # The self-play layout a GPU worker runs (auto on CUDA: see train.loop.selfplay_groups).
            state.device_line += (f"; self-play: {spec.settings.games_at_once} games at once in "
                                  f"{groups} group{'s' if groups > 1 else ''}, one batch in "
                                  f"flight each")
    except Exception as e:  # noqa: BLE001 - reported through the first task
        state.init_error = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
        state.device_line = f"[worker {index}] FAILED to set up device {spec.device!r}: {e}"
    print(state.device_line, file=sys.stderr, flush=True)
    return state


def play_task(task: SelfPlayTask):
    """Pool task: play ``task.num_games`` games with the weights the task names."""
    state = _STATE
    index = state.index if state else -1
    if state is not None and state.init_error:
        return TaskFailure(task_id=task.task_id, worker=index, pid=os.getpid(),
                           error=state.device_line, traceback=state.init_error, fatal=True)
    try:
        if state is None:
            raise RuntimeError("worker was not initialised (init_worker did not run)")
        return run_task(state, task)
    except BaseException as e:  # noqa: BLE001 - every failure goes back with its traceback
        return TaskFailure(
            task_id=task.task_id, worker=index, pid=os.getpid(),
            error=f"{type(e).__name__}: {e}".splitlines()[0], traceback=traceback.format_exc(),
        )


def run_task(state: _WorkerState, task: SelfPlayTask) -> TaskResult:
    from alphagomoku.selfplay.game_loop import play_games

    state.beat()
    if state.version != task.weights_version:
        from alphagomoku.nn.inference_backend import make_evaluator
        from alphagomoku.nn.io import load_model

        model = load_model(task.weights_path, device=state.device)
        old = state.evaluator
        keeps = getattr(old, "graphs", False) or getattr(old, "sample", None) is not None
        if keeps and getattr(old, "config", None) == model.config:
            # CUDA graphs are captured once per worker, and an int8 network is calibrated on
            # the positions the worker has read: new weights go into the evaluator it has.
            old.load_state_dict(model.state_dict())
            state.version = task.weights_version
        if state.version != task.weights_version:
            # The ONNX backend exports the model here, once per weights version (0.1-0.3 s).
            state.evaluator = make_evaluator(
                model, state.device, state.backend, threads=state.spec.threads_per_worker,
                amp=state.spec.inference_amp, precision=state.spec.onnx_precision,
                log=lambda line: print(f"[worker {state.index}] {line}", file=sys.stderr,
                                       flush=True))
        state.version = task.weights_version
        if state.spec.cuda_graphs == "off" and hasattr(state.evaluator, "disable_graphs"):
            state.evaluator.disable_graphs()
    cpu_start = time.process_time()
    records, stats = play_games(
        state.evaluator, task_game(task, state.spec), task_search(task, state.spec),
        task_settings(task, state.spec), task.num_games, task.seed, on_step=state.beat,
    )
    # CPU time as well as wall time: on a shared machine the benchmark's speeds per CPU second
    # stay comparable while wall-clock speeds swing with the other load.
    stats["cpu_seconds"] = time.process_time() - cpu_start
    if len(records) != task.num_games:
        raise RuntimeError(f"task asked for {task.num_games} games, the loop produced {len(records)}")
    stats["worker"] = state.index
    return TaskResult(task_id=task.task_id, worker=state.index, pid=os.getpid(), records=records, stats=stats)
