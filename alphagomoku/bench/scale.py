"""Self-play positions per second on the process pool and on Ray actors, with 1 and 2 of each.

Both backends play the same tasks (same seeds, same weights, so the same games) through their
``play(tasks, on_result)``, after a warm-up task per worker or actor so that process start,
imports and model loading are not counted. Ray runs locally (``ray.init`` with as many CPUs as
the largest count, started before the first measurement), one CPU per actor, as
``--selfplay-backend ray`` does by default.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", default="small", help="model preset (default small)")
    p.add_argument("--board-size", type=int, default=9)
    p.add_argument("--simulations", type=int, default=16, help="MCTS simulations per move")
    p.add_argument("--games-per-worker", type=int, default=8, help="games each worker plays at once")
    p.add_argument("--tasks-per-worker", type=int, default=2, help="timed tasks per worker or actor")
    p.add_argument("--workers", default="1,2", help="worker/actor counts to measure, comma-separated")
    p.add_argument("--seed", type=int, default=0)


def _timed(backend, workers: int, weights: str, args) -> dict:
    from alphagomoku.selfplay.worker import SelfPlayTask

    backend.play([SelfPlayTask(i, 1, args.seed + 1000 + i, weights, 0) for i in range(workers)], lambda r: None)
    n = workers * args.tasks_per_worker
    tasks = [SelfPlayTask(i, args.games_per_worker, args.seed + i, weights, 0) for i in range(n)]
    results = []
    t0 = time.perf_counter()
    backend.play(tasks, results.append)
    wall = time.perf_counter() - t0
    positions = sum(rec.length for r in results for rec in r.records)
    # Time inside play_games over the wall time of all workers: below 1 is overhead outside the
    # games (hand-off, scheduling) or a worker left idle at the end.
    busy = sum(r.stats["seconds"] for r in results) / (wall * workers)
    # Per CPU second of the workers: other load on a shared machine barely moves it.
    cpu = sum(r.stats.get("cpu_seconds", 0.0) for r in results)
    return {"positions": positions, "wall_seconds": wall, "positions_per_second": positions / wall,
            "positions_per_cpu_second": positions / cpu if cpu else None, "busy_share": busy}


def run(args) -> dict:
    import torch

    from alphagomoku.game import GameConfig
    from alphagomoku.mcts import SearchConfig
    from alphagomoku.nn import ModelConfig, PolicyValueNet
    from alphagomoku.nn.io import save_model
    from alphagomoku.selfplay.game_loop import SelfPlaySettings
    from alphagomoku.selfplay.pool import SelfPlayPool
    from alphagomoku.selfplay.warmup import compile_selfplay_kernels
    from alphagomoku.selfplay.worker import WorkerSpec

    game = GameConfig(width=args.board_size)
    compile_selfplay_kernels(game)
    torch.manual_seed(args.seed)
    spec = WorkerSpec(game=game, search=SearchConfig(num_simulations=args.simulations),
                      settings=SelfPlaySettings(games_at_once=args.games_per_worker))
    counts = [int(w) for w in str(args.workers).split(",") if w.strip()]
    from alphagomoku.nn.inference_backend import resolve_backend

    out: dict = {"device": "cpu", "inference_backend": resolve_backend("auto", "cpu")[0], "preset": args.preset, "board": f"{args.board_size}x{args.board_size}",
                 "simulations": args.simulations, "games_per_worker": args.games_per_worker,
                 "tasks_per_worker": args.tasks_per_worker}
    quiet = lambda s: None  # noqa: E731
    try:
        import ray
    except ImportError:
        ray = None
        out["ray"] = "not installed (pip install -e '.[ray]')"
    with tempfile.TemporaryDirectory() as tmp:
        weights = str(Path(tmp) / "bench.pt")
        save_model(weights, PolicyValueNet(ModelConfig.preset(args.preset, args.board_size)))
        if ray is not None:
            ray.init(address="local", num_cpus=max(counts), include_dashboard=False, log_to_driver=False)
        try:
            # Pool and Ray in turn for each count, so a change in the machine's load falls on
            # both sides of a comparison.
            for w in counts:
                with SelfPlayPool(spec, w, task_timeout=600, log=quiet) as pool:
                    for k, v in _timed(pool, w, weights, args).items():
                        out[f"pool{w}_{k}"] = v
                if ray is None:
                    continue
                from alphagomoku.selfplay.ray_backend import RayOptions, RaySelfPlay

                with RaySelfPlay(spec, w, task_timeout=600, log=quiet, options=RayOptions()) as actors:
                    for k, v in _timed(actors, w, weights, args).items():
                        out[f"ray{w}_{k}"] = v
                out[f"ray{w}_vs_pool{w}"] = out[f"ray{w}_positions_per_second"] / out[f"pool{w}_positions_per_second"]
                if out[f"ray{w}_positions_per_cpu_second"] and out[f"pool{w}_positions_per_cpu_second"]:
                    out[f"ray{w}_vs_pool{w}_per_cpu_second"] = (out[f"ray{w}_positions_per_cpu_second"]
                                                                / out[f"pool{w}_positions_per_cpu_second"])
        finally:
            if ray is not None:
                ray.shutdown()
    return out
