"""Progress in a terminal is a tqdm bar; in a log it is a plain line every few seconds and one at
the end, with the counts."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tqdm import tqdm

from alphagomoku import progress as pg

ROOT = Path(__file__).resolve().parents[1]


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_a_line_per_interval_and_a_final_one():
    out, clock = io.StringIO(), FakeClock()
    bar = pg.LineProgress(total=1000, desc="self-play 3", unit="game", interval=10, stream=out,
                          clock=clock)
    for i in range(1000):  # 1,000 updates over 35 simulated seconds
        clock.now += 0.035
        bar.update(1)
        bar.set_postfix({"B": "50%", "pos/s": 120})
    bar.close()
    bar.close()  # a second close adds nothing
    lines = out.getvalue().splitlines()
    assert len(lines) == 4, lines  # at 10, 20 and 30 s, then the end
    assert lines[0].startswith("self-play 3: 286/1000 games, 10.0 s, 28.6 games/s")
    assert lines[-1] == "self-play 3: 1000/1000 games done, 35.0 s, 28.6 games/s, B=50%, pos/s=120"
    assert "\r" not in out.getvalue()


def test_iterating_prints_only_the_final_line_when_quick():
    out = io.StringIO()
    items = list(pg.progress(range(5), desc="training", unit="step", stream=out, interval=60))
    assert items == [0, 1, 2, 3, 4]
    assert out.getvalue().splitlines()[0].startswith("training: 5/5 steps done, ")


def test_a_terminal_gets_tqdm_and_disabled_gets_nothing():
    bar = pg.progress(total=3, desc="x", stream=Terminal())
    assert isinstance(bar, tqdm)
    bar.close()
    out = io.StringIO()
    silent = pg.progress(range(3), total=3, disable=True, stream=out)
    assert list(silent) == [0, 1, 2]
    silent.update(2)
    silent.set_postfix_str("A +1")
    silent.close()
    assert out.getvalue() == ""
    with pg.progress(total=2, desc="arena", unit="game", stream=out) as bar:
        bar.set_postfix_str("A +1 =0 -0", refresh=False)
        bar.update(1)
    assert out.getvalue().startswith("arena: 1/2 games done, ") and out.getvalue().endswith("A +1 =0 -0\n")


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(pg.INTERVAL_VARIABLE, raising=False)
    assert pg.default_interval() == 10.0
    monkeypatch.setenv(pg.INTERVAL_VARIABLE, "2.5")
    assert pg.default_interval() == 2.5
    assert pg.progress(total=1, stream=io.StringIO()).interval == 2.5
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv(pg.INTERVAL_VARIABLE, bad)
        with pytest.raises(ValueError, match=pg.INTERVAL_VARIABLE):
            pg.default_interval()


@pytest.mark.slow
def test_a_training_log_is_a_few_plain_lines(tmp_path):
    env = {**os.environ, pg.INTERVAL_VARIABLE: "1000"}
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--board-size", "7", "--n-in-row", "4",
         "--model-preset", "tiny", "--device", "cpu", "--parallel-workers", "0", "--selfplay-games",
         "4", "--games-per-task", "2", "--simulations", "4", "--batch-size", "16",
         "--min-buffer-positions", "16", "--steps-per-epoch", "3", "--epochs", "2",
         "--run-dir", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "\r" not in out.stderr
    progress_lines = [line for line in out.stderr.splitlines()
                      if line.startswith(("self-play", "training:"))]
    assert [line.split(",")[0] for line in progress_lines] == [
        "self-play 1: 4/4 games done", "training: 3/3 steps done",
        "self-play 2: 4/4 games done", "training: 3/3 steps done"]
