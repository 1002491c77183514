#!/usr/bin/env python
"""Export inference weights from a training checkpoint:
``python scripts/export_model.py runs/NAME/checkpoints/latest.pt runs/NAME/model.pt``.

The weights file holds only the network (config and weights), a fraction of a checkpoint's size;
play.py, evaluate.py and pbrain-alphagomoku read either, so exporting is for shipping a model.
Given several checkpoints or model files of one network shape, it writes the average of their
weights (for example a run's last epochs, or runs that started from one network).
"""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint", nargs="+",
                   help="a training checkpoint (checkpoints/latest.pt or epoch_N.pt); with "
                        "several (model files too), the average of their weights")
    p.add_argument("out", help="where to write the weights file")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from alphagomoku.nn.io import CheckpointError
    from alphagomoku.train.checkpoint import export_average, export_model

    try:
        if len(args.checkpoint) == 1:
            path = export_model(args.checkpoint[0], args.out)
        else:
            path = export_average(args.checkpoint, args.out)
    except CheckpointError as e:
        print(f"export_model.py: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
