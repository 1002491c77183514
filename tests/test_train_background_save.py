"""The replay buffer written on a thread: the file it leaves, one write in flight at a time, and
errors that reach the trainer."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from alphagomoku.game.config import GameConfig
from alphagomoku.train.background_save import BackgroundSave
from alphagomoku.train.buffer import ReplayBuffer, write_buffer_file


def _buffer(positions: int, capacity: int) -> ReplayBuffer:
    game = GameConfig(width=7, height=7, n_in_row=4)
    buf = ReplayBuffer(game, capacity)
    rng = np.random.default_rng(0)
    for _ in range(positions):
        i = buf.next
        stones = rng.permutation(game.area)[:2 * rng.integers(0, 5)]
        buf.boards[i] = 0
        buf.boards[i, stones[::2]] = 1
        buf.boards[i, stones[1::2]] = 2
        buf.to_move[i] = 1
        buf.policies[i] = rng.random(game.area)
        buf.values[i] = rng.choice([-1.0, 1.0])
        buf.next = (i + 1) % capacity
        buf.size = min(buf.size + 1, capacity)
        buf.total_added += 1
    return buf


def test_the_snapshot_is_written_as_the_buffer_was_when_taken(tmp_path):
    buf = _buffer(30, capacity=20)  # wrapped: the file holds the newest 20, oldest first
    files = BackgroundSave()
    arrays = buf.snapshot(epoch=3)
    started, release = threading.Event(), threading.Event()

    def write():
        started.set()
        release.wait(5)
        write_buffer_file(tmp_path / "replay.npz", arrays)

    files.submit("the replay buffer", write)
    started.wait(5)
    before = buf.boards.copy()
    buf.boards[:] = 0   # the buffer fills on while the write is in flight
    buf.values[:] = 0
    release.set()
    files.wait()
    loaded, epoch = ReplayBuffer.load(tmp_path / "replay.npz", buf.game, 20)
    assert epoch == 3 and len(loaded) == 20 and loaded.total_added == 30
    order = (np.arange(20) + buf.next) % 20
    np.testing.assert_array_equal(loaded.boards[:20], before[order])
    assert np.abs(loaded.values[:20]).min() == 1.0


def test_one_write_at_a_time_and_its_error_reaches_the_trainer(tmp_path):
    files = BackgroundSave()
    running = []

    def slow(name):
        def write():
            running.append(name)
            assert running == [name]   # an error here is raised by the next wait()
            threading.Event().wait(0.05)
            running.remove(name)
        return write

    files.submit("first", slow("first"))
    files.submit("second", slow("second"))   # waits for the first
    files.wait()
    assert running == []

    def broken():
        raise PermissionError("read-only folder")

    files.submit("the replay buffer of epoch 2", broken)
    with pytest.raises(OSError, match="writing the replay buffer of epoch 2 failed: read-only"):
        files.wait()
    files.wait()   # reported once

    files.submit("the replay buffer of epoch 3", broken)
    logged = []
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        finally:
            files.finish(logged.append)   # the run's own error goes on; the write's is logged
    assert logged and "epoch 3" in logged[0]
    files.submit("the replay buffer of epoch 4", broken)
    with pytest.raises(OSError, match="epoch 4"):
        files.finish(logged.append)
