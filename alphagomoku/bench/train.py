"""What the trainer costs between two rounds of self-play: gradient steps a second, and the replay buffer's save.

The workers wait while the trainer trains and saves, so on a GPU, where self-play is fast, these
are a large part of an epoch. Measured on the recipe's network, device and batch size, with an
untrained network (a step costs the same whatever the weights):

- ``steps``: gradient steps a second with the batches built in the training loop (``0``
  threads, as on a CPU) and on each count of ``--batch-threads``, the counts taking turns for
  ``--repeats`` rounds; then (built in the loop) under each mixed-precision mode of ``--amp``
  (the run's ``train_amp``) beside the first, taking turns too;
- ``save``: the replay buffer at ``--positions`` positions, written as ``np.savez_compressed``
  writes it in the loop (``savez_compressed_s``), and as a run saves it now: copied on the
  trainer's thread (``copy_s``, what the workers wait for) and written on another
  (``write_s``, while they play), with the file sizes.

The positions come from a replay file (``--positions-from``, a run's ``replay.npz``), repeated
up to ``--positions``; without one, eight self-play games with uniform priors make them (which
compiles the search kernels first on a new machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from alphagomoku.bench.selfplay import _positive_int


def _thread_counts(text: str) -> list[int]:
    try:
        counts = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        counts = []
    if not counts or any(c < 0 for c in counts):
        raise argparse.ArgumentTypeError(f"expected thread counts of 0 or more, got {text!r}")
    return counts


def _amp_modes(text: str) -> list[str]:
    from alphagomoku.nn.inference_backend import AMP_MODES  # imports no torch

    modes = [s.strip() for s in text.split(",") if s.strip()]
    if not modes or any(m not in AMP_MODES for m in modes):
        raise argparse.ArgumentTypeError(f"expected modes among {', '.join(AMP_MODES)}, "
                                         f"got {text!r}")
    return list(dict.fromkeys(modes))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recipe", default="gpu-hour", metavar="NAME",
                   help="network, batch size and targets of this recipe (default gpu-hour)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default auto)")
    p.add_argument("--preset", help="model preset (default: the recipe's)")
    p.add_argument("--batch-size", type=_positive_int, help="gradient batch (default: the recipe's)")
    p.add_argument("--batch-threads", type=_thread_counts, default=[4],
                   help="thread counts to time beside 0 (built in the loop) (default 4)")
    p.add_argument("--amp", type=_amp_modes, default=["auto"], metavar="MODES",
                   help="the trainer's mixed precision (train_amp): comma-separated modes among "
                        "auto, on and off, each timed in turn (default auto)")
    p.add_argument("--steps", type=_positive_int, default=100,
                   help="gradient steps timed per count and round (default 100)")
    p.add_argument("--repeats", type=_positive_int, default=2, help="rounds (default 2)")
    p.add_argument("--positions", type=_positive_int, default=300_000,
                   help="positions in the buffer whose save is timed (default 300,000)")
    p.add_argument("--positions-from", type=Path, metavar="REPLAY.npz",
                   help="a replay file whose positions fill the buffer (default: self-play)")
    p.add_argument("--seed", type=int, default=0)


def _config(args, run_dir: str, threads: int, amp: str):
    from alphagomoku.bench import load_recipe

    changes = {k: v for k, v in {"model_preset": args.preset, "batch_size": args.batch_size}.items()
               if v is not None}
    return load_recipe(args.recipe, device=args.device, run_dir=run_dir, seed=args.seed,
                       batch_threads=threads, steps_per_epoch=args.steps, parallel_workers=0,
                       buffer_positions=max(args.positions, 1024), min_buffer_positions=1,
                       ema_decay=0.0, train_amp=amp, **changes)


def _source_positions(args, game):
    from alphagomoku.train.buffer import ReplayBuffer

    if args.positions_from is not None:
        return ReplayBuffer.load(args.positions_from, game, args.positions)[0]
    from alphagomoku.mcts import SearchConfig, uniform_evaluator
    from alphagomoku.selfplay.game_loop import SelfPlaySettings, play_games

    buf = ReplayBuffer(game, args.positions)
    records, _ = play_games(lambda planes, legal: uniform_evaluator(planes, legal), game,
                         SearchConfig(num_simulations=16), SelfPlaySettings(games_at_once=8),
                         num_games=8, seed=args.seed)
    for record in records:
        buf.add_game(record)
    return buf


def _fill(buf, source) -> None:
    """``buf`` full of ``source``'s positions, repeated in order."""
    from alphagomoku.train.buffer import POSITION_FIELDS

    take = np.arange(buf.capacity) % source.size
    for name in POSITION_FIELDS:
        getattr(buf, name)[:] = getattr(source, name)[take]
    buf.reply[-1] = False
    buf.size = buf.total_added = buf.capacity
    buf.next = 0


