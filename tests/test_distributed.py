"""scripts/train.py under ``torchrun --standalone --nproc-per-node 2`` (gloo on the CPU).

Every launch runs under a timeout, so a hang fails the test instead of stalling CI. Faults are
injected on one rank through ALPHAGOMOKU_DIST_FAULT (alphagomoku.train.distributed.step_hook).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.train import distributed
from alphagomoku.train.checkpoint import load_checkpoint
from alphagomoku.train.metrics import read_metrics

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--board-size", "7", "--n-in-row", "4", "--model-preset", "tiny", "--device", "cpu",
    "--selfplay-games", "4", "--games-per-task", "4", "--simulations", "8",
    "--batch-size", "16", "--min-buffer-positions", "16", "--buffer-positions", "2000",
    "--steps-per-epoch", "3", "--no-progress", "--parallel-workers", "0",
]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]


def launch(args: list[str], run: Path, fault: str = "", timeout: float = 180, ranks: int = 2):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.pop(distributed.FAULT_ENV, None)
    if fault:
        env[distributed.FAULT_ENV] = fault
    prefix = TORCHRUN if ranks == 2 else [sys.executable]
    t0 = time.monotonic()
    done = subprocess.run([*prefix, str(ROOT / "scripts" / "train.py"), *TINY, "--run-dir", str(run), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    done.seconds = time.monotonic() - t0
    done.output = done.stdout + done.stderr
    return done


def epoch_lines(output: str) -> dict:
    """{(rank, epoch): (steps, buffer size, parameters crc, buffer crc)} from the ranks' lines."""
    found = re.findall(r"\[rank (\d)\] epoch (\d+): (\d+) steps, buffer (\d+) positions, "
                       r"parameters crc32 (\w+), buffer crc32 (\w+)", output)
    return {(int(r), int(e)): (int(s), int(b), c, bc) for r, e, s, b, c, bc in found}


@pytest.mark.slow
def test_two_ranks_agree_bit_for_bit_and_their_checkpoint_resumes_on_any_world_size(tmp_path):
    run = tmp_path / "run"
    first = launch(["--epochs", "2"], run)
    assert first.returncode == 0, first.output[-4000:]
    lines = epoch_lines(first.output)
    for epoch in (1, 2):
        # Same steps, same buffer, same parameters to the bit on both ranks.
        assert lines[(0, epoch)] == lines[(1, epoch)], lines
        assert lines[(0, epoch)][0] == 3
    assert lines[(0, 1)][2] != lines[(0, 2)][2]  # and the weights did change
    assert first.output.count("configuration:") == 1  # rank 0 speaks for the run
    rows = read_metrics(run / "metrics.csv")
    assert [int(r["epoch"]) for r in rows] == [1, 2] and all(int(r["train_steps"]) == 3 for r in rows)

    state = load_checkpoint(run / "checkpoints" / "latest.pt")
    raw = torch.load(run / "checkpoints" / "latest.pt", map_location="cpu", weights_only=True)
    assert not [k for k in raw["model"] if k.startswith("module.")]
    assert state["world_size"] == 2 and state["epoch"] == 2
    plain = PolicyValueNet(ModelConfig.from_dict(raw["model_config"]))
    plain.load_state_dict(raw["model"])  # strict: every key of a plain model, nothing more
    # sqrt(2) x --lr, times the cosine factor of epoch 2 of 2.
    assert state["optimizer"]["param_groups"][0]["initial_lr"] == pytest.approx(2e-3 * np.sqrt(2))

    same = launch(["--epochs", "3", "--resume"], run)
    assert same.returncode == 0, same.output[-4000:]
    assert "at epoch 2" in same.output and "epoch 3/3" in same.output
    lines = epoch_lines(same.output)
    assert lines[(0, 3)] == lines[(1, 3)]

    alone = launch(["--epochs", "4", "--resume"], run, ranks=1)
    assert alone.returncode == 0, alone.output[-4000:]
    assert "trained on 2 rank(s), this run has 1: learning rate rescaled to 0.002" in alone.output
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["epoch"] == 4


FAULT_ARGS = ["--epochs", "1", "--dist-timeout", "8", "--dist-control-timeout", "20"]


