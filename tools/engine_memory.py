"""The engine's memory over real games: what it holds after START and at its peak.

    python tools/engine_memory.py [--max-memory MB] [--plies N] [--turn-ms MS]

Plays ``pbrain-alphagomoku`` (the shipped model, everything on) against a second copy of it
(no VCT, no cache: a quicker opponent) on 15x15, starting a new game when one ends, and reads
the first engine's resident memory from /proc (Linux only). With ``--max-memory`` the first
engine is sent ``INFO max_memory`` after START, and its MESSAGE about the limit is printed. The
seconds each of its moves took are printed too: with a long ``--turn-ms`` they show where its
search tree fills before the time is up.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path


class Engine:
    def __init__(self, *args: str):
        exe = shutil.which("pbrain-alphagomoku") or str(Path(sys.executable).parent
                                                         / "pbrain-alphagomoku")
        self.proc = subprocess.Popen([exe, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def answer(self) -> str:
        while True:
            line = self.proc.stdout.readline().strip()
            if not line:
                raise SystemExit(f"engine_memory: the engine exited ({self.proc.wait()})")
            if not line.startswith("MESSAGE"):
                return line
            if "max_memory" in line:
                print(line)

    def megabytes(self, key: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) // 1024
        raise SystemExit(f"engine_memory: no {key} in /proc: Linux only")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max-memory", type=int, default=0, metavar="MB",
                   help="INFO max_memory for the measured engine (default 0: no limit)")
    p.add_argument("--plies", type=int, default=60, help="moves of both engines (default 60)")
    p.add_argument("--turn-ms", type=int, default=1000, help="INFO timeout_turn (default 1000)")
    args = p.parse_args()
    me, other = Engine(), Engine("--no-vct", "--eval-cache", "0")
    for engine in (me, other):
        engine.send("START 15")
        engine.answer()
        engine.send(f"INFO timeout_turn {args.turn_ms}")
    print(f"after START: {me.megabytes('VmRSS')} MB resident")
    if args.max_memory:
        me.send(f"INFO max_memory {args.max_memory * 2**20}")
    plies = games = 0
    seconds = []
    me.send("BEGIN")
    while plies < args.plies:
        start = time.monotonic()
        move = me.answer()
        seconds.append(time.monotonic() - start)
        other.send(f"TURN {move}")
        reply = other.answer()
        plies += 1
        if reply.startswith(("ERROR", "UNKNOWN")):  # the game is over: the next one
            games += 1
            for engine in (me, other):
                engine.send("RESTART")
                engine.answer()
            me.send("BEGIN")
            continue
        plies += 1
        me.send(f"TURN {reply}")
    print(f"{plies} plies, {games} games ended: peak {me.megabytes('VmHWM')} MB resident, "
          f"{me.megabytes('VmRSS')} MB now")
    print("its moves took " + ", ".join(f"{t:.1f}" for t in seconds) + " s")
    for engine in (me, other):
        engine.send("END")
        engine.proc.wait()


if __name__ == "__main__":
    main()
