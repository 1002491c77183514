"""Per-epoch metrics: ``metrics.csv`` always, TensorBoard when it is installed."""

from __future__ import annotations

import csv
from pathlib import Path

COLUMNS = (
    "epoch", "games", "positions", "avg_length", "black_wins", "white_wins", "draws",
    "opening_games", "opening_black_wins", "opening_white_wins", "opening_draws",
    "empty_games", "empty_black_wins", "empty_white_wins", "empty_draws", "unbalanced_openings",
    "opening_target", "simulations",
    "resignations", "vcf_endings", "false_resignations", "selfplay_seconds", "positions_per_second",
    "network_share", "cache_hit_share", "buffer_positions", "train_steps", "train_seconds",
    "samples_per_second",
    "loss", "value_loss", "policy_loss", "reply_loss", "soft_policy_loss", "short_value_loss",
    "future_loss", "l2",
    "policy_entropy", "kl", "lr", "teacher_share",
    "score_vs_best", "elo_vs_best", "promoted", "elo", "score_vs_baseline", "elo_vs_baseline",
)


class MetricsLog:
    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / "metrics.csv"
        self._tb = None
        try:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(Path(run_dir) / "tensorboard"))
        except Exception:  # noqa: BLE001 - TensorBoard is optional (ImportError and friends)
            self._tb = None

    def write(self, row: dict) -> None:
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise KeyError(f"metrics row has unknown columns {sorted(unknown)}")
        new = not self.path.exists()
        if not new and _header(self.path) != list(COLUMNS):
            # A run resumed by a newer version: rewrite the old rows under today's columns.
            rows = read_metrics(self.path)
            with open(self.path, "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
                writer.writeheader()
                writer.writerows(rows)
        with open(self.path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            if new:
                writer.writeheader()
            writer.writerow({k: _fmt(row.get(k, "")) for k in COLUMNS})
            f.flush()
        if self._tb is not None:
            for k, v in row.items():
                if k != "epoch" and isinstance(v, (int, float)):
                    self._tb.add_scalar(k, v, row["epoch"])
            self._tb.flush()

    def truncate_after(self, epoch: int) -> None:
        """On resume: drop rows of epochs after the checkpoint (they will be run again)."""
        rows = read_metrics(self.path)
        kept = [r for r in rows if int(r["epoch"]) <= epoch]
        if len(kept) == len(rows):
            return
        with open(self.path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(kept)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def _header(path: Path) -> list[str]:
    with open(path, newline="") as f:
        return next(csv.reader(f), [])


def read_metrics(path: str | Path) -> list[dict]:
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
