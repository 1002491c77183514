#!/usr/bin/env python
"""Check the devices alphagomoku can use here: ``python scripts/check_device.py [--device D] [--json]``.

Lists CUDA/MPS/CPU and library versions, computes on every device, runs a forward pass of each
model preset, checks that a spawned worker sees the same device, and recommends workers, preset
and batch size. Exits 1 when any check fails (a missing requested device included).
"""

from __future__ import annotations

import sys

from alphagomoku.device_check import main

if __name__ == "__main__":
    sys.exit(main())
