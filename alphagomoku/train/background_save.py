"""A file written on a thread while the run goes on.

The replay buffer is the largest thing a run writes: at a GPU recipe's million positions,
compressing it takes tens of seconds, which the workers would spend waiting for their next
epoch. Its contents are copied on the trainer's thread (a second or so) and written on this one
while self-play goes on. The next write, and the end of the run, wait for the one before, so
only one is ever in flight and the last one is whole when the run returns. The write itself is
whole or absent (``atomic_path``), and a resumed run whose buffer is an epoch older than its
checkpoint says so and goes on with it.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable


class SaveError(OSError):
    """A file the run writes on the save thread could not be written."""


class BackgroundSave:
    """``submit(what, write)`` runs ``write`` on a thread after the one before has ended;
    ``wait()`` waits for it, and raises an error of it as :class:`SaveError` naming ``what``."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._what = ""

    def submit(self, what: str, write: Callable[[], None]) -> None:
        self.wait()

        def run() -> None:
            try:
                write()
            except BaseException as e:  # noqa: BLE001 - handed to the trainer's thread by wait()
                self._error = e

        self._what = what
        # Not a daemon: an interpreter that exits meanwhile still lets the file finish.
        self._thread = threading.Thread(target=run, name=f"save {what}")
        self._thread.start()

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise SaveError(f"writing {self._what} failed: {error}") from error

    def finish(self, log: Callable[[str], None]) -> None:
        """:meth:`wait` in a ``finally`` at the end of a run: an error of the write is raised,
        or only logged when the run is already ending on an error of its own."""
        ending_on_error = sys.exc_info()[0] is not None
        try:
            self.wait()
        except SaveError as e:
            if not ending_on_error:
                raise
            log(f"warning: {e}")
