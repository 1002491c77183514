"""The evaluation cache (:mod:`alphagomoku.nn.cache`): what it saves in self-play and in play.

Two parts, on the shipped model (``--model``) and its board:

1. Self-play as a worker of ``--recipe`` plays it (its search, games at once and openings; the
   CPU worker's backend, one thread), in this process, without and with the cache, the two
   taking turns ``--repeats`` times on the same seeds: positions per second, the share of the
   searches' positions the cache answered, and whether the games were the same move for move
   (they must be: the cache gives back the network's own answers).
2. The network player (``net:MODEL`` as the engine runs it: ONNX Runtime when installed), one
   for each colour, playing a game from two stones at the centre for ``--plies`` moves at
   ``--time-per-move`` seconds, without and with the cache: simulations a move, and the cache's
   share; then with the cache on torch, on ``--device`` (the CPU by default), to compare the two
   runtimes, or on a GPU the engine's choice of the CPU; and with ONNX Runtime's convolutions in
   int8 (``--onnx-precision int8``, calibrated during the first move). The games differ once
   more simulations change a move.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None,
                   help="weights file (default: the package's 15x15 cpu-hour network, whose shape "
                        "the cpu-hour recipe's self-play expects)")
    p.add_argument("--recipe", default="cpu-hour", metavar="NAME",
                   help="self-play as this recipe runs it (default cpu-hour)")
    p.add_argument("--games", type=int, default=None,
                   help="self-play games a run (default: the recipe's games at once)")
    p.add_argument("--repeats", type=int, default=2, help="self-play runs each way (default 2)")
    p.add_argument("--time-per-move", type=float, default=0.5,
                   help="the network player's seconds a move (default 0.5)")
    p.add_argument("--plies", type=int, default=30, help="moves of the player's game (default 30)")
    p.add_argument("--device", default="cpu",
                   help="where the player's torch run goes: cpu (default), cuda, cuda:N, mps or "
                        "auto; self-play and the ONNX runs stay on the CPU")
    p.add_argument("--seed", type=int, default=0)


def run(args) -> dict:
    import torch

    from alphagomoku.bench import UsageError, load_recipe
    from alphagomoku.device import DeviceError, select_device
    from alphagomoku.eval.specs import CPU_HOUR_MODEL
    from alphagomoku.train.selfplay_epoch import worker_spec

    for name in ("repeats", "plies"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1")
    if args.games is not None and args.games < 1:
        raise UsageError("--games must be at least 1")
    if not args.time_per_move > 0:
        raise UsageError("--time-per-move must be a positive number of seconds")
    path = str(args.model or CPU_HOUR_MODEL)
    cfg = load_recipe(args.recipe, device="cpu")
    try:
        torch_device = select_device(args.device)
    except DeviceError as e:
        raise UsageError(str(e)) from None
    model = _load(path)
    cfg = dataclasses.replace(cfg, board_size=model.config.width,
                              vcf_plane_budget=model.config.vcf_plane_budget,
                              model_arch=model.config.arch,
                              model_threat_planes=int(model.config.threat_planes))
    torch.set_num_threads(1)  # as in a CPU self-play worker
    spec = worker_spec(cfg, select_device("cpu"))
    out: dict = {"model": path, "recipe": args.recipe,
                 "board": f"{cfg.board_size}x{cfg.board_size}"}
    out.update(_selfplay(model, spec, args.games or cfg.games_per_task, args.repeats, args.seed))
    out["player_torch_device"] = str(torch_device)
    out.update(_player(path, cfg.game, args.time_per_move, args.plies, args.seed, args.device))
    return out


def _load(path: str):
    from alphagomoku.bench import UsageError
    from alphagomoku.bench.selfplay import trained_model

    model = trained_model(path)
    if model.config.width != model.config.height:
        raise UsageError(f"{path} plays a {model.config.width}x{model.config.height} board; the "
                         "recipes' boards are square")
    return model


def _selfplay(model, spec, games: int, repeats: int, seed: int) -> dict:
    from alphagomoku.nn.inference_backend import make_evaluator
    from alphagomoku.selfplay.game_loop import play_games

    evaluator = make_evaluator(model, "cpu", spec.inference_backend, threads=1,
                               log=lambda line: None)
    play_games(evaluator, spec.game, spec.search, spec.settings, 1, seed + 999)  # warm-up
    speeds: dict[bool, list[float]] = {False: [], True: []}
    hits = misses = 0
    same = True
    for rep in range(repeats):
        moves = {}
        for cached in (False, True):
            settings = dataclasses.replace(
                spec.settings, eval_cache=spec.settings.eval_cache if cached else 0)
            t0 = time.perf_counter()
            records, stats = play_games(evaluator, spec.game, spec.search, settings, games,
                                        seed + rep)
            speeds[cached].append(sum(r.searched for r in records) / (time.perf_counter() - t0))
            moves[cached] = [r.moves.tolist() for r in records]
            if cached:
                hits += stats["cache_hits"]
                misses += stats["cache_misses"]
        same = same and moves[False] == moves[True]
    off, on = (float(np.median(speeds[c])) for c in (False, True))
    return {
        "selfplay_backend": type(evaluator).__name__,
        "selfplay_eval_cache": spec.settings.eval_cache,
        "selfplay_positions_per_second_off": off,
        "selfplay_positions_per_second_on": on,
        "selfplay_speedup": on / off,
        "selfplay_runs_off": speeds[False],
        "selfplay_runs_on": speeds[True],
        "selfplay_hit_share": hits / max(1, hits + misses),
        "selfplay_same_games": same,
    }


def _player(path: str, game, time_per_move: float, plies: int, seed: int,
            torch_device: str = "cpu") -> dict:
    from alphagomoku.eval.players import PLAYER_EVAL_CACHE, NetworkPlayer
    from alphagomoku.game.position import Position
    from alphagomoku.nn.inference_backend import onnx_problem

    out: dict = {"player_time_per_move": time_per_move, "player_eval_cache": PLAYER_EVAL_CACHE}
    runs = [("off", "auto", False, "fp32"), ("on", "auto", True, "fp32"),
            ("on_torch", "torch", True, "fp32")]
    if onnx_problem() == "":
        runs.append(("on_int8", "onnx", True, "int8"))
    for key, backend, cached, precision in runs:
        device = torch_device if backend == "torch" else "cpu"
        # One player a colour, as in a match: each search meets its own earlier searches' work.
        players = [NetworkPlayer(path, time_per_move=time_per_move, device=device, seed=seed + c,
                                 eval_cache=PLAYER_EVAL_CACHE if cached else 0, backend=backend,
                                 precision=precision)
                   for c in (0, 1)]
        if backend == "auto":
            out["player_backend"] = type(players[0].evaluator).__name__
        for player in players:
            player.reset(game)
        centre = (game.height // 2) * game.width + game.width // 2
        position = Position.from_moves([centre, centre + 1], game)
        visits = []
        while not position.is_over and len(visits) < plies:
            player = players[len(position.moves) % 2]
            position.play(player.choose(position))
            visits.append(int(player.last_visits.sum()))
        out[f"player_simulations_a_move_{key}"] = float(np.mean(visits))
        if key == "on":
            hits = sum(p.cache.hits for p in players)
            out["player_hit_share"] = hits / max(1, hits + sum(p.cache.misses for p in players))
    out["player_simulations_ratio"] = (out["player_simulations_a_move_on"]
                                       / out["player_simulations_a_move_off"])
    out["player_backend_ratio"] = (out["player_simulations_a_move_on"]
                                   / out["player_simulations_a_move_on_torch"])
    if "player_simulations_a_move_on_int8" in out:
        out["player_int8_ratio"] = (out["player_simulations_a_move_on_int8"]
                                    / out["player_simulations_a_move_on"])
    return out
