#!/usr/bin/env python
"""Train a Gomoku model from zero: ``python scripts/train.py --parallel-workers 2``.

See ``python scripts/train.py --help``; the logic lives in :mod:`alphagomoku.train.cli`.
"""

import sys

from alphagomoku.train.cli import main

if __name__ == "__main__":
    sys.exit(main())
