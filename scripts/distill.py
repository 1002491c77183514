#!/usr/bin/env python
"""Teach a network another network's play on a run's stored positions (distillation).

The student keeps its own shape: for example the all-rules network learns the 15x15 cpu-hour
network's policy and value on the 15x15 positions of an all-rules run, and keeps learning its own
targets on the 20x20 ones. Self-play then goes on from the result:

    python scripts/distill.py --teacher alphagomoku/assets/cpu-hour.pt \\
        --student alphagomoku/assets/default.pt --positions runs/all-rules --out runs/distilled.pt
    python scripts/train.py --recipe kata-all-rules --model-blocks 4 \\
        --init-weights runs/distilled.pt --run-dir runs/next
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import MISSING, fields

from alphagomoku.train.distill import DistillConfig, Distiller

_HELP = {
    "teacher": "model file whose play the student learns",
    "student": "model file the student starts from: its shape and weights (a run's "
               "weights/initial.pt for a student from scratch)",
    "positions": "a run directory whose replay buffers (replay*.npz) hold the positions",
    "out": "the student's model file, written every --save-every steps and at the end",
    "steps": "gradient steps",
    "batch_size": "positions a step",
    "lr": "Adam's learning rate at the start; it falls linearly to a tenth of it",
    "weight_decay": "L2 on the weights",
    "teacher_share": "share of each target from the teacher (the rest: the buffer's own)",
    "value_q_weight": "the buffer's value target: (1 - this) result + this search value",
    "soft_policy_weight": "a kata student's soft-policy head, on the same policy targets",
    "short_value_weight": "a kata student's short-term value head, on the buffer's targets",
    "held_out": "the newest positions of each buffer kept out of training and measured on",
    "save_every": "steps between writes of --out",
    "seed": "seed of the batches and symmetries",
}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(DistillConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.default is MISSING:
            p.add_argument(flag, required=True, help=_HELP[f.name])
        else:
            p.add_argument(flag, type=type(f.default), default=f.default,
                           help=f"{_HELP[f.name]} (default {f.default})")
    p.add_argument("--json", metavar="FILE", help="also write the report (held-out figures before "
                                                  "and after) to FILE")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    values = {f.name: getattr(args, f.name) for f in fields(DistillConfig)}
    try:
        distiller = Distiller(DistillConfig(**values), show_progress=not args.no_progress)
        report = distiller.run()
    except ValueError as e:   # also a bad model or buffer file
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: {args.out} holds the student as last saved", file=sys.stderr)
        return 130
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
