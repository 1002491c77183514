"""Self-play speed of the two network shapes (az, kata) at one preset, timed in one run.

Each shape's untrained network plays the recipe's self-play in the same spawned pool as
``benchmark.py selfplay`` (one warm-up task per worker first), the shapes taking turns for
``--repeats`` rounds so that load on a shared machine falls on both alike. ``kata_cost`` is the
median over the rounds of az's positions per second over kata's: how many times longer the
fully convolutional network takes to make the same self-play data (1.3 at most is the target).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path

import numpy as np

from alphagomoku.bench.selfplay import _pool_run, _positive_int, _raw_forward, recipe_config


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recipe", default="cpu-hour", metavar="NAME",
                   help="self-play as this training recipe runs it (default cpu-hour)")
    p.add_argument("--preset", help="model preset (default: the recipe's)")
    p.add_argument("--board-size", type=int, help="board size (default: the recipe's)")
    p.add_argument("--simulations", type=int, help="MCTS simulations per move (default: the recipe's)")
    p.add_argument("--games-per-worker", type=int, help="games each worker's task plays "
                   "(default: the recipe's games_per_task)")
    p.add_argument("--workers", type=_positive_int, default=1, help="self-play workers (default 1)")
    p.add_argument("--backend", choices=("auto", "torch", "onnx"), default="auto",
                   help="the CPU inference backend (default auto: ONNX Runtime when installed)")
    p.add_argument("--repeats", type=_positive_int, default=3,
                   help="timed rounds, the shapes taking turns (default 3)")
    p.add_argument("--seed", type=int, default=0)


def _as_arch(cfg, arch: str):
    """The recipe's self-play with a network of shape ``arch``; for az, without the auxiliary
    targets, which only a kata network has and self-play does not use anyway."""
    from alphagomoku.bench import UsageError
    from alphagomoku.train.config import ConfigError

    changes = {"model_arch": arch}
    if arch == "az":
        changes.update(aux_reply_weight=0.0, soft_policy_weight=0.0, short_value_weight=0.0,
                       future_weight=0.0)
    try:
        return dataclasses.replace(cfg, **changes)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def run(args) -> dict:
    import torch

    from alphagomoku.device import select_device
    from alphagomoku.nn import PolicyValueNet
    from alphagomoku.nn.inference_backend import resolve_backend
    from alphagomoku.nn.io import save_model
    from alphagomoku.selfplay.warmup import compile_selfplay_kernels
    from alphagomoku.train.selfplay_epoch import worker_spec

    for name in ("games_at_once", "vcf_plane_budget", "eval_cache", "device"):
        setattr(args, name, getattr(args, name, None))
    args.device = "cpu"
    base = recipe_config(args)
    choice = select_device("cpu")
    backend = resolve_backend(args.backend, "cpu")[0]
    compile_selfplay_kernels(base.game)
    out: dict = {"recipe": args.recipe, "preset": base.model_preset,
                 "board": f"{base.board_size}x{base.board_size}", "simulations": base.simulations,
                 "games_per_worker": base.games_per_task, "workers": args.workers,
                 "backend": backend, "repeats": args.repeats}
    runs: dict[str, list[float]] = {"az": [], "kata": []}
    with tempfile.TemporaryDirectory() as tmp:
        setups = {}
        for arch in runs:
            cfg = _as_arch(base, arch)
            torch.manual_seed(args.seed)
            model = PolicyValueNet(cfg.model).eval()
            weights = str(Path(tmp) / f"{arch}.pt")
            save_model(weights, model)
            spec = dataclasses.replace(worker_spec(cfg, choice), inference_backend=backend)
            setups[arch] = (model, spec, weights)
            out[f"{arch}_parameters"] = model.config.num_parameters()
        for rep in range(args.repeats):
            for arch, (_, spec, weights) in setups.items():
                r = _pool_run(spec, args.workers, weights, base.games_per_task,
                              args.seed + 1000 * rep)
                runs[arch].append(r["positions_per_second"])
        for arch, (model, _, _) in setups.items():
            out[f"{arch}_positions_per_second"] = float(np.median(runs[arch]))
            out[f"{arch}_positions_per_second_runs"] = runs[arch]
            out[f"{arch}_raw_forward_per_second_at_batch"] = _raw_forward(
                model, choice.device, base.games_per_task, base.board_size, backend)
    ratios = [a / k for a, k in zip(runs["az"], runs["kata"])]
    out["kata_cost"] = float(np.median(ratios))
    out["kata_cost_runs"] = ratios
    return out