@pytest.mark.slow
def test_a_stalled_rank_is_named_within_the_timeout(tmp_path):
    done = launch(FAULT_ARGS, tmp_path / "run", fault="stall:rank=1:epoch=1")
    assert done.returncode != 0
    assert "injected fault: stall" in done.output
    assert "Ranks 1 failed to pass monitoredBarrier" in done.output, done.output[-4000:]
    assert "docs/troubleshooting.md#a-rank-stalled-or-died" in done.output
    # 8 s of all-reduce timeout and 8 s of diagnosis after start-up, not the 10 min default.
    assert done.seconds < 120


@pytest.mark.slow
def test_a_rank_that_raises_shows_its_traceback_and_stops_the_others(tmp_path):
    done = launch(FAULT_ARGS, tmp_path / "run", fault="raise:rank=1:epoch=1")
    assert done.returncode != 0
    root = done.output.split("Root Cause")[1]
    assert "rank      : 1" in root and "Traceback" in root
    assert "RuntimeError: injected fault on rank 1 at epoch 1" in root


@pytest.mark.slow
def test_when_rank_0_dies_the_others_do_not_wait_for_it(tmp_path):
    done = launch(FAULT_ARGS, tmp_path / "run", fault="die:rank=0:epoch=1")
    assert done.returncode != 0
    root = done.output.split("Root Cause")[1]
    assert "rank      : 0" in root and "SIGKILL" in root
    assert done.seconds < 90


@pytest.mark.slow
def test_ranks_whose_buffers_differ_stop_with_both_counts(tmp_path):
    done = launch(FAULT_ARGS, tmp_path / "run", fault="drop:rank=1:epoch=1")
    assert done.returncode != 0
    assert "the ranks disagree after epoch 1: rank(s) 1 differ from rank 0" in done.output, done.output[-4000:]
    assert "docs/troubleshooting.md#the-ranks-disagree" in done.output


# -- the pieces, without launching -----------------------------------------------------------------
def test_torchrun_environment_is_read_and_checked():
    assert distributed.torchrun_env({}) is None
    assert distributed.torchrun_env({"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}) == (1, 4, 1)
    with pytest.raises(distributed.DistributedError, match="outside WORLD_SIZE"):
        distributed.torchrun_env({"RANK": "4", "WORLD_SIZE": "4"})
    with pytest.raises(distributed.DistributedError, match="not integers"):
        distributed.torchrun_env({"RANK": "x", "WORLD_SIZE": "4"})


def test_learning_rate_scaling_rules():
    assert distributed.lr_factor("sqrt", 4) == 2.0
    assert distributed.lr_factor("linear", 4) == 4.0
    assert distributed.lr_factor("none", 4) == 1.0
    assert distributed.lr_factor("linear", 1) == 1.0


def test_every_rank_draws_the_same_index_set_and_takes_a_disjoint_slice():
    class Buf:
        def __len__(self):
            return 1000

    slices = []
    for rank in range(3):
        d = object.__new__(distributed.Distributed)
        d.rank, d.world_size, d.seed = rank, 3, 7
        slices.append(d.sample(Buf(), 16, None, epoch=2, step=5))
    shared = np.random.default_rng([7, 2, 5]).integers(0, 1000, size=(3, 16))
    np.testing.assert_array_equal(np.stack(slices), shared)


def test_a_pinned_gpu_under_torchrun_is_refused_with_the_fix():
    d = object.__new__(distributed.Distributed)
    d.rank, d.world_size, d.local_rank = 1, 2, 1
    with pytest.raises(distributed.DistributedError, match="--device cuda"):
        d.device_request("cuda:0")
    assert d.device_request("cpu") == "cpu"


def test_an_unknown_fault_is_refused():
    with pytest.raises(distributed.DistributedError, match="unknown fault"):
        distributed._parse_fault("explode:rank=1")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the choice on a machine without CUDA")
def test_without_a_gpu_the_ranks_use_gloo_and_a_cuda_request_is_left_to_select_device():
    from alphagomoku.train.config import TrainConfig

    d = object.__new__(distributed.Distributed)
    d.rank, d.world_size, d.local_rank = 0, 2, 0
    assert d._backend(TrainConfig(device="auto")) == "gloo"
    assert d.device_request("auto") == "cpu"
    assert d._backend(TrainConfig(device="cuda")) == "gloo"
    assert d.device_request("cuda") == "cuda"  # select_device then says why CUDA is missing
    assert d._backend(TrainConfig(device="cpu", dist_backend="nccl")) == "nccl"  # as asked
