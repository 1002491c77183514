"""Progress that reads well both in a terminal and in a log file.

In a terminal, :func:`progress` is a tqdm bar. When the stream is not a terminal (CI, ``nohup``,
``make train > log``, a notebook cell that captures a subprocess), tqdm's redraws would become a
wall of repeated bars, so it prints a plain line instead: at most one every ``interval`` seconds
(``ALPHAGOMOKU_PROGRESS_SECONDS``, default 10) while the work goes on, and one when it ends,
each with the count, the elapsed time, the rate and the latest figures the caller set.

Only the part of tqdm's interface the project uses is offered: ``update``, ``set_postfix``,
``set_postfix_str``, ``close``, iteration and ``with``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Iterable, TextIO

DEFAULT_INTERVAL = 10.0
INTERVAL_VARIABLE = "ALPHAGOMOKU_PROGRESS_SECONDS"


def default_interval() -> float:
    """Seconds between plain progress lines: ``$ALPHAGOMOKU_PROGRESS_SECONDS`` or 10."""
    text = os.environ.get(INTERVAL_VARIABLE, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{INTERVAL_VARIABLE} must be a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise ValueError(f"{INTERVAL_VARIABLE} must be 0 or more seconds, got {text!r}")
    return value


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress(iterable: Iterable | None = None, *, total: int | None = None, desc: str = "",
             unit: str = "it", disable: bool = False, leave: bool = True,
             interval: float | None = None, stream: TextIO | None = None):
    """A progress display for ``total`` units (or over ``iterable``): a tqdm bar when ``stream``
    (default stderr) is a terminal, else :class:`LineProgress`; nothing when ``disable``."""
    stream = sys.stderr if stream is None else stream
    if disable:
        return _Silent(iterable)
    if is_terminal(stream):
        from tqdm import tqdm

        return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, file=stream)
    return LineProgress(iterable, total=total, desc=desc, unit=unit,
                        interval=default_interval() if interval is None else interval, stream=stream)


class LineProgress:
    """Plain progress lines for a log: ``desc: 12/32 games, 4.1 s, 2.9 games/s, key=value``."""

    def __init__(self, iterable: Iterable | None = None, total: int | None = None, desc: str = "",
                 unit: str = "it", interval: float = DEFAULT_INTERVAL, stream: TextIO | None = None,
                 clock=time.monotonic):
        if total is None and iterable is not None:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
        self.iterable = iterable
        self.total = total
        self.desc = desc
        self.unit = unit
        self.interval = interval
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.n = 0
        self.postfix = ""
        self.start = clock()
        self.last_line = self.start
        self.closed = False

    def __iter__(self):
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> "LineProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        now = self.clock()
        if now - self.last_line >= self.interval:
            self.last_line = now
            self._write(now)

    def set_postfix(self, ordered_dict: dict | None = None, refresh: bool = True, **kwargs) -> None:
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = str(s)

    def close(self) -> None:
        """Print the final line (once)."""
        if not self.closed:
            self.closed = True
            self._write(self.clock(), final=True)

    def line(self, now: float | None = None, final: bool = False) -> str:
        now = self.clock() if now is None else now
        elapsed = max(now - self.start, 0.0)
        units = self.unit if (self.n if self.total is None else self.total) == 1 else _plural(self.unit)
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        parts = [f"{count} {units}" + (" done" if final else ""), f"{elapsed:.1f} s"]
        if elapsed > 0 and self.n:
            parts.append(f"{self.n / elapsed:.3g} {_plural(self.unit)}/s")
        if self.postfix:
            parts.append(self.postfix)
        head = f"{self.desc}: " if self.desc else ""
        return head + ", ".join(parts)

    def _write(self, now: float, final: bool = False) -> None:
        try:
            self.stream.write(self.line(now, final) + "\n")
            self.stream.flush()
        except ValueError:  # the stream was closed under us (interpreter exit): nothing to show
            pass


def _plural(unit: str) -> str:
    return unit if unit.endswith("s") or "/" in unit else unit + "s"


class _Silent:
    """The disabled display: iterates and accepts every call, shows nothing."""

    def __init__(self, iterable=None):
        self.iterable = iterable
        self.n = 0

    def __iter__(self):
        return iter(self.iterable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, *args, **kwargs) -> None:
        pass

    def set_postfix_str(self, *args, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass
