"""End to end: scripts/train.py with spawn workers in a temporary run directory, then --resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from alphagomoku.train.buffer import ReplayBuffer
from alphagomoku.train.checkpoint import load_checkpoint
from alphagomoku.train.config import TrainConfig
from alphagomoku.train.metrics import read_metrics

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--board-size", "7", "--n-in-row", "4", "--model-preset", "tiny", "--device", "cpu",
    "--selfplay-games", "8", "--games-per-task", "4", "--simulations", "8",
    "--batch-size", "32", "--min-buffer-positions", "32", "--buffer-positions", "2000",
    "--steps-per-epoch", "4", "--no-progress",
]


def train(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), *TINY, *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )


@pytest.mark.slow
def test_two_workers_two_epochs_then_resume(tmp_path):
    run = tmp_path / "run"
    first = train(["--parallel-workers", "2", "--epochs", "2", "--run-dir", str(run)])
    assert first.returncode == 0, first.stderr[-3000:]
    assert "[worker 0] using CPU" in first.stderr and "[worker 1] using CPU" in first.stderr
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ckpts == ["epoch_000001.pt", "epoch_000002.pt", "latest.pt"]
    assert TrainConfig.from_file(run / "config.json").parallel_workers == 2
    rows = read_metrics(run / "metrics.csv")
    assert [int(r["epoch"]) for r in rows] == [1, 2]
    assert all(int(r["games"]) == 8 for r in rows)
    assert float(rows[-1]["loss"]) > 0 and float(rows[-1]["policy_entropy"]) > 0
    buffer_before, epoch = ReplayBuffer.load(run / "replay.npz", TrainConfig(board_size=7, n_in_row=4).game, 2000)
    assert epoch == 2 and len(buffer_before) == sum(int(r["positions"]) for r in rows)

    steered = load_checkpoint(run / "checkpoints" / "epoch_000002.pt")["opening_target"]

    again = train(["--parallel-workers", "2", "--epochs", "3", "--run-dir", str(run), "--resume"])
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed" in again.stdout and "at epoch 2" in again.stdout
    assert "epoch 3/3" in again.stdout
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["epoch"] == 3
    buffer_after, _ = ReplayBuffer.load(run / "replay.npz", TrainConfig(board_size=7, n_in_row=4).game, 2000)
    # The resumed run kept the old positions and added the third epoch's on top.
    n = len(buffer_before)
    np.testing.assert_array_equal(buffer_after.boards[:n], buffer_before.boards[:n])
    assert len(buffer_after) > n
    rows = read_metrics(run / "metrics.csv")
    assert [int(r["epoch"]) for r in rows] == [1, 2, 3]
    # The opening balance carries on from where the first session left it.
    assert float(rows[2]["opening_target"]) == pytest.approx(steered)


@pytest.mark.slow
def test_a_run_with_vcf_planes_trains_plays_and_keeps_them(tmp_path):
    """--vcf-plane-budget and --model-threat-planes through a spawned worker, the trainer's
    batches and the saved model; a player built from the checkpoint writes the planes itself; a
    resume cannot change them."""
    from alphagomoku.eval.specs import make_player
    from alphagomoku.game import GameConfig, Position

    run = tmp_path / "run"
    first = train(["--parallel-workers", "1", "--epochs", "1", "--vcf-plane-budget", "50",
                   "--model-threat-planes", "1", "--run-dir", str(run)])
    assert first.returncode == 0, first.stderr[-3000:]
    latest = run / "checkpoints" / "latest.pt"
    model_config = load_checkpoint(latest)["model_config"]
    assert model_config["vcf_plane_budget"] == 50 and model_config["threat_planes"]
    assert model_config["num_planes"] == 13
    player = make_player(f"net:{latest}:8", device="cpu")
    game = GameConfig(width=7, n_in_row=4)
    player.reset(game)
    position = Position.from_moves(["d4", "c3"], game)
    assert position.legal_mask()[player.choose(position)]
    changed = train(["--parallel-workers", "0", "--epochs", "2", "--run-dir", str(run),
                     "--resume", "--vcf-plane-budget", "0"])
    assert changed.returncode == 1 and "vcf_plane_budget=50" in changed.stderr
    changed = train(["--parallel-workers", "0", "--epochs", "2", "--run-dir", str(run),
                     "--resume", "--model-threat-planes", "0"])
    assert changed.returncode == 1 and "model_threat_planes=1" in changed.stderr


def test_a_run_directory_is_never_overwritten_and_bad_resumes_explain_themselves(tmp_path):
    run = tmp_path / "run"
    missing = train(["--parallel-workers", "0", "--epochs", "1", "--run-dir", str(run), "--resume"])
    assert missing.returncode == 1 and "no checkpoint" in missing.stderr
    ok = train(["--parallel-workers", "0", "--epochs", "1", "--run-dir", str(run)])
    assert ok.returncode == 0, ok.stderr[-3000:]
    again = train(["--parallel-workers", "0", "--epochs", "1", "--run-dir", str(run)])
    assert again.returncode == 1 and "--resume" in again.stderr
    other = train(["--parallel-workers", "0", "--epochs", "2", "--run-dir", str(run), "--resume",
                   "--board-size", "9"])
    assert other.returncode == 1 and "board_size=7" in other.stderr
    latest = run / "checkpoints" / "latest.pt"
    latest.write_bytes(latest.read_bytes()[:100])
    corrupt = train(["--parallel-workers", "0", "--epochs", "2", "--run-dir", str(run), "--resume"])
    assert corrupt.returncode == 1 and "corrupt" in corrupt.stderr
    # The per-epoch checkpoint is still whole: the error names where to look.
    assert load_checkpoint(run / "checkpoints" / "epoch_000001.pt")["epoch"] == 1


def test_bad_flags_are_rejected_before_anything_runs(tmp_path):
    bad = train(["--rule", "go", "--run-dir", str(tmp_path / "r")])
    assert bad.returncode == 2 and "--rule" in bad.stderr
    assert not (tmp_path / "r").exists()
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"epochs": 1, "colour": "black"}))
    unknown = train(["--config", str(cfg), "--run-dir", str(tmp_path / "r")])
    assert unknown.returncode == 2 and "colour" in unknown.stderr


def _a_run_with_a_checkpoint(run: Path, workers: int, epochs: int = 1) -> subprocess.Popen:
    """A training run in its own process group, once it has logged ``epochs`` epochs and
    written a checkpoint."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "train.py"), *TINY, "--parallel-workers",
         str(workers), "--epochs", "1000", "--run-dir", str(run)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True,
    )
    latest, metrics = run / "checkpoints" / "latest.pt", run / "metrics.csv"

    def logged() -> int:
        return len(metrics.read_text().splitlines()) - 1 if metrics.exists() else 0

    deadline = time.monotonic() + 180
    while ((not latest.exists() or logged() < epochs) and time.monotonic() < deadline
           and proc.poll() is None):
        time.sleep(0.2)
    assert latest.exists() and logged() >= epochs, f"no checkpoint after {epochs} epoch(s)"
    # 1000 epochs outlast the test, so only a signal can end the run: with 50, one run in a
    # busy two-process suite finished them all (exit 0), and a late signal could not be told
    # from a lost one.
    assert proc.poll() is None, "the run ended before it could be interrupted"
    return proc


