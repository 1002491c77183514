"""Where each thread of a running process is, on request (``kill -USR1 PID``).

``faulthandler.register(SIGUSR1)`` does this in C inside the signal handler, walking the
interpreter's thread states without the GIL. On Python 3.11 that walk segfaults when a thread
starts or ends during it (CPython gh-116008): the signal meant to diagnose a trainer kills it
(exit -11), and a few hundred signals to a process that starts threads crash it every time. This handler is an ordinary Python signal handler: it runs in the main thread with
the GIL held, so no thread state can go away while it reads them.

The price is that it runs when the main thread next executes Python code. A main thread stuck
inside one native call prints nothing until the call returns; py-spy's ``dump`` reads such a
process from outside (docs/troubleshooting.md).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback


def format_threads(header: str = "where each thread is") -> str:
    """Every thread's Python stack, the main thread first, oldest call first in each."""
    names = {t.ident: t.name for t in threading.enumerate()}
    main = threading.main_thread().ident
    frames = sorted(sys._current_frames().items(), key=lambda item: item[0] != main)
    parts = [f"--- {header} (pid {os.getpid()}, {len(frames)} threads) ---"]
    for ident, frame in frames:
        parts.append(f"Thread {names.get(ident, '(not started by threading)')} [{ident:#x}] "
                     "(most recent call last):")
        parts.append("".join(traceback.format_stack(frame)).rstrip("\n"))
    return "\n".join(parts) + "\n"


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def install(signum: int, fd: int) -> object:
    """Print :func:`format_threads` to the file descriptor ``fd`` whenever ``signum`` arrives;
    returns the handler it replaces.

    The text goes to the descriptor with ``os.write``, not through ``sys.stderr``: the signal
    may arrive while the main thread is inside a write to that stream, and a second write from
    the handler would raise there. Nothing the handler meets may end the run it inspects."""
    def dump(_signum, _frame):
        try:
            _write_all(fd, format_threads().encode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - a diagnostic must never stop what it looks at
            pass

    return signal.signal(signum, dump)
