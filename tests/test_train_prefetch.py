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
    planned_on, built_on = [], {}

    def plan(step):
        planned_on.append(threading.get_ident())
        return step, rng.integers(0, 1000, size=4)

    def build(p):
        step, draws = p
        built_on[step] = threading.get_ident()
        return step, draws * 2

    with BatchPrefetch(plan, build, steps, threads) as batches:
        taken = [batches.take(s) for s in range(steps)]
    return taken, planned_on, rng.integers(0, 1 << 30), built_on


@pytest.mark.parametrize("threads", [1, 3])
def test_batches_built_on_threads_are_the_loops_batches_in_order(threads):
    serial, _, serial_after, _ = _plans_and_builds(0)
    ahead, ahead_threads, ahead_after, built_on = _plans_and_builds(threads)
    assert [s for s, _ in ahead] == list(range(9))
    for (_, a), (_, b) in zip(serial, ahead):
        np.testing.assert_array_equal(a, b)
    # Every step planned once, on the taking thread, so the stream after the epoch is the same.
    assert serial_after == ahead_after
    assert len(ahead_threads) == 9 and set(ahead_threads) == {threading.get_ident()}
    # Step k on thread k mod threads: each thread's solver sees the same positions, in order.
    for k in range(9):
        assert built_on[k] == built_on[k % threads] != threading.get_ident()
    assert len(set(built_on.values())) == threads


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


def test_a_run_with_batches_built_ahead_draws_as_the_loop_and_trains_alike_run_after_run(
        tmp_path):
    from alphagomoku.train.loop import Trainer

    weights, streams = [], []
    for name, threads in (("loop", 0), ("ahead", 2), ("ahead-again", 2)):
        cfg = TrainConfig(board_size=7, n_in_row=4, model_preset="tiny", device="cpu",
                          selfplay_games=4, games_per_task=2, simulations=8, batch_size=32,
                          steps_per_epoch=5, min_buffer_positions=16, parallel_workers=0,
                          final_eval_games=0, epochs=2, batch_threads=threads,
                          run_dir=str(tmp_path / name))
        trainer = Trainer(cfg, log=lambda _: None, progress=False)
        trainer.run()
        weights.append(trainer.model.state_dict())
        streams.append(trainer.rng.integers(0, 1 << 30))
    # The same draws (positions, symmetries, then the next epoch's self-play) either way.
    assert streams[0] == streams[1] == streams[2]
    for name, t in weights[1].items():
        torch.testing.assert_close(weights[2][name], t, rtol=0, atol=0, msg=name)
