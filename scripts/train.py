#!/usr/bin/env python
"""Train a Gomoku model from zero: ``python scripts/train.py --parallel-workers 2``.

The same script runs under ``torchrun --nproc-per-node G scripts/train.py ...`` (docs/scaling.md).
See ``python scripts/train.py --help``; the logic lives in :mod:`alphagomoku.train.cli`.
"""

import os
import sys

from alphagomoku.train.cli import main

if __name__ == "__main__":
    if "TORCHELASTIC_RUN_ID" in os.environ:
        # Under torchrun: an exception that escapes is written where the launcher finds it, so
        # its summary shows the failing rank's traceback as the root cause.
        from torch.distributed.elastic.multiprocessing.errors import record

        main = record(main)
    sys.exit(main())
