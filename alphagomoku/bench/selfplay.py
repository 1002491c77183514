"""Self-play throughput with 1 and 2 workers, per inference backend, the network's share of a worker's time, and the raw forward rate.

What is timed is the self-play pool exactly as training runs it (spawned workers, one network
batch per search step over all the games a worker plays at once), with the workers a training
recipe gives it (``--recipe``, default cpu-hour: its network, search, simulations, games at once,
openings), the untrained network of that size, after a warm-up task per
worker so that process start, imports and model loading are not counted. On a CPU each worker
count runs once per inference backend (torch, then ONNX Runtime: ``--backends``), so one run
gives both speeds side by side; keys start with the backend's name, and
``onnx_over_torch_workersN`` is the ratio of their positions per second (``onnx-int8``, ONNX
Runtime with int8 convolutions, adds ``int8_over_fp32_workersN``). Short timed runs
(a second or two at small settings) were measured to swing by 20%, so each setting is timed
``--repeats`` times, the backends taking turns: every figure is the median over the repeats,
each ratio the median of the repeats' ratios (``..._runs`` lists them). Each speed is also
given per second of the workers' CPU time (``positions_per_cpu_second``,
``onnx_over_torch_cpu_workersN``), which other load on a shared machine barely moves.

``--simulated-device LAUNCH_MS,PER_POSITION_US`` measures the overlap of tree work and device
time instead, on any machine: one worker's games in this process against a stand-in
launch-bound device (:mod:`alphagomoku.nn.simulated`, a measuring tool), with one group (the
plain loop, where the two times add) and with ``--groups`` groups, beside the bound
min(the worker's CPU-only rate, the device's rate at its batches).

``--profile`` answers where a worker's time goes instead: one worker's games in this process
under cProfile, per backend, with the search kernels' cost a leaf, in the thread's CPU time
(not wall time, which swings with other load on a shared machine).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from alphagomoku.nn.inference_backend import AMP_MODES  # imports no torch


# A name of --backends: the inference backend and ONNX Runtime's precision it runs.
_BACKENDS = {"torch": ("torch", "fp32"), "onnx": ("onnx", "fp32"), "onnx-int8": ("onnx", "int8")}


def _backend_list(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names or any(n not in _BACKENDS for n in names):
        raise argparse.ArgumentTypeError(f"expected some of {', '.join(_BACKENDS)}, "
                                         f"comma-separated, got {text!r}")
    return list(dict.fromkeys(names))


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # stdout carries the --json answer


def _with_backend(spec, name: str):
    """``spec`` (a WorkerSpec) running the network as ``--backends`` name ``name`` says."""
    import dataclasses

    backend, precision = _BACKENDS[name]
    return dataclasses.replace(spec, inference_backend=backend, onnx_precision=precision)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recipe", default="cpu-hour", metavar="NAME",
                   help="self-play as this training recipe runs it (configs/NAME.json: network, "
                        "search, simulations, games at once, openings, playout cap; default "
                        "cpu-hour); the flags below override single settings")
    p.add_argument("--preset", help="model preset (default: the recipe's)")
    p.add_argument("--board-size", type=int, help="board size (default: the recipe's)")
    p.add_argument("--simulations", type=int,
                   help="MCTS simulations per move (default: the recipe's; with progressive "
                        "simulation, the count it rises to)")
    p.add_argument("--games-per-worker", type=int,
                   help="games each worker's task plays (the network batch unless "
                        "--games-at-once is smaller; default: the recipe's games_per_task)")
    p.add_argument("--games-at-once", type=int,
                   help="of those, how many at once, each finished game's place going to the "
                        "next (default: the recipe's games_at_once; 0: all)")
    p.add_argument("--vcf-plane-budget", type=int, metavar="NODES",
                   help="a network with the two VCF input planes, proved within NODES solver nodes "
                        "(default: the recipe's, none)")
    p.add_argument("--model", metavar="PATH",
                   help="time this network instead of an untrained one of the recipe's size (its "
                        "board must be the recipe's; its VCF planes replace the recipe's)")
    p.add_argument("--eval-cache", type=int, metavar="POSITIONS",
                   help="network answers each task keeps for positions met again; 0 times the "
                        "search without the cache (default: the recipe's)")
    p.add_argument("--workers", default="1,2", help="worker counts to measure, comma-separated")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, mps or auto")
    p.add_argument("--backends", type=_backend_list, default=["torch", "onnx"],
                   help="CPU inference backends to compare, comma-separated: torch, onnx, onnx-int8 "
                        "(ONNX Runtime with int8 convolutions) (default torch,onnx; the onnx ones "
                        "are left out on a GPU or when it is not installed, and say so)")
    p.add_argument("--amp", choices=tuple(AMP_MODES), default="auto",
                   help="the torch evaluator's mixed precision: auto (bf16, or fp16, on CUDA; fp32 "
                        "elsewhere), on or off (default auto)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=_positive_int, default=3,
                   help="timed runs per worker count and backend, taking turns (default 3)")
    p.add_argument("--simulated-device", metavar="LAUNCH_MS,PER_POSITION_US",
                   help="measure one worker in this process against a stand-in launch-bound "
                        "device (a measuring tool, made-up outputs): CPU-only, one group and "
                        "--groups groups, beside the bound min(CPU-only rate, device rate)")
    p.add_argument("--groups", type=_positive_int,
                   help="batches in flight per worker: its games split into this many groups "
                        "(default: the recipe's; 2 with --simulated-device)")
    p.add_argument("--graphs", choices=("auto", "off"),
                   help="GPU workers' CUDA graphs: auto (at fixed batch sizes) or off (eager, "
                        "as on a CPU); default: the recipe's, auto")
    p.add_argument("--profile", action="store_true",
                   help="instead of timing the pool, profile one worker's games in this process "
                        "(cProfile, one thread, each backend, or against --simulated-device "
                        "when it is given): where its time goes, and the search kernels' "
                        "microseconds a leaf")


def recipe_config(args):
    """The TrainConfig whose self-play is timed: the recipe, with the flags that were given, on
    one board and rule (the recipe's main ones, or ``--board-size``): a recipe that mixes
    several is timed on that one."""
    from alphagomoku.bench import load_recipe

    flags = {"model_preset": args.preset, "board_size": args.board_size,
             "simulations": args.simulations, "games_per_task": args.games_per_worker,
             "games_at_once": args.games_at_once, "vcf_plane_budget": args.vcf_plane_budget,
             "eval_cache": args.eval_cache}
    if getattr(args, "groups", None) is not None:
        flags["selfplay_groups"] = args.groups
    if getattr(args, "graphs", None) is not None:
        flags["cuda_graphs"] = args.graphs
    changes = {k: v for k, v in flags.items() if v is not None}
    # A benchmark times one search size: a recipe with progressive simulation is timed at the
    # count it rises to, which a --simulations below its start would otherwise refuse.
    changes["simulations_start"] = 0
    return load_recipe(args.recipe, one_board=True, device=args.device, **changes)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def trained_model(path: str, board_size: int | None = None):
    """The model in ``path``, in eval mode; a usage error when it cannot be read, or when
    ``board_size`` is given and it plays another board."""
    from alphagomoku.bench import UsageError
    from alphagomoku.nn.io import CheckpointError, load_model

    try:
        model = load_model(path)
    except (CheckpointError, OSError) as e:
        raise UsageError(str(e)) from None
    size = (model.config.width, model.config.height)
    if board_size is not None and size != (board_size, board_size):
        raise UsageError(f"{path} plays {size[0]}x{size[1]}, the recipe {board_size}x"
                         f"{board_size}: give --board-size {size[0]}")
    return model.eval()


def _pool_run(spec, workers: int, weights: str, games_per_worker: int, seed: int) -> dict:
    from alphagomoku.selfplay.pool import SelfPlayPool
    from alphagomoku.selfplay.worker import SelfPlayTask

    results = []
    samples: list[float] = []
    with SelfPlayPool(spec, workers, task_timeout=600, log=lambda s: None) as pool:
        warm = [SelfPlayTask(i, 1, seed + 1000 + i, weights, 0) for i in range(max(workers, 1))]
        pool.play(warm, lambda r: None)
        tasks = [SelfPlayTask(i, games_per_worker, seed + i, weights, 0) for i in range(max(workers, 1))]
        stop = threading.Event()
        sampler = threading.Thread(target=_sample_gpu, args=(stop, samples), daemon=True)
        if spec.num_gpus or spec.device.startswith("cuda"):
            sampler.start()
        t0 = time.perf_counter()
        pool.play(tasks, results.append)
        wall = time.perf_counter() - t0
        stop.set()
    records = [rec for r in results for rec in r.records]
    positions = sum(rec.length for rec in records)
    worker_seconds = sum(r.stats["seconds"] for r in results)
    network_seconds = sum(r.stats["network_seconds"] for r in results)
    evaluations = sum(r.stats["evaluations"] for r in results)
    hits = sum(r.stats["cache_hits"] for r in results)
    cpu_seconds = sum(r.stats["cpu_seconds"] for r in results)
    return {
        "games": len(records),
        "positions": positions,
        "wall_seconds": wall,
        "positions_per_second": positions / wall,
        # Per second of the workers' own CPU time: what the speed would be on idle cores.
        "positions_per_cpu_second": positions / cpu_seconds,
        "games_per_hour": 3600 * len(records) / wall,
        "network_share": network_seconds / worker_seconds,
        "evaluations_per_second": evaluations / wall,
        "mean_batch": evaluations / max(1, sum(r.stats["steps"] for r in results)),
        # Of the positions the searches asked about: answered by the cache, not the network.
        "cache_hit_share": hits / max(1, hits + sum(r.stats["cache_misses"] for r in results)),
        "gpu_utilisation_percent": float(np.mean(samples)) if samples else None,
    }


def _network_evaluator(spec, model, device, backend: str):
    """The evaluator a self-play worker of ``spec`` would make for ``backend``."""
    import torch

    from alphagomoku.nn.inference_backend import make_evaluator

    if device.type == "cpu":
        torch.set_num_threads(1)  # as in a CPU self-play worker
    spec = _with_backend(spec, backend)
    return make_evaluator(model.to(device), device, spec.inference_backend, threads=1,
                          amp=spec.inference_amp, precision=spec.onnx_precision, log=_to_stderr)


def _profile(spec, ev, games: int, seed: int, top: int = 12) -> dict:
    """One worker's ``play_games`` with evaluator ``ev`` under cProfile, after an untimed
    warm-up game, with the network batch it sent through the task: the mean over each tenth of
    its network calls (the balanced openings' calls among them)."""
    import cProfile
    import pstats

    from alphagomoku.selfplay.game_loop import play_games

    play_games(ev, spec.game, spec.search, spec.settings, 1, seed + 999)
    batches: list[int] = []

    def counted(planes, legal):
        batches.append(len(planes))
        return ev(planes, legal)

    counted.config = getattr(ev, "config", None)  # the search checks the network's VCF planes

    # CPU time of this thread, not wall time: on a shared machine the wall-clock figures swing
    # with the other load (51 to 88 us a leaf for the same gather, one minute apart).
    profiler = cProfile.Profile(time.thread_time)
    t0 = time.perf_counter()
    profiler.enable()
    records, stats = play_games(counted, spec.game, spec.search, spec.settings, games, seed)
    profiler.disable()
    wall = time.perf_counter() - t0
    rows = pstats.Stats(profiler).stats  # (file, line, name) -> (calls, _, own, cumulative, _)
    own = sorted(((v[2], f"{Path(k[0]).name}:{k[1]}({k[2]})") for k, v in rows.items()),
                 reverse=True)
    leaves = max(1, stats["evaluations"])

    def kernel_us(name: str) -> float:
        # The forest calls a kernel through its compiled entry point, which cProfile lists as
        # a built-in ("<built-in method gather ...>"); the plain dispatcher as kernels.py's.
        return 1e6 * sum(v[2] for k, v in rows.items()
                         if (k[2] == name and k[0].endswith("mcts/kernels.py"))
                         or (k[0] == "~" and k[2] == f"<built-in method alphagomoku.mcts."
                                                     f"kernels.{name}>")
                         ) / leaves

    def forest_us(name: str) -> float:  # Forest.<name>, the Python around the kernel included
        return 1e6 * sum(v[3] for k, v in rows.items()
                         if k[2] == name and k[0].endswith("mcts/forest.py")) / leaves

    return {
        "positions_per_second": sum(r.length for r in records) / wall,
        "network_share": stats["network_seconds"] / wall,
        # gather: selection, planes (and the VCF planes' solver calls); apply: expansion, backup.
        "gather_us_per_leaf": kernel_us("gather"),
        "apply_us_per_leaf": kernel_us("apply"),
        "forest_gather_us_per_leaf": forest_us("gather"),
        "forest_apply_us_per_leaf": forest_us("apply"),
        "groups": stats.get("groups", 1),
        "top_own_seconds": [[name, round(sec, 3)] for sec, name in own[:top]],
        # A task's games start together and end apart, so its last steps send small batches.
        "mean_batch_by_tenth": [round(float(part.mean()), 1)
                                for part in np.array_split(np.array(batches), 10) if len(part)],
    }


def _simulated(spec, config, launch_ms: float, per_position_us: float, games: int, groups: int,
               seed: int, repeats: int) -> dict:
    """One worker's games against the stand-in device: CPU-only (a device that takes no time),
    one group and ``groups`` groups, taking turns ``repeats`` times; medians and the runs."""
    import dataclasses

    from alphagomoku.nn.simulated import SimulatedDevice
    from alphagomoku.selfplay.game_loop import play_games

    def once(launch, per, g):
        dev = SimulatedDevice(config, launch, per, seed)
        settings = dataclasses.replace(spec.settings, groups=g)
        t0, c0 = time.perf_counter(), time.process_time()
        records, stats = play_games(dev, spec.game, spec.search, settings, games, seed)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        positions = sum(r.length - r.opening for r in records)
        return {"positions_per_second": positions / wall,
                "positions_per_cpu_second": positions / cpu,
                # The device's own limit for this work: its positions in its busy time.
                "device_positions_per_second": positions / dev.busy_seconds
                if dev.busy_seconds else float("inf"),
                "mean_device_batch": dev.positions / max(1, dev.calls),
                "wall_seconds": wall}

    once(0.0, 0.0, groups)  # compiled and warm before any clock starts
    runs: dict = {}
    for _ in range(repeats):
        for name, launch, per, g in (("cpu_only", 0.0, 0.0, 1), ("one_group", launch_ms,
                                     per_position_us, 1), ("groups", launch_ms, per_position_us,
                                                           groups)):
            for k, v in once(launch, per, g).items():
                runs.setdefault(f"{name}_{k}", []).append(v)
    out: dict = {"simulated_device": f"{launch_ms:g} ms a call, {per_position_us:g} us a "
                                     f"position (a stand-in: a measuring tool)",
                 "groups": groups, "games": games, "repeats": repeats}
    for key, values in runs.items():
        if key.startswith("cpu_only_") and "device" in key:
            continue
        out[key] = float(np.median(values))
    # The bound of each repeat: min(CPU-only rate, the device's rate at the overlapped run's
    # batches); each share is the median over the repeats, the runs listed beside it.
    for name in ("one_group", "groups"):
        shares = [r / min(c, d) for r, c, d in zip(runs[f"{name}_positions_per_second"],
                                                   runs["cpu_only_positions_per_second"],
                                                   runs["groups_device_positions_per_second"])]
        out[f"{name}_share_of_bound"] = float(np.median(shares))
        out[f"{name}_share_of_bound_runs"] = [round(x, 3) for x in shares]
    out["bound_positions_per_second"] = float(np.median(
        [min(c, d) for c, d in zip(runs["cpu_only_positions_per_second"],
                                   runs["groups_device_positions_per_second"])]))
    out["groups_over_one_group"] = float(np.median(
        [b / a for a, b in zip(runs["one_group_positions_per_second"],
                               runs["groups_positions_per_second"])]))
    return out


def _sample_gpu(stop, samples: list) -> None:
    """GPU utilisation every half second while the workers play (needs pynvml)."""
    import torch

    while not stop.wait(0.5):
        try:
            samples.append(float(torch.cuda.utilization()))
        except Exception:  # noqa: BLE001 - no pynvml: no samples, reported as None
            return


def _raw_forward(model, device, batch: int, board: int, backend: str, amp: str = "auto",
                 seconds: float = 2.0) -> float:
    import torch

    from alphagomoku.nn.inference_backend import make_evaluator

    if device.type == "cpu":
        torch.set_num_threads(1)  # as in a CPU self-play worker
    backend, precision = _BACKENDS[backend]
    ev = make_evaluator(model, device, backend, threads=1, amp=amp, precision=precision,
                        log=_to_stderr)
    rng = np.random.default_rng(0)
    planes = (rng.random((batch, model.config.num_planes, board, board)) < 0.2).astype(np.float32)
    legal = np.ones((batch, board * board), dtype=np.bool_)
    ev(planes, legal)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        ev(planes, legal)
        n += batch
    return n / (time.perf_counter() - t0)


def _backends(names: list[str], device: str) -> tuple[list[str], str]:
    """The backends of ``--backends`` that can run on ``device``, and a note on any left out."""
    from alphagomoku.nn.inference_backend import resolve_backend

    kept, notes = [], []
    for name in names:
        chosen, problem = resolve_backend(_BACKENDS[name][0], device)
        if chosen == _BACKENDS[name][0]:
            kept.append(name)
        else:
            notes.append(f"{name} left out: {problem or 'not on a CPU (torch runs there)'}")
    return kept, "; ".join(notes) or "none"


def run(args) -> dict:
    import dataclasses

    import torch

    from alphagomoku.device import select_device
    from alphagomoku.nn import PolicyValueNet
    from alphagomoku.nn.io import save_model
    from alphagomoku.selfplay.warmup import compile_selfplay_kernels
    from alphagomoku.train.selfplay_epoch import worker_spec

    cfg = recipe_config(args)
    choice = select_device(args.device)
    torch.manual_seed(args.seed)
    if args.model:
        model = trained_model(args.model, cfg.board_size)
        cfg = dataclasses.replace(cfg, vcf_plane_budget=model.config.vcf_plane_budget,
                                  model_arch=model.config.arch,
                                  model_threat_planes=int(model.config.threat_planes))
    else:
        model = PolicyValueNet(cfg.model).eval()
    preset = model.config.label if args.model else cfg.model_preset
    backends, left_out = _backends(args.backends, choice.kind)
    if not backends:
        raise ValueError(f"no inference backend to measure on {choice.kind}: {left_out}")
    spec = dataclasses.replace(worker_spec(cfg, choice), inference_amp=args.amp)
    # Once here, as the trainer does: with a cold cache each spawned worker would compile the
    # kernels itself (on a fresh GPU machine a run with 8 workers took over 95 s, a warm one 29 s).
    compile_selfplay_kernels(cfg.game)
    if args.simulated_device:
        from alphagomoku.bench import UsageError
        from alphagomoku.nn.simulated import SimulatedDevice, parse_simulated_device

        try:
            launch, per = parse_simulated_device(args.simulated_device)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if args.profile:
            # Its answers ignore the VCF planes, so runs that differ only in the plane budget
            # build the same trees: the budget's cost, alone.
            ev = SimulatedDevice(model.config, launch, per, args.seed)
            return {"recipe": args.recipe, "preset": preset, **{
                f"simulated_{k}": v
                for k, v in _profile(spec, ev, cfg.games_per_task, args.seed).items()}}
        groups = args.groups or 2
        return {"recipe": args.recipe, "preset": preset, "search": cfg.search,
                "simulations": cfg.simulations, "vcf_plane_budget": cfg.vcf_plane_budget,
                "eval_cache": cfg.eval_cache, **_simulated(
                    spec, model.config, launch, per, cfg.games_per_task, groups, args.seed,
                    args.repeats)}
    if args.profile:
        return {"recipe": args.recipe, "preset": preset, **{
            f"{b}_{k}": v for b in backends
            for k, v in _profile(spec, _network_evaluator(spec, model, choice.device, b),
                                 cfg.games_per_task, args.seed).items()}}
    out: dict = {
        "device": str(choice),
        "recipe": args.recipe,
        "preset": preset,
        "model": args.model or "untrained",
        "board": f"{cfg.board_size}x{cfg.board_size}",
        "search": cfg.search,
        "simulations": cfg.simulations,
        "games_per_worker": cfg.games_per_task,
        "games_at_once": cfg.games_at_once or cfg.games_per_task,
        "vcf_plane_budget": cfg.vcf_plane_budget,
        "eval_cache": cfg.eval_cache,
        "backends": ",".join(backends),
        "backends_left_out": left_out,
        "amp": args.amp,
        "groups": spec.settings.groups,
        "cuda_graphs": spec.cuda_graphs if choice.kind == "cuda" else "n/a (not CUDA)",
    }
    counts = [int(w) for w in str(args.workers).split(",") if w.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        weights = str(Path(tmp) / "bench.pt")
        save_model(weights, model)
        runs: dict = {}
        for w in counts:
            for rep in range(args.repeats):
                for backend in backends:
                    r = _pool_run(_with_backend(spec, backend), w, weights,
                                  cfg.games_per_task, args.seed + 1000 * rep)
                    for k, v in r.items():
                        if v is not None:
                            runs.setdefault(f"{backend}_workers{w}_{k}", []).append(v)
        out["repeats"] = args.repeats
        for key, values in runs.items():
            out[key] = float(np.median(values))
        for backend in backends:
            for w in counts:
                out[f"{backend}_workers{w}_positions_per_second_runs"] = runs[
                    f"{backend}_workers{w}_positions_per_second"]
    for backend in backends:
        if 1 in counts and 2 in counts:
            out[f"{backend}_speedup_2_vs_1"] = (out[f"{backend}_workers2_positions_per_second"]
                                                / out[f"{backend}_workers1_positions_per_second"])
        out[f"{backend}_raw_forward_per_second_at_batch"] = _raw_forward(
            model.to(choice.device), choice.device, cfg.games_per_task, cfg.board_size, backend,
            args.amp)
    # Paired by repeat: the two backends of one repeat ran back to back.
    for label, fast, slow in (("onnx_over_torch", "onnx", "torch"),
                              ("int8_over_fp32", "onnx-int8", "onnx")):
        if fast not in backends or slow not in backends:
            continue
        for w in counts:
            for per in ("second", "cpu_second"):
                key = f"{label}{'' if per == 'second' else '_cpu'}_workers{w}"
                ratios = [f / s for f, s in zip(runs[f"{fast}_workers{w}_positions_per_{per}"],
                                                runs[f"{slow}_workers{w}_positions_per_{per}"])]
                out[key] = float(np.median(ratios))
                out[f"{key}_runs"] = ratios
        out[f"{label}_raw_forward"] = (out[f"{fast}_raw_forward_per_second_at_batch"]
                                       / out[f"{slow}_raw_forward_per_second_at_batch"])
    return out
