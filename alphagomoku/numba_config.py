"""Numba flags and the kernel cache, set in one place so every kernel compiles the same way.

``cache=True`` writes compiled kernels to disk, so spawned self-play workers load them instead
of compiling again. fastmath stays off: the search must give the same result in a worker as in
a test.

Numba keys a cached kernel on its own source file only, not on the files of the kernels it
calls, so an edited game kernel could be run stale from an MCTS kernel's cache. The cache
therefore lives in a directory named after a digest of every source file that holds kernels:
any edit, or another version of the package, starts a fresh cache. The directory is under
``NUMBA_CACHE_DIR`` when that is set, else under the user's cache directory
(``~/.cache/alphagomoku/numba``): one place for every entry point (make, the scripts, the engine,
the notebook, spawned workers), which ``make setup`` fills once (``python -m
alphagomoku.compile_kernels``).

A kernel missing from the cache compiles for up to a minute in all with no output of its own, so
the first such compilation in a process prints one line to stderr (stdout may be the Gomocup
protocol) saying so.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numba
from numba.core import event

JIT = {"cache": True, "nogil": True}

_PACKAGE = Path(__file__).resolve().parent


def kernel_sources_digest() -> str:
    digest = hashlib.sha256(numba.__version__.encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        data = path.read_bytes()
        if b"njit" in data:
            digest.update(path.relative_to(_PACKAGE).as_posix().encode())
            digest.update(data)
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("NUMBA_CACHE_DIR")
    if not base:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "alphagomoku" / "numba"
    return Path(base) / f"kernels-{kernel_sources_digest()}"


# Read by Numba when each kernel is decorated, so it must be set before any kernel module loads;
# every kernel module imports JIT from here first.
numba.config.CACHE_DIR = str(cache_dir())


def compiled_entry(kernel, args: tuple):
    """``kernel``'s compiled function for exactly these argument types, called without Numba's
    dispatch: working out the types of a forest's tuples of arrays took about three quarters of
    each gather's and apply's call overhead (40 us a call here, 13 us without). Only for
    arguments whose types never change (a forest's or a cache table's own arrays); ``kernel`` itself when Numba
    does not expose the entry point."""
    try:
        sig = tuple(kernel.typeof_pyval(a) for a in args)
        return kernel.overloads[sig].entry_point
    except Exception:  # noqa: BLE001 - any other Numba: the ordinary dispatch
        return kernel


class EntryPoints:
    """Calls kernels past Numba's type dispatch: ``entries(kernel, *args)`` runs ``kernel``
    through the dispatcher the first time and through :func:`compiled_entry` afterwards. One
    instance per set of arguments whose types never change (a forest's arrays, the cache
    tables')."""

    def __init__(self) -> None:
        self._entries: dict = {}

    def __call__(self, kernel, *args):
        entry = self._entries.get(kernel)
        if entry is None:
            result = kernel(*args)
            self._entries[kernel] = compiled_entry(kernel, args)
            return result
        return entry(*args)


COLD_COMPILE_NOTICE = "compiling the search kernels, about a minute, once"


class _ColdCompileNotice(event.Listener):
    """Prints COLD_COMPILE_NOTICE at the first compilation of one of the package's kernels.

    Numba raises the "numba:compile" event only when a kernel is not found in the cache, so a
    warm run prints nothing."""

    def __init__(self) -> None:
        self.said = False

    def on_start(self, ev) -> None:
        if self.said:
            return
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.startswith("alphagomoku."):
            self.said = True
            print(COLD_COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, ev) -> None:
        pass


event.register("numba:compile", _ColdCompileNotice())
