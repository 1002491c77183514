"""The spawn pool: results stream back, and every kind of worker failure is caught and reported."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time

import pytest

import faults
from conftest import POOL_GAME
from alphagomoku.mcts import SearchConfig
from alphagomoku.selfplay.game_loop import SelfPlaySettings
from alphagomoku.selfplay.pool import SelfPlayError, SelfPlayPool
from alphagomoku.selfplay.worker import SelfPlayTask, WorkerSpec

GAME = POOL_GAME
SPEC = WorkerSpec(
    game=GAME,
    search=SearchConfig(num_simulations=8, dirichlet_eps=0.25),
    settings=SelfPlaySettings(games_at_once=2),
    device="cpu",
)


def tasks(weights, n=4, games=2):
    return [SelfPlayTask(i, games, seed=100 + i, weights_path=weights, weights_version=0) for i in range(n)]


def play(pool, task_list):
    got = []
    pool.play(task_list, got.append)
    return got


@pytest.mark.parametrize("search", [
    SPEC.search,
    SearchConfig(num_simulations=8, root_rule="gumbel", gumbel_m=4),
    SearchConfig(num_simulations=8, root_rule="gumbel", gumbel_m=4, interior_rule="gumbel"),
], ids=["puct", "gumbel", "gumbel-interior"])
def test_workers_stream_back_every_game(weights, search):
    logs = []
    spec = WorkerSpec(game=GAME, search=search, settings=SPEC.settings, device="cpu")
    with SelfPlayPool(spec, num_workers=2, task_timeout=120, log=logs.append) as pool:
        results = play(pool, tasks(weights))
    assert sorted(r.task_id for r in results) == [0, 1, 2, 3]
    assert sum(len(r.records) for r in results) == 8
    assert {r.worker for r in results} <= {0, 1}
    assert any("[worker 0] using CPU" in line for line in pool.worker_lines)
    assert not logs, logs


def test_in_process_mode_gives_the_same_games_for_the_same_seed(weights):
    with SelfPlayPool(SPEC, num_workers=0, task_timeout=60) as pool:
        first = play(pool, tasks(weights, n=2))
    with SelfPlayPool(SPEC, num_workers=1, task_timeout=60) as pool:
        second = play(pool, tasks(weights, n=2))
    a = [r.moves.tolist() for res in sorted(first, key=lambda r: r.task_id) for r in res.records]
    b = [r.moves.tolist() for res in sorted(second, key=lambda r: r.task_id) for r in res.records]
    assert a == b


@pytest.mark.parametrize(
    "fn, words",
    [
        (faults.raise_once, "injected failure in task 1"),
        (faults.kill_once, "died"),
        (faults.hang_once, "hangs"),
    ],
)
def test_a_failing_worker_is_reported_and_its_games_played_again(weights, fault_dir, fn, words):
    logs = []
    with SelfPlayPool(SPEC, num_workers=2, task_timeout=5, log=logs.append, task_fn=fn) as pool:
        results = play(pool, tasks(weights))
    assert sorted(r.task_id for r in results) == [0, 1, 2, 3], "the epoch must not be short"
    assert sum(len(r.records) for r in results) == 8
    assert len(pool.failures) == 1 and words in pool.failures[0]
    assert any(words in line for line in logs)


@pytest.mark.parametrize(
    "fn, words",
    [
        (faults.always_raise, "this worker is broken"),
        (faults.return_none, "NoneType instead of a result"),
        (faults.return_no_games, "0 games returned"),
    ],
)
def test_repeated_failures_stop_the_run_with_a_clear_error(weights, fn, words):
    with SelfPlayPool(SPEC, num_workers=1, task_timeout=30, max_failures=2, log=lambda s: None,
                      task_fn=fn) as pool:
        with pytest.raises(SelfPlayError, match=words):
            play(pool, tasks(weights, n=2))


def test_a_worker_whose_device_is_missing_stops_the_run(weights):
    spec = WorkerSpec(game=GAME, search=SPEC.search, settings=SPEC.settings, device="mps")
    with SelfPlayPool(spec, num_workers=1, task_timeout=30, log=lambda s: None) as pool:
        with pytest.raises(SelfPlayError, match="FAILED to set up device 'mps'"):
            play(pool, tasks(weights, n=1))


def test_workers_killed_while_idle_are_replaced_without_a_hang(weights):
    # An idle worker holds the pool's task-queue lock while it waits for work; one killed then
    # (the OOM killer between epochs, say) never gives it back, and multiprocessing's own
    # Pool.terminate() waits for that lock forever.
    logs = []
    outcome = {}
    with SelfPlayPool(SPEC, num_workers=2, task_timeout=20, log=logs.append) as pool:
        pool.close_seconds = 2.0
        play(pool, tasks(weights, n=2))
        # A worker slow to start may not have registered yet: the first one can play both tasks.
        deadline = time.monotonic() + 60
        while len(pool._pids) < 2 and time.monotonic() < deadline:
            pool._check_workers()
            time.sleep(0.1)
        idle = list(pool._pids)
        assert len(idle) == 2
        for pid in idle:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)

        def second_epoch():
            outcome["results"] = play(pool, tasks(weights, n=2))

        epoch = threading.Thread(target=second_epoch, daemon=True)
        epoch.start()
        epoch.join(90)
        assert not epoch.is_alive(), "the pool hung rebuilding itself after its idle workers died"
    assert sorted(r.task_id for r in outcome["results"]) == [0, 1]
    assert any("died" in f or "replaced" in f for f in pool.failures), pool.failures
    assert any("did not stop within 2 s" in line for line in logs), logs
    alive = {p.pid for p in mp.active_children()}
    assert not alive & set(idle)
