"""Worker processes that leave with their parent.

A parent killed outright (SIGKILL, the out-of-memory killer, or SIGTERM where no handler is
installed) runs none of its clean-up, so the pool's workers it spawned would go on playing, and
holding cores, with nobody to report to. Each worker watches its parent instead and exits when
it is gone.
"""

from __future__ import annotations

import os
import threading
import time


def exit_with_parent(poll_s: float = 1.0) -> None:
    """In a worker: exit (status 1) within ``poll_s`` seconds of the parent's end, seen as the
    parent process id changing (an orphan is adopted by another process)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
