#!/usr/bin/env python
"""Export one epoch's self-play games as .psq files (Piskvork's format), openings included:
``python scripts/export_games.py runs/NAME/games/epoch_000012.npz runs/NAME/psq``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("games", help="an epoch file, runs/NAME/games/epoch_NNNNNN.npz")
    p.add_argument("out", help="folder for the .psq files")
    args = p.parse_args(argv)
    from alphagomoku.read_errors import read_error_reason
    from alphagomoku.train.game_files import export_psq

    try:
        written = export_psq(args.games, args.out)
    except (OSError, KeyError, ValueError) as e:
        print(f"export_games.py: error: {args.games} is not a games file: {read_error_reason(e)}",
              file=sys.stderr)
        return 1
    print(f"wrote {len(written)} games to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