def _its_output_once_ended(proc: subprocess.Popen, after: str) -> tuple[str, str]:
    """The stdout and stderr of a run that a signal should end; a run still going 60 s
    ``after`` it is made to print where its threads are, killed, and fails the test."""
    try:
        return proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGUSR1)  # the trainer prints where each thread is
        time.sleep(2)
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the run went on for 60 s after {after}; its output ends:\n{out[-1500:]}\n"
                    f"its stderr, with where its threads were, ends:\n{err[-6000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupt_stops_workers_and_keeps_the_last_checkpoint(tmp_path, how):
    run = tmp_path / "run"
    latest = run / "checkpoints" / "latest.pt"
    # Three epochs in: an exit that skipped multiprocessing's clean-up left the pool's
    # semaphores behind there (checked below), where right after the first one it rarely did.
    proc = _a_run_with_a_checkpoint(run, workers=2, epochs=3)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole group
    else:
        os.kill(proc.pid, signal.SIGTERM)  # what `kill` or a job scheduler does: the trainer alone
    out, err = _its_output_once_ended(proc, after=how)
    assert proc.returncode == (130 if how == "ctrl-c" else 143), err[-8000:]
    assert "interrupted (SIGINT)" in err if how == "ctrl-c" else "interrupted (SIGTERM)" in err
    # The message is the last word: the pool's semaphores were released, so multiprocessing's
    # resource tracker has no leak to report after it.
    assert "leaked" not in err, err[-3000:]
    state = load_checkpoint(latest)
    assert state["epoch"] >= 1
    # No worker is left behind: the process group empties (exited children may take a moment
    # to be reaped once their parent is gone).
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        pytest.fail("processes of the interrupted run are still alive")


def _tiny_in_process(tmp_path, **overrides) -> TrainConfig:
    """A 7x7 run the test's own process plays and trains (no workers), a few seconds an epoch."""
    return TrainConfig(board_size=7, n_in_row=4, model_preset="tiny", device="cpu", selfplay_games=2,
                       games_per_task=2, simulations=8, batch_size=32, steps_per_epoch=2,
                       parallel_workers=0, final_eval_games=0, run_dir=str(tmp_path / "run"),
                       **overrides)