def _time_save(buf, tmp: str) -> dict:
    from alphagomoku.train.buffer import write_buffer_file

    t0 = time.perf_counter()
    arrays = buf.snapshot(epoch=1)
    copy_s = time.perf_counter() - t0
    old, new = Path(tmp) / "old.npz", Path(tmp) / "new.npz"
    t0 = time.perf_counter()
    np.savez_compressed(old, **arrays)
    old_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_buffer_file(new, arrays)
    write_s = time.perf_counter() - t0
    return {"positions": buf.size, "savez_compressed_s": old_s, "copy_s": copy_s,
            "write_s": write_s, "savez_compressed_mb": os.path.getsize(old) / 1e6,
            "file_mb": os.path.getsize(new) / 1e6}


def run(args) -> dict:
    from alphagomoku.train.loop import Trainer

    counts = [0] + [c for c in args.batch_threads if c != 0]
    # (batch threads, train_amp): each thread count under the first mode, each other mode with
    # the batches built in the loop.
    setups = [(c, args.amp[0]) for c in counts] + [(0, m) for m in args.amp[1:]]
    with tempfile.TemporaryDirectory() as tmp:
        trainers = {s: Trainer(_config(args, f"{tmp}/run-{s[0]}-{s[1]}", *s), log=lambda _: None,
                               progress=False) for s in setups}
        first = trainers[setups[0]]
        source = _source_positions(args, first.game)
        for trainer in trainers.values():
            _fill(trainer.buffer, source)
        out: dict = {"recipe": args.recipe, "device": str(first.device),
                     "preset": first.cfg.model_preset, "batch_size": first.cfg.batch_size,
                     "vcf_plane_budget": first.cfg.vcf_plane_budget, "steps": args.steps,
                     "repeats": args.repeats, "source_positions": int(source.size),
                     # What each mode trains in on this device.
                     "amp": {m: str(trainers[0, m].amp_dtype or "fp32").replace("torch.", "")
                             for m in args.amp}}
        rates: dict[tuple, list[float]] = {s: [] for s in setups}
        # Round 0 warms up (the kernels, the device's first calls) and is not counted.
        for round_ in range(args.repeats + 1):
            for s, trainer in trainers.items():
                row: dict = {}
                trainer._train(row, new_positions=0)
                if round_:
                    rates[s].append(row["train_steps"] / row["train_seconds"])
        for (threads, amp), runs in rates.items():
            key = (f"steps_per_s_threads_{threads}" if amp == args.amp[0]
                   else f"steps_per_s_amp_{amp}")
            out[key] = statistics.median(runs)
            out[f"{key}_runs"] = [round(r, 2) for r in runs]
        best = max(counts[1:], key=lambda c: out[f"steps_per_s_threads_{c}"], default=None)
        if best is not None:
            out["speedup"] = out[f"steps_per_s_threads_{best}"] / out["steps_per_s_threads_0"]
        for m in args.amp[1:]:  # each mode's steps over the first mode's
            out[f"amp_{m}_over_{args.amp[0]}"] = (out[f"steps_per_s_amp_{m}"]
                                                  / out["steps_per_s_threads_0"])
        out["save"] = _time_save(first.buffer, tmp)
    return out
