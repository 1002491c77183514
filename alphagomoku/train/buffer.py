"""The replay buffer: the last ``capacity`` positions of self-play, stored compactly.

A position is kept as its board (int8), side to move, last move, search policy, game result and
the search's value of the move played, not as input planes: planes are five floats a point,
boards one byte, so the window can be 20x longer in the same memory. Planes are made again when
a batch is sampled, and the value target is mixed then (so the mix is a training setting).

Two weights go with each position: ``policy_weight`` is 0 for moves that had only a fast search
(playout cap randomisation: their visits are too few to be a policy target) and
``weight`` scales a position already decided (one side's value beyond a threshold for several
plies in a row, KataGo's reduceVisits), so that won positions do not crowd the window.

Two more serve the auxiliary targets of a network that has the heads for them: ``reply`` says
that the next slot holds the next ply of the same game with a policy target (the opponent's
reply, read from there rather than stored twice), and ``short_value`` is the short-term value
(:func:`short_term_values`). ``future`` is the board FUTURE_PLIES plies later (the game's last
board when it ended sooner), the target of a network's future-stones head; ``has_future`` is
False for positions loaded from a file that predates it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from alphagomoku.game.config import GameConfig
from alphagomoku.game.constants import BLACK, EMPTY, WHITE
from alphagomoku.selfplay.training_game import TrainingGame
from alphagomoku.atomic import atomic_path
from alphagomoku.read_errors import read_error_reason

BUFFER_FORMAT_VERSION = 4  # 2 added q, policy_weight, weight; 3 reply, short_value, rule; 4 future
# The arrays that hold one entry a position, in the buffer and in its file.
POSITION_FIELDS = ("boards", "to_move", "last_move", "policies", "values", "q", "policy_weight",
                   "weight", "reply", "short_value", "future", "has_future")
# Plies over which the short-term value target looks ahead (the discount is 1 - 1/horizon).
SHORT_VALUE_HORIZON = 6.0
# Plies ahead of a position whose board is its future-stones target (KataGo's "futurepos" looks
# 8 and 32 turns ahead; a Gomoku game between these networks lasts some 20 to 40 plies).
FUTURE_PLIES = 8


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
        self.q = np.zeros(capacity, dtype=np.float32)             # (capacity,) search value of the move played
        self.policy_weight = np.ones(capacity, dtype=np.float32)  # (capacity,) 0: no policy target
        self.weight = np.ones(capacity, dtype=np.float32)         # (capacity,) sample weight
        self.reply = np.zeros(capacity, dtype=np.bool_)           # (capacity,) next slot: the reply
        self.short_value = np.zeros(capacity, dtype=np.float32)   # (capacity,) short-term value
        self.future = np.zeros((capacity, a), dtype=np.int8)      # (capacity, H*W) board FUTURE_PLIES on
        self.has_future = np.zeros(capacity, dtype=np.bool_)      # (capacity,) future is known
        self.size = 0
        self.next = 0           # where the next position goes
        self.total_added = 0    # positions ever added (also those since dropped)

    def __len__(self) -> int:
        return self.size

    def add_game(self, record: TrainingGame, decided_threshold: float = 0.9,
                 decided_plies: int = 3, decided_weight: float = 1.0) -> None:
        """Add the searched plies of ``record``. A ply whose root value and those of the
        ``decided_plies - 1`` searched plies before it are all beyond ``decided_threshold`` in
        size gets weight ``decided_weight`` (1: no down-weighting)."""
        board = np.zeros(self.game.area, dtype=np.int8)
        later = future_boards(record.moves, self.game.area, FUTURE_PLIES)
        targets = record.value_targets()
        short = short_term_values(record.root_values, targets)
        decided = decided_mask(record.root_values, decided_threshold, decided_plies)
        last = -1
        previous = (self.next - 1) % self.capacity
        for t, move in enumerate(record.moves):
            color = BLACK if t % 2 == 0 else WHITE
            j = t - record.opening
            if j >= 0:
                i = self.next
                # The slot before points at this one: as this game's previous ply, it is the
                # reply; as another game's last position, it no longer is.
                self.reply[previous] = j > 0 and bool(record.full_search[j])
                self.reply[i] = False
                self.short_value[i] = short[j]
                previous = i
                self.boards[i] = board
                self.future[i] = later[t]
                self.has_future[i] = True
                self.to_move[i] = color
                self.last_move[i] = last
                self.policies[i] = record.policies[j]
                self.values[i] = targets[j]
                self.q[i] = record.move_values[j]
                self.policy_weight[i] = 1.0 if record.full_search[j] else 0.0
                self.weight[i] = decided_weight if decided[j] else 1.0
                self.next = (i + 1) % self.capacity
                self.size = min(self.size + 1, self.capacity)
                self.total_added += 1
            board[int(move)] = color
            last = int(move)

    def value_targets(self, indices: np.ndarray, q_weight: float) -> np.ndarray:
        """(1 - q_weight) * z + q_weight * q for the positions ``indices``."""
        if q_weight == 0.0:
            return self.values[indices].copy()
        return ((1.0 - q_weight) * self.values[indices] + q_weight * self.q[indices]).astype(np.float32)

    def sample_indices(self, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        return rng.integers(0, self.size, size=batch_size)

    # -- persistence ------------------------------------------------------------------------------
    def save(self, path: str | Path, epoch: int) -> None:
        write_buffer_file(path, self.snapshot(epoch))

    def snapshot(self, epoch: int) -> dict[str, np.ndarray]:
        """The buffer's file contents, copied, so that they can be written while the buffer
        fills on."""
        n = self.size
        # Stored oldest first so a reload with another capacity keeps the newest positions.
        order = (np.arange(n) + (self.next if n == self.capacity else 0)) % self.capacity
        return dict(
            format_version=np.asarray(BUFFER_FORMAT_VERSION), epoch=np.asarray(epoch),
            total_added=np.asarray(self.total_added), width=np.asarray(self.game.width),
            height=np.asarray(self.game.height), rule=np.asarray(self.game.rule),
            **{name: getattr(self, name)[order] for name in POSITION_FIELDS},
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
            raise BufferFileError(f"replay buffer {path} is corrupt or not a buffer file: "
                                  f"{read_error_reason(e)}") from None
        needed = {"format_version", "epoch", "width", "height", "boards", "policies", "values"}
        if not needed <= set(arrays):
            raise BufferFileError(f"replay buffer {path} lacks {sorted(needed - set(arrays))}")
        if int(arrays["format_version"]) not in (1, 2, 3, BUFFER_FORMAT_VERSION):
            raise BufferFileError(f"replay buffer {path} has format {int(arrays['format_version'])}, "
                                  f"this version reads {BUFFER_FORMAT_VERSION}")
        w, h = int(arrays["width"]), int(arrays["height"])
        if (w, h) != (game.width, game.height):
            raise BufferFileError(f"replay buffer {path} holds {w}x{h} games, the run is "
                                  f"{game.width}x{game.height}")
        if "rule" in arrays and str(arrays["rule"]) != game.rule:
            raise BufferFileError(f"replay buffer {path} holds {arrays['rule']} games, the run "
                                  f"plays {game.rule}")
        buf = cls(game, capacity)
        n = min(len(arrays["values"]), capacity)
        if "q" not in arrays:  # format 1: q as the result, every target at full weight
            arrays["q"] = arrays["values"]
            arrays["policy_weight"] = np.ones_like(arrays["values"])
            arrays["weight"] = np.ones_like(arrays["values"])
        if "reply" not in arrays:  # format 2: no reply targets, the result as short-term value
            arrays["reply"] = np.zeros(len(arrays["values"]), dtype=np.bool_)
            arrays["short_value"] = arrays["values"]
        if "future" not in arrays:  # format 3 and before: no future-stones targets
            arrays["future"] = arrays["boards"]
            arrays["has_future"] = np.zeros(len(arrays["values"]), dtype=np.bool_)
        for name in POSITION_FIELDS:
            getattr(buf, name)[:n] = arrays[name][len(arrays[name]) - n:]
        if n:
            buf.reply[n - 1] = False  # its reply, if any, was older than what was kept
        buf.size = n
        buf.next = n % capacity
        buf.total_added = int(arrays["total_added"])
        stones = np.count_nonzero(buf.boards[:n] != EMPTY, axis=1)
        expected = np.where(stones % 2 == 0, BLACK, WHITE)
        if n and not np.array_equal(expected, buf.to_move[:n]):
            raise BufferFileError(f"replay buffer {path} is inconsistent (side to move vs stones)")
        return buf, int(arrays["epoch"])


def write_buffer_file(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """``arrays`` as a compressed ``.npz`` file that ``np.load`` reads, written whole or not at
    all. zlib's fastest level: about three times as fast as ``np.savez_compressed``'s default
    for about the same size (boards and policies are mostly zeros)."""
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            for name, array in arrays.items():
                with z.open(f"{name}.npy", "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, np.asanyarray(array), allow_pickle=False)


def short_term_values(root_values: np.ndarray, results: np.ndarray,
                      horizon: float = SHORT_VALUE_HORIZON) -> np.ndarray:
    """float32 (S,): KataGo's short-term value target at each searched ply, for the side to
    move there: the search's root values of the plies from this one on, each weighted
    ``(1 - d) d^k`` (``d = 1 - 1/horizon``) and seen from this side, with the game's result in
    place of every ply after the last. ``results`` are the value targets z of the plies.

    So ``short[j] = (1 - d) v[j] - d short[j + 1]``, the minus because the next ply is the
    opponent's, ending in ``short[S] = -z[S - 1]``: what the game's end was worth to the side
    that would have moved next."""
    v = np.asarray(root_values, dtype=np.float64)
    z = np.asarray(results, dtype=np.float64)
    d = 1.0 - 1.0 / horizon
    out = np.zeros(len(v), dtype=np.float32)
    after = -z[-1] if len(z) else 0.0
    for j in range(len(v) - 1, -1, -1):
        after = (1.0 - d) * v[j] - d * after
        out[j] = after
    return out


def future_boards(moves: np.ndarray, area: int, plies: int) -> np.ndarray:
    """int8 (T, area): for each ply t of a game of T moves, the board after move
    ``min(t + plies, T)`` is played (moves t onwards, up to ``plies`` of them, added to the board
    before move t), the target of the future-stones head at the position before move t."""
    moves = np.asarray(moves, dtype=np.int64)
    n = len(moves)
    out = np.zeros((n, area), dtype=np.int8)
    colour = np.where(np.arange(n) % 2 == 0, BLACK, WHITE).astype(np.int8)
    board = np.zeros(area, dtype=np.int8)
    for t in range(min(plies, n)):  # the board ``plies`` ahead of ply 0
        board[moves[t]] = colour[t]
    for t in range(n):
        out[t] = board
        if t + plies < n:  # one ply on: the next move joins the look-ahead
            board[moves[t + plies]] = colour[t + plies]
    return out


def decided_mask(root_values: np.ndarray, threshold: float, plies: int) -> np.ndarray:
    """bool (S,): ply j and the ``plies - 1`` before it all have |root value| > threshold."""
    big = np.abs(np.asarray(root_values, dtype=np.float32)) > threshold
    run = np.zeros(len(big), dtype=np.int64)
    count = 0
    for j, b in enumerate(big):
        count = count + 1 if b else 0
        run[j] = count
    return run >= max(plies, 1)
