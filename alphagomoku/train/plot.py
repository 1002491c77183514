"""``progress.png``: losses, strength and speed of a run at a glance (when matplotlib is there)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from alphagomoku.train.metrics import read_metrics


def _series(rows: list[dict], key: str) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for r in rows:
        if r.get(key, "") != "":
            xs.append(int(r["epoch"]))
            ys.append(float(r[key]))
    return xs, ys


def plot_progress(metrics_csv: str | Path, out: str | Path) -> bool:
    """Draw the picture; returns False (and draws nothing) without matplotlib or data."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = read_metrics(metrics_csv)
    if not rows:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for key, label in (("loss", "total"), ("policy_loss", "policy"), ("value_loss", "value")):
        axes[0].plot(*_series(rows, key), marker="o", label=label)
    axes[0].set_title("training loss")
    axes[0].legend()
    for key, label in (("elo", "Elo vs untrained"), ("elo_vs_baseline", "Elo vs pure MCTS")):
        xs, ys = _series(rows, key)
        if xs:
            axes[1].plot(xs, ys, marker="o", label=label)
    axes[1].set_title("strength (arena matches)")
    if axes[1].lines:
        axes[1].legend()
    else:
        axes[1].text(0.5, 0.5, "no matches yet (--eval-every)", ha="center", transform=axes[1].transAxes)
    axes[2].plot(*_series(rows, "positions_per_second"), marker="o")
    axes[2].set_title("self-play positions / s")
    for ax in axes:
        ax.set_xlabel("epoch")
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return True


class ProgressPlot:
    """``progress.png`` kept current without drawing it at every epoch: drawing takes most of a
    second on the CPU machine, a few per cent of a ``cpu-hour`` epoch. ``update()`` after an
    epoch draws when ``every`` seconds have passed since the last drawing; ``finish()`` at the
    end of the run draws the epochs not drawn yet."""

    def __init__(self, metrics_csv: Path, out: Path, every: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self.metrics_csv, self.out, self.every, self.clock = metrics_csv, out, every, clock
        self.drawn_at: float | None = None
        self.behind = False

    def update(self) -> None:
        if self.drawn_at is not None and self.clock() - self.drawn_at < self.every:
            self.behind = True
            return
        self._draw()

    def finish(self) -> None:
        if self.behind:
            self._draw()

    def _draw(self) -> None:
        plot_progress(self.metrics_csv, self.out)
        self.drawn_at = self.clock()
        self.behind = False
