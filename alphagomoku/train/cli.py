"""``scripts/train.py``: the command line of a training run.

Only the config module is imported at the top: torch loads inside :func:`main`, after the
arguments are checked, so ``--help`` and a bad flag answer at once, and spawned self-play workers
(which import the main script's module) do not import torch before they pick their GPU.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import sys
from dataclasses import fields
from pathlib import Path

from alphagomoku import thread_dump
from alphagomoku.progress import is_terminal
from alphagomoku.train.config import ConfigError, TrainConfig

_HELP = {
    "parallel_workers": "self-play worker processes (spawned); 0 plays in the main process, for debugging",
    "model_preset": "network size: tiny (CI), compact, small, medium, large",
    "model_blocks": "residual blocks in place of the preset's (0 keeps the preset's); with "
                    "--init-weights from a shallower network without batch norm, the added "
                    "blocks start as the identity, so the network starts where that one was",
    "model_channels": "channels in place of the preset's (0 keeps the preset's); with "
                      "--init-weights from a narrower network without batch norm, the network "
                      "starts by computing what that one did",
    "model_arch": "network shape: az (AlphaGo Zero's dense heads, one board size) or kata "
                  "(KataGo's: global pooling, convolutional policy head, plays every board size "
                  "and reads the rule)",
    "model_global_pooling": "kata networks: 1 gives some tower blocks and the policy head KataGo's "
                            "pooled branch, 0 leaves it out (the value head pools either way)",
    "model_batch_norm": "1 puts a batch norm after each convolution; 0 leaves them out, as a run "
                        "of several board sizes or rules needs (docs/training.md)",
    "model_threat_planes": "1 gives the network six more inputs: for each empty point, whether a "
                           "stone there makes a five, a four or a three, for each side; 0 none",
    "future_weight": "kata networks: loss weight of a head that learns each point's stone 8 plies "
                     "later (KataGo's futurepos); 0 leaves the head out",
    "variant_mix": "instead of --board-sizes and --rules, whose every pair is played: the pairs "
                   "themselves, SIZE/RULE[:WEIGHT], e.g. 15/freestyle:3,20/freestyle,15/renju",
    "device": "auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps",
    "inference_backend": "CPU self-play workers' network runtime: auto (ONNX Runtime when installed, "
                         "else torch), torch, or onnx (an error if it cannot load); GPUs use torch",
    "inference_amp": "self-play workers' mixed precision with torch: auto (bf16, or fp16, on CUDA; "
                     "fp32 elsewhere), on, or off",
    "onnx_precision": "CPU self-play workers on ONNX Runtime: fp32, or int8 (the convolutions in "
                      "int8, their ranges calibrated on the last positions the worker read; fp32 "
                      "until it has read 256)",
    "train_amp": "the trainer's mixed precision: auto (bf16, or fp16, on CUDA; fp32 elsewhere), on "
                 "(bf16 on a CPU too: faster where it has AMX), or off",
    "vcf_plane_budget": "give the network two more inputs, 'side to move has a VCF' and 'opponent "
                        "has one', proved by the solver within this many nodes (0: none)",
    "selfplay_games": "self-play games per epoch",
    "games_per_task": "games a self-play task plays with one set of weights; their leaves form "
                      "one network batch, unless --games-at-once is smaller",
    "cuda_graphs": "GPU self-play workers: auto (the forward pass as CUDA graphs at fixed batch "
                   "sizes, eager where capture fails) or off (eager)",
    "selfplay_groups": "batches in flight per self-play worker: its games split into this many "
                       "groups, one searching while another's batch is on the device (0: auto, "
                       "2 on CUDA, 1 on a CPU, where the network call holds the core)",
    "games_at_once": "of a task's games, how many are played at once (0: all); a finished game's "
                     "place goes to the next, so the network batches stay full until the task's "
                     "last games (on a GPU a call costs about the same whatever its size)",
    "batch_threads": "threads that build the next gradient batches while a step runs (-1: auto, "
                     "4 on a GPU, where a step is faster than one core makes its batch; 0: built "
                     "in the training loop, as on a CPU)",
    "simulations": "MCTS simulations per move in self-play (with --simulations-start: at the "
                   "run's end)",
    "simulations_start": "progressive simulation: self-play's simulations a move at the run's "
                         "start, growing geometrically to --simulations by its end (of "
                         "--time-budget-minutes, else of --epochs); an early network's values "
                         "carry little, so its games are made cheaper and more of them (0: "
                         "--simulations throughout)",
    "init_weights": "start from this model file's weights (a shipped model, a snapshot or a "
                    "checkpoint of the same network shape) instead of random ones: a new run "
                    "that goes on from another; the optimiser and the replay buffer start empty. "
                    "A network may grow (more blocks or channels without batch norm, or the "
                    "threat planes), starting from the smaller one's play",
    "teacher": "a model file whose policy and value make part of every training target on the "
               "boards it plays (--teacher-share at the start, none once --teacher-fade of the "
               "run is done): a network of another shape, such as one taught by "
               "scripts/distill.py and started with --init-weights, keeps near its teacher "
               "while self-play's targets take over",
    "teacher_share": "with --teacher: its share of each policy and value target at the start "
                     "(the rest from self-play's search and results)",
    "teacher_fade": "with --teacher: the share of the run (of --time-budget-minutes, else of "
                    "--epochs) after which the teacher's share has fallen linearly to none",
    "eval_cache": "network answers each self-play task keeps, so that a position its searches meet "
                  "again is not evaluated twice (0: off); about 4 x games at once x simulations "
                  "catches nearly all repeats",
    "gumbel_interior": "with --search gumbel, how nodes below the root choose: puct, or gumbel (the "
                       "paper's deterministic rule: argmax improved policy minus visit share)",
    "epochs": "train until this epoch (with --resume: the total, not the number of new ones)",
    "run_dir": "where config, checkpoints, replay buffer, metrics and games go",
    "worker_timeout": "seconds without progress from any worker before one counts as hung (0: 180)",
    "eval_every": "epochs between arena matches against the previous model and pure MCTS (0: never)",
    "time_budget_minutes": "stop after the epoch in progress once the run has used this many minutes "
                           "of wall time (0: no budget; with a budget the cosine schedule spans it)",
    "snapshot_minutes": "keep the weights of the first epoch ending after every such many minutes "
                        "in snapshots/ (0: none)",
}

_METAVAR = {"run_dir": "DIR", "device": "DEVICE", "inference_backend": "BACKEND",
            "inference_amp": "MODE", "train_amp": "MODE", "onnx_precision": "PRECISION", "rule": "RULE", "model_preset": "PRESET",
            "model_arch": "ARCH", "lr_schedule": "SCHEDULE", "gumbel_interior": "RULE",
            "vcf_plane_budget": "NODES", "eval_cache": "POSITIONS", "teacher": "MODEL"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="train.py",
        description="AlphaZero-style training: parallel self-play, then gradient steps, every epoch.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="FILE", help="JSON file of settings (flags override it)")
    source.add_argument("--recipe", metavar="NAME",
                        help="a named recipe: the settings in configs/NAME.json (flags override it)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --run-dir from checkpoints/latest.pt")
    p.add_argument("--no-progress", action="store_true", help="no progress bars (logs only)")
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        kind = {"int": int, "float": float, "str": str}[str(f.type)]
        p.add_argument(
            "--" + f.name.replace("_", "-"), dest=f.name, type=kind, default=None,
            metavar=_METAVAR.get(f.name, {"int": "N", "float": "X", "str": "NAME"}[str(f.type)]),
            help=f"{_HELP.get(f.name, f.name.replace('_', ' '))} (default {getattr(defaults, f.name)!r})",
        )
    return p


def resolve_config(args: argparse.Namespace) -> TrainConfig:
    """Defaults, then the run's saved config (with --resume) or --config, then explicit flags."""
    flags = {f.name: getattr(args, f.name) for f in fields(TrainConfig) if getattr(args, f.name) is not None}
    base: dict = {}
    if args.resume:
        run_dir = Path(flags.get("run_dir") or TrainConfig().run_dir)
        saved = run_dir / "config.json"
        if saved.exists():
            base = json.loads(saved.read_text())
    config = args.config
    if getattr(args, "recipe", None):
        from alphagomoku.train.recipes import recipe_path

        config = recipe_path(args.recipe)
    if config:
        return TrainConfig.from_file(config, **{**base, **flags})
    return TrainConfig.from_dict({**base, **flags})


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not is_terminal(sys.stdout) and hasattr(sys.stdout, "reconfigure"):
        # Redirected to a file, stdout would hold its lines in a buffer while progress and the
        # workers write to stderr at once: flush per line, so the log reads in order.
        sys.stdout.reconfigure(line_buffering=True)
    try:
        cfg = resolve_config(args)
    except ConfigError as e:
        print(f"train.py: error: {e}", file=sys.stderr)
        return 2
    # Under torchrun every rank runs this; one copy of the configuration is enough, and any error
    # says which rank it comes from.
    rank = os.environ.get("RANK") if "WORLD_SIZE" in os.environ else None
    where = f"[rank {rank}] " if rank is not None else ""
    if rank in (None, "0"):
        print("configuration:\n" + json.dumps(cfg.to_dict(), indent=2), flush=True)

    import torch

    from alphagomoku.device import DeviceError
    from alphagomoku.nn.io import CheckpointError
    from alphagomoku.selfplay.pool import SelfPlayError
    from alphagomoku.train.background_save import SaveError
    from alphagomoku.train.distributed import DistributedError
    from alphagomoku.train.loop import Trainer

    # A scheduler or `kill` sends SIGTERM: stop as cleanly as on Ctrl-C (workers stopped, the
    # last checkpoint whole) instead of dying mid-step with the workers left to notice alone.
    received = {"signal": signal.SIGINT, "pending": False}

    def stop(signum, frame):
        received["signal"] = signum
        received["pending"] = True
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    previous_int = signal.signal(signal.SIGINT, stop)
    # Where each thread is, on the process's own stderr (in-process under a captured
    # sys.stderr there is no file descriptor to write to): for a run that seems hung,
    # `kill -USR1 PID` prints it and the run goes on (thread_dump says why not faulthandler);
    # a native crash (a segfault, or an abort while the interpreter shuts down) prints it
    # instead of leaving only an exit status.
    previous_usr1 = None
    try:
        if hasattr(signal, "SIGUSR1"):
            previous_usr1 = thread_dump.install(signal.SIGUSR1, sys.__stderr__.fileno())
        if not faulthandler.is_enabled():
            faulthandler.enable(file=sys.__stderr__, all_threads=True)
    except (AttributeError, ValueError, OSError):
        pass  # no stderr at all (pythonw): nothing to print to

    def train() -> Trainer:
        trainer = Trainer(cfg, resume=args.resume, progress=not args.no_progress)
        trainer.stop_requested = lambda: received["pending"]
        try:
            trainer.run()
        except Exception as e:
            if received["pending"]:
                # The signal's KeyboardInterrupt can come out as another error: raised in a class
                # body during an import (matplotlib's, at the first plot), it is a RuntimeError
                # from __set_name__.
                raise KeyboardInterrupt from e
            raise
        return trainer

    try:
        trainer = train()
    except KeyboardInterrupt:
        print(f"{where}train.py: interrupted ({signal.Signals(received['signal']).name})", file=sys.stderr)
        return 128 + int(received["signal"])
    except (ConfigError, DeviceError, CheckpointError, SelfPlayError, DistributedError) as e:
        print(f"{where}train.py: error: {str(e).removeprefix(where)}", file=sys.stderr)
        return 1
    except SaveError as e:
        print(f"{where}train.py: error: {e}; the last checkpoint is whole: make room in "
              f"{cfg.run_path}, then run again with --resume", file=sys.stderr)
        return 1
    except torch.OutOfMemoryError as e:
        print(f"{where}train.py: error: out of memory during training ({str(e).splitlines()[0]}); the last "
              "checkpoint is whole: lower --batch-size (or --games-per-task, or use a smaller "
              "--model-preset), then run again with --resume", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        if previous_usr1 is not None:
            signal.signal(signal.SIGUSR1, previous_usr1)
    if rank in (None, "0"):
        # The epoch reached, not --epochs: a time budget may have ended the run sooner.
        print(f"done: {trainer.epoch} epochs; checkpoints in {cfg.run_path / 'checkpoints'}")
    return 0
