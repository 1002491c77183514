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
    code = main()
    if code in (130, 143):
        # Interrupted (SIGINT, SIGTERM): the checkpoint, the metrics and the message are written
        # and the workers stopped. Native threads (ONNX Runtime's, torch's) may still be alive,
        # and the interpreter's shutdown around them has aborted (exit -6, "PyThreadState_Get
        # ... finalizing") instead of returning the signal's status, so leave without it. Only
        # multiprocessing's finalizers run first: they unlink the pool's semaphores, which the
        # resource tracker would otherwise report as leaked after the interrupt's message.
        from multiprocessing import util

        run_finalizers = getattr(util, "_run_finalizers", None)  # private: absent, skip it
        if run_finalizers is not None:
            run_finalizers(0)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
