"""A run's wall clock: the time budget (``time_budget_minutes``) and the snapshots taken at fixed
marks (``snapshot_minutes``).

The clock counts the whole wall time of the run, kernel compilation and worker start-up included
(that is what a user waits for), and it carries over ``--resume``: each checkpoint stores the
seconds spent so far, so a budget is one for the run, not one per session.

Snapshots: with ``snapshot_minutes`` = s, the weights of the first epoch that ends at or past each
mark s, 2s, 3s ... are kept as ``snapshots/min_MMM.MM.pt`` (inference weights, the format a
``net:PATH`` player loads), and ``snapshots/index.json`` lists each with its mark, its epoch and
the minute that epoch ended. An epoch that passes several marks is kept once for each of them,
so every mark has its file. With a time budget, the marks stop at the budget.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from alphagomoku.atomic import atomic_path, atomic_write_text
from alphagomoku.nn.io import save_model

# A mark counts as reached this close below it: k * (M / k) may land an ulp above M.
_SLACK_SECONDS = 1e-6


class WallClock:
    """Seconds since the run started, counting ``spent_seconds`` from earlier sessions."""

    def __init__(self, spent_seconds: float = 0.0):
        self._start = time.perf_counter() - spent_seconds

    def seconds(self) -> float:
        return time.perf_counter() - self._start


def budget_spent(budget_minutes: float, seconds: float) -> bool:
    return budget_minutes > 0 and seconds + _SLACK_SECONDS >= budget_minutes * 60


def snapshot_name(mark_minutes: float) -> str:
    return f"min_{mark_minutes:06.2f}.pt"


def read_index(run_dir: str | Path) -> list[dict]:
    """The snapshots of a run, oldest mark first ([] when there are none)."""
    path = Path(run_dir) / "snapshots" / "index.json"
    if not path.exists():
        return []
    return json.loads(path.read_text())["snapshots"]


class Snapshots:
    """Keeps the weights at every ``every_minutes`` of wall time; see the module's text."""

    def __init__(self, run_dir: str | Path, every_minutes: float, last_epoch: int = 0,
                 until_minutes: float = 0.0):
        if every_minutes <= 0:
            raise ValueError(f"snapshots need a positive interval, got {every_minutes!r} minutes")
        self.dir = Path(run_dir) / "snapshots"
        self.every = float(every_minutes)
        # The last epoch of a budgeted run ends past the budget: marks after it are not the run's.
        self.until = float(until_minutes)
        # On --resume, snapshots of epochs after the checkpoint are dropped: they will be run again.
        self.entries = [e for e in read_index(run_dir) if e["epoch"] <= last_epoch]

    def due(self, seconds: float) -> list[float]:
        """The marks (in minutes) reached by ``seconds`` that have no snapshot yet."""
        last = self.entries[-1]["mark_minutes"] if self.entries else 0.0
        k = int(last / self.every + 1e-9) + 1
        marks = []
        while k * self.every * 60 <= seconds + _SLACK_SECONDS:
            if self.until > 0 and (k * self.every - self.until) * 60 > _SLACK_SECONDS:
                break
            marks.append(k * self.every)
            k += 1
        return marks

    def take(self, epoch: int, seconds: float, model) -> list[dict]:
        """Save ``model`` (the weights at the end of ``epoch``) for each mark just reached."""
        new = []
        for mark in self.due(seconds):
            path = self.dir / snapshot_name(mark)
            if new:
                with atomic_path(path) as tmp:
                    shutil.copyfile(self.dir / new[0]["file"], tmp)
            else:
                save_model(path, model)
            entry = {"mark_minutes": round(mark, 6), "epoch": int(epoch),
                     "minutes": round(seconds / 60, 4), "file": path.name}
            self.entries.append(entry)
            new.append(entry)
        if new:
            atomic_write_text(self.dir / "index.json",
                              json.dumps({"every_minutes": self.every, "snapshots": self.entries},
                                         indent=2) + "\n")
        return new
