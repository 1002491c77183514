#!/usr/bin/env python
"""Seconds until ``python scripts/play.py`` shows its board and until ``pbrain-alphagomoku``
answers its first ``START 15``, each from a new process, as a user starting either meets them.

    python tools/first_run.py [--repeats N]

Run it after ``python -m alphagomoku.compile_kernels`` (``make setup``) to time a warm kernel
cache; with ``NUMBA_CACHE_DIR`` pointing at an empty directory it times a cold one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def seconds_until(cmd: list[str], send: str, ready) -> tuple[float | None, str]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdin.write(send)
    proc.stdin.flush()
    took = None
    for line in proc.stdout:
        if ready(line):
            took = time.perf_counter() - start
            break
    proc.kill()
    proc.wait()
    return took, proc.stderr.read().strip()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="runs of each (default 3)")
    args = p.parse_args(argv)
    board = [sys.executable, "scripts/play.py"]
    engine = [sys.executable, "-m", "alphagomoku.engine"]
    for _ in range(args.repeats):
        # The board's header row is the first line a user sees of it.
        took, err = seconds_until(board, "", lambda line: line.split()[:3] == ["a", "b", "c"])
        print(f"play.py board after {took:.1f} s" if took else f"play.py showed no board: {err}")
        took, err = seconds_until(engine, "START 15\n", lambda line: line.strip() == "OK")
        print(f"engine OK after {took:.1f} s" if took else f"the engine did not answer OK: {err}")
        if err:
            print(f"  stderr: {err.splitlines()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
