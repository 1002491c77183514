"""The Ray self-play backend on a real local Ray (Ray 2.60 has no local mode), shared by the tests
of this file: two actors, new weights versions, stale results, and actors that die, raise or hang.

Ray is an optional extra; where it is not installed these tests are skipped with that reason
(CI installs it: .ci/run). The one-line message for a missing Ray is tested everywhere.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import time
from pathlib import Path

import pytest

import faults
from alphagomoku.mcts import SearchConfig
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import save_model
from alphagomoku.selfplay.game_loop import SelfPlaySettings
from alphagomoku.selfplay.pool import SelfPlayError
from alphagomoku.selfplay.worker import SelfPlayTask, WorkerSpec
from conftest import POOL_GAME

ROOT = Path(__file__).resolve().parents[1]
SPEC = WorkerSpec(game=POOL_GAME, search=SearchConfig(num_simulations=8),
                  settings=SelfPlaySettings(games_at_once=4))

try:
    import ray
except ImportError:
    ray = None
needs_ray = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install -e '.[ray]')")


@pytest.fixture(scope="module")
def local_ray(compiled_selfplay_kernels):
    """One local Ray for the whole file: starting one costs several seconds on 2 cores."""
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    # The fault functions travel by value: actors do not have tests/ on their path.
    ray.cloudpickle.register_pickle_by_value(faults)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """Weights files of versions 0, 1, 2 (different networks)."""
    import torch

    folder = tmp_path_factory.mktemp("weights")
    paths = []
    for v in range(3):
        torch.manual_seed(v)
        paths.append(str(save_model(folder / f"v{v}.pt", PolicyValueNet(ModelConfig.preset("tiny", 7)))))
    return paths


def tasks(n, version, paths, first=0, games=2):
    return [SelfPlayTask(first + i, games, 100 + first + i, paths[version], version) for i in range(n)]


def backend(actors=2, timeout=60.0, max_failures=3, fault=None, tmp_path=None, **options):
    from alphagomoku.selfplay.ray_backend import RayOptions, RaySelfPlay

    fault_fn = functools.partial(fault, str(tmp_path)) if fault else None
    log = []
    b = RaySelfPlay(SPEC, actors, timeout, max_failures, log=log.append,
                    options=RayOptions(fault_fn=fault_fn, **options))
    b.messages = log
    return b


def play(b, task_list):
    got = []
    b.play(task_list, got.append)
    return got


@needs_ray
def test_two_actors_play_an_epoch_and_every_actor_moves_to_the_new_weights(local_ray, versions):
    with backend() as b:
        first = play(b, tasks(4, 0, versions))
        assert sorted(r.task_id for r in first) == [0, 1, 2, 3]
        assert all(len(r.records) == 2 for r in first)
        assert {r.worker for r in first} == {0, 1}
        assert {r.stats["weights_version"] for r in first} == {0}
        second = play(b, tasks(4, 1, versions, first=4))
        assert {(r.worker, r.stats["weights_version"]) for r in second} == {(0, 1), (1, 1)}
        assert sorted(b._weights) == [0, 1]  # one object per version, the same for every actor
        assert b.stale_dropped == 0 and b.failures == []
        # A task made for version 1 finishes after version 2 exists: its result is dropped,
        # counted, and the task is played again with version 2.
        third = play(b, tasks(1, 2, versions, first=8) + tasks(1, 1, versions, first=9))
        assert sorted(r.task_id for r in third) == [8, 9]
        assert {r.stats["weights_version"] for r in third} == {2}
        assert b.stale_dropped == 1
        assert any("dropped a result of weights version 1 (newest 2" in m for m in b.messages)


@needs_ray
def test_an_actor_killed_mid_task_is_reported_dead_replaced_and_its_games_played_again(local_ray, versions, tmp_path):
    with backend(fault=faults.ray_die_once, tmp_path=tmp_path) as b:
        got = play(b, tasks(4, 0, versions))
        assert sorted(r.task_id for r in got) == [0, 1, 2, 3]
        assert sum(len(r.records) for r in got) == 8
        assert len(b.failures) == 1
        assert "[kind: death]" in b.failures[0] and "died during task 1" in b.failures[0]
        assert "on node " in b.failures[0] and "replaced" in b.failures[0]
        assert any(line.startswith("[actor 2]") for line in b.actor_lines)  # the replacement


@needs_ray
def test_a_result_that_came_back_past_the_timeout_is_not_taken_for_a_hang(local_ray, versions,
                                                                          tmp_path):
    # The driver can be kept from collecting for longer than the timeout (it waits for a
    # replacement actor to start): a task whose result is back by then must not be killed.
    with backend(timeout=0.5, fault=faults.ray_hang_once, tmp_path=tmp_path) as b:
        b._start()
        done, hung = b.slots
        b._submit(done, tasks(1, 0, versions)[0])
        b._submit(hung, tasks(1, 0, versions, first=1)[0])  # task 1 hangs
        b.ray.wait([done.ref], num_returns=1, timeout=60)
        time.sleep(0.6)
        now = time.monotonic()
        assert now - done.started > b.task_timeout and not b._overdue(done, now)
        assert b._overdue(hung, now)


@needs_ray
def test_an_actor_that_raises_and_one_that_hangs_are_reported_by_kind(local_ray, versions, tmp_path):
    with backend(fault=faults.ray_raise_once, tmp_path=tmp_path) as b:
        got = play(b, tasks(3, 0, versions))
        assert sorted(r.task_id for r in got) == [0, 1, 2]
        assert len(b.failures) == 1 and "[kind: raise]" in b.failures[0]
        assert "injected failure in task 1" in b.failures[0]
    # Long enough for a first task on a loaded machine (the weights load with it).
    with backend(fault=faults.ray_hang_once, tmp_path=tmp_path, timeout=20.0) as b:
        got = play(b, tasks(3, 0, versions))
        assert sorted(r.task_id for r in got) == [0, 1, 2]
        assert len(b.failures) == 1 and "[kind: hang]" in b.failures[0]
        assert "no result for task 1 within 20 s" in b.failures[0]


@needs_ray
def test_repeated_failures_stop_with_the_reason(local_ray, versions, tmp_path):
    with backend(actors=1, max_failures=1, fault=faults.ray_always_raise, tmp_path=tmp_path) as b:
        with pytest.raises(SelfPlayError, match="self-play failed 2 times; stopping") as e:
            play(b, tasks(2, 0, versions))
        assert "this actor is broken" in str(e.value)


@needs_ray
def test_more_actors_than_the_cluster_holds_is_refused_at_once(local_ray, versions):
    with pytest.raises(SelfPlayError, match="cannot place 3 self-play actor"):
        with backend(actors=3) as b:
            play(b, tasks(1, 0, versions))


@needs_ray
@pytest.mark.slow
def test_the_trainer_runs_an_epoch_on_ray_by_choosing_the_backend(local_ray, tmp_path):
    from alphagomoku.train.config import TrainConfig
    from alphagomoku.train.loop import Trainer
    from alphagomoku.train.metrics import read_metrics

    cfg = TrainConfig(board_size=7, n_in_row=4, device="cpu", selfplay_games=4, games_per_task=2,
                      simulations=8, batch_size=16, min_buffer_positions=16, buffer_positions=2000,
                      steps_per_epoch=2, epochs=1, run_dir=str(tmp_path / "run"),
                      parallel_workers=2, selfplay_backend="ray")
    lines = []
    Trainer(cfg, log=lines.append, progress=False).run()
    assert any(line.startswith("[actor 1]") for line in lines)
    assert int(read_metrics(tmp_path / "run" / "metrics.csv")[0]["games"]) == 4


def test_without_ray_the_backend_is_one_line_with_the_install_command(tmp_path):
    # A Python in which `import ray` fails, whether or not Ray is installed.
    code = ("import sys; sys.modules['ray'] = None; from alphagomoku.train.cli import main; "
            f"sys.exit(main(['--selfplay-backend', 'ray', '--run-dir', {str(tmp_path / 'run')!r}, "
            "'--board-size', '7', '--n-in-row', '4', '--device', 'cpu', '--epochs', '1', '--no-progress']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith("train.py: error: --selfplay-backend ray needs Ray")
    assert "pip install -e '.[ray]'" in errors[0]
