"""Gradient batches built ahead on threads: the same batches, in the same order, from the same
random draws as batches built in the loop."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.prefetch import GPU_THREADS, BatchPrefetch, batch_threads


def _plans_and_builds(threads: int, steps: int = 9):
    rng = np.random.default_rng(3)
    planned_on = []

    def plan(step):
        planned_on.append(threading.get_ident())
        return step, rng.integers(0, 1000, size=4)

    def build(p):
        step, draws = p
        return step, draws * 2

    with BatchPrefetch(plan, build, steps, threads) as batches:
        taken = [batches.take(s) for s in range(steps)]
    return taken, planned_on, rng.integers(0, 1 << 30)


@pytest.mark.parametrize("threads", [1, 3])
def test_batches_built_on_threads_are_the_loops_batches_in_order(threads):
    serial, serial_threads, serial_after = _plans_and_builds(0)
    ahead, ahead_threads, ahead_after = _plans_and_builds(threads)
    assert [s for s, _ in ahead] == list(range(9))
    for (_, a), (_, b) in zip(serial, ahead):
        np.testing.assert_array_equal(a, b)
    # Every step planned once, on the taking thread, so the stream after the epoch is the same.
    assert serial_after == ahead_after
    assert len(ahead_threads) == 9 and set(ahead_threads) == {threading.get_ident()}


def test_a_build_error_is_raised_by_its_step_and_steps_go_in_order():
    def build(step):
        if step == 2:
            raise RuntimeError("no batch for step 2")
        return step

    with BatchPrefetch(lambda s: s, build, 5, threads=2) as batches:
        assert [batches.take(0), batches.take(1)] == [0, 1]
        with pytest.raises(RuntimeError, match="step 2"):
            batches.take(2)
        with pytest.raises(ValueError, match="expected step 3"):
            batches.take(4)
        assert batches.take(3) == 3
        batches.take(4)
        with pytest.raises(ValueError, match="past the epoch"):
            batches.take(5)
    with pytest.raises(ValueError, match="threads"):
        BatchPrefetch(lambda s: s, lambda p: p, 1, threads=-1)


def test_auto_builds_ahead_on_a_gpu_only():
    assert batch_threads(-1, "cpu") == 0
    assert batch_threads(-1, "cuda") == batch_threads(-1, "mps") == GPU_THREADS
    assert batch_threads(2, "cpu") == 2 and batch_threads(0, "cuda") == 0
    with pytest.raises(ConfigError, match="--batch-threads"):
        TrainConfig(batch_threads=-2)


def test_a_run_trains_the_same_weights_with_batches_built_ahead(tmp_path):
    from alphagomoku.train.loop import Trainer

    weights, streams = [], []
    for threads in (0, 2):
        cfg = TrainConfig(board_size=7, n_in_row=4, model_preset="tiny", device="cpu",
                          selfplay_games=4, games_per_task=2, simulations=8, batch_size=32,
                          steps_per_epoch=5, min_buffer_positions=16, parallel_workers=0,
                          final_eval_games=0, epochs=2, batch_threads=threads,
                          run_dir=str(tmp_path / f"threads-{threads}"))
        trainer = Trainer(cfg, log=lambda _: None, progress=False)
        trainer.run()
        weights.append(trainer.model.state_dict())
        streams.append(trainer.rng.integers(0, 1 << 30))
    assert streams[0] == streams[1]
    for name, t in weights[0].items():
        torch.testing.assert_close(weights[1][name], t, rtol=0, atol=0, msg=name)
