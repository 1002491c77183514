"""The replay buffer: the last ``capacity`` positions of self-play, stored compactly.

A position is kept as its board (int8), side to move, last move, search policy and game result,
not as input planes: planes are five floats a point, boards one byte, so the window can be 20x
longer in the same memory. Planes are made again when a batch is sampled.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, EMPTY, WHITE
from alphagomoku.selfplay.records import GameRecord
from alphagomoku.atomic import atomic_path

FORMAT_VERSION = 1


class BufferFileError(ValueError):
    """A replay-buffer file that cannot be loaded (missing, corrupt, another game)."""


class ReplayBuffer:
    """A ring of positions: adding past ``capacity`` drops the oldest."""

    def __init__(self, game: GameConfig, capacity: int):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.game = game
        self.capacity = capacity
        a = game.area
        self.boards = np.zeros((capacity, a), dtype=np.int8)      # (capacity, H*W)
        self.to_move = np.zeros(capacity, dtype=np.int8)          # (capacity,) BLACK/WHITE
        self.last_move = np.full(capacity, -1, dtype=np.int16)    # (capacity,) -1: none
        self.policies = np.zeros((capacity, a), dtype=np.float16) # (capacity, H*W)
        self.values = np.zeros(capacity, dtype=np.float32)        # (capacity,) result for to_move
        self.size = 0
        self.next = 0           # where the next position goes
        self.total_added = 0    # positions ever added (also those since dropped)

    def __len__(self) -> int:
        return self.size

    def add_game(self, record: GameRecord) -> None:
        board = np.zeros(self.game.area, dtype=np.int8)
        targets = record.value_targets()
        last = -1
        for t, move in enumerate(record.moves):
            color = BLACK if t % 2 == 0 else WHITE
            i = self.next
            self.boards[i] = board
            self.to_move[i] = color
            self.last_move[i] = last
            self.policies[i] = record.policies[t]
            self.values[i] = targets[t]
            self.next = (i + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)
            self.total_added += 1
            board[int(move)] = color
            last = int(move)

    def sample_indices(self, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        return rng.integers(0, self.size, size=batch_size)

    # -- persistence ------------------------------------------------------------------------------
    def save(self, path: str | Path, epoch: int) -> None:
        n = self.size
        # Stored oldest first so a reload with another capacity keeps the newest positions.
        order = (np.arange(n) + (self.next if n == self.capacity else 0)) % self.capacity
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez_compressed(
                    f, format_version=FORMAT_VERSION, epoch=epoch, total_added=self.total_added,
                    width=self.game.width, height=self.game.height,
                    boards=self.boards[order], to_move=self.to_move[order],
                    last_move=self.last_move[order], policies=self.policies[order],
                    values=self.values[order],
                )

    @classmethod
    def load(cls, path: str | Path, game: GameConfig, capacity: int) -> tuple["ReplayBuffer", int]:
        """Returns the buffer and the epoch it was saved at."""
        path = Path(path)
        if not path.exists():
            raise BufferFileError(f"replay buffer {path} does not exist")
        try:
            with np.load(path) as data:
                arrays = {k: data[k] for k in data.files}
        except Exception as e:  # noqa: BLE001 - any failure to parse means a corrupt file
            raise BufferFileError(f"replay buffer {path} is corrupt or not a buffer file: {e}") from None
        needed = {"format_version", "epoch", "width", "height", "boards", "policies", "values"}
        if not needed <= set(arrays):
            raise BufferFileError(f"replay buffer {path} lacks {sorted(needed - set(arrays))}")
        if int(arrays["format_version"]) != FORMAT_VERSION:
            raise BufferFileError(f"replay buffer {path} has format {int(arrays['format_version'])}, "
                                  f"this version reads {FORMAT_VERSION}")
        w, h = int(arrays["width"]), int(arrays["height"])
        if (w, h) != (game.width, game.height):
            raise BufferFileError(f"replay buffer {path} holds {w}x{h} games, the run is "
                                  f"{game.width}x{game.height}")
        buf = cls(game, capacity)
        n = min(len(arrays["values"]), capacity)
        for name in ("boards", "to_move", "last_move", "policies", "values"):
            getattr(buf, name)[:n] = arrays[name][len(arrays[name]) - n:]
        buf.size = n
        buf.next = n % capacity
        buf.total_added = int(arrays["total_added"])
        stones = np.count_nonzero(buf.boards[:n] != EMPTY, axis=1)
        expected = np.where(stones % 2 == 0, BLACK, WHITE)
        if n and not np.array_equal(expected, buf.to_move[:n]):
            raise BufferFileError(f"replay buffer {path} is inconsistent (side to move vs stones)")
        return buf, int(arrays["epoch"])