def test_a_stop_signal_whose_exception_was_lost_still_stops_the_run_at_the_next_epoch(tmp_path):
    from alphagomoku.train.loop import Trainer

    cfg = _tiny_in_process(tmp_path, min_buffer_positions=32, epochs=50)
    lines = []
    trainer = Trainer(cfg, log=lines.append, progress=False)
    # The signal came during epoch 2 and its KeyboardInterrupt never surfaced: only the flag is left.
    trainer.stop_requested = lambda: trainer.epoch >= 2
    with pytest.raises(KeyboardInterrupt):
        trainer.run()
    assert trainer.epoch == trainer.saved_epoch == 2
    assert load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")["epoch"] == 2
    assert any("interrupted: workers stopped; the last complete checkpoint is epoch 2" in x
               for x in lines), lines


def test_a_stop_signal_that_surfaces_as_another_error_still_ends_as_an_interrupt(
        tmp_path, monkeypatch, capsys):
    """Raised inside a class body during an import (matplotlib's, at the first plot), the
    signal's KeyboardInterrupt comes out as a RuntimeError from __set_name__: seen once in a
    fresh clone's test run, which then exited 1 with a traceback instead of 143."""
    from alphagomoku.train import cli, loop

    class SignalledTrainer:
        def __init__(self, cfg, resume=False, progress=True):
            self.epoch = 0

        def run(self):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(30)  # the handler raises in here
            except KeyboardInterrupt as e:
                raise RuntimeError("Error calling __set_name__ on 'deprecate_privatize_attribute' "
                                   "instance 'locs' in 'Formatter'") from e

    class FailingTrainer(SignalledTrainer):
        def run(self):
            raise RuntimeError("a real failure, with no signal")

    monkeypatch.setattr(loop, "Trainer", SignalledTrainer)
    assert cli.main([*TINY, "--run-dir", str(tmp_path / "a")]) == 128 + signal.SIGTERM
    assert "train.py: interrupted (SIGTERM)" in capsys.readouterr().err
    monkeypatch.setattr(loop, "Trainer", FailingTrainer)
    with pytest.raises(RuntimeError, match="a real failure"):
        cli.main([*TINY, "--run-dir", str(tmp_path / "b")])


def test_epochs_before_the_buffer_fills_advance_the_schedule_without_a_torch_warning(tmp_path):
    import warnings

    from alphagomoku.train.loop import Trainer

    cfg = _tiny_in_process(tmp_path, min_buffer_positions=10_000, buffer_positions=20_000, epochs=2)
    lines = []
    trainer = Trainer(cfg, log=lines.append, progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.run()
    assert any("no training yet" in x for x in lines), lines  # no optimizer step in either epoch
    assert trainer.scheduler.last_epoch == 2
    assert not [w for w in caught if "lr_scheduler" in str(w.message)]


@pytest.mark.slow
def test_sigusr1_prints_where_the_trainer_is_and_the_run_goes_on(tmp_path):
    proc = _a_run_with_a_checkpoint(tmp_path / "run", workers=1)
    os.kill(proc.pid, signal.SIGUSR1)
    time.sleep(1)
    if proc.poll() is not None:
        out, err = proc.communicate()
        pytest.fail(f"SIGUSR1 ended the run (exit status {proc.returncode}); its stderr ends:\n"
                    f"{err[-8000:]}")
    os.killpg(proc.pid, signal.SIGINT)
    out, err = _its_output_once_ended(proc, after="ctrl-c")
    assert "where each thread is" in err and "train.py" in err, err[-2000:]
    assert proc.returncode == 130


@pytest.mark.slow
def test_a_native_crash_of_the_trainer_says_where_each_thread_was(tmp_path):
    proc = _a_run_with_a_checkpoint(tmp_path / "run", workers=0)
    os.kill(proc.pid, signal.SIGSEGV)  # as a crash inside torch, Numba or a C library would end it
    out, err = _its_output_once_ended(proc, after="SIGSEGV")
    assert proc.returncode == -signal.SIGSEGV
    assert "Fatal Python error: Segmentation fault" in err, err[-2000:]
    assert "most recent call first" in err and "train" in err, err[-2000:]


def test_a_replay_buffer_that_cannot_be_written_stops_the_run_with_a_clear_error(
        tmp_path, monkeypatch, capsys):
    from alphagomoku.train import cli, variants

    def disk_full(path, arrays):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(variants, "write_buffer_file", disk_full)
    run = tmp_path / "run"
    code = cli.main([*TINY, "--parallel-workers", "0", "--epochs", "3", "--run-dir", str(run)])
    err = capsys.readouterr().err
    assert code == 1
    assert "writing the replay buffer of epoch 1 failed: [Errno 28] No space left" in err
    assert "the last checkpoint is whole" in err and "--resume" in err
    # The write of epoch 1 failed while epoch 2 played; its checkpoint was written before.
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["epoch"] >= 1
