"""One run on several board sizes and rules: the variants and their weights, the tasks' share
of each, one buffer per variant, and a mixed run with spawn workers that trains and resumes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from alphagomoku.game import GameConfig
from alphagomoku.train.buffer import BufferFileError, ReplayBuffer
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.game_files import load_games
from alphagomoku.train.variants import (
    VariantBuffers, assign_variants, parse_weighted, run_variants,
)
from tests.test_train_parts import random_record

ROOT = Path(__file__).resolve().parents[1]


def test_weights_multiply_and_the_main_variant_comes_first():
    vs = run_variants(9, "renju", 5, "7:1,9:3", "freestyle,renju:2")
    assert [v.name for v in vs] == ["9x9-renju", "9x9-freestyle", "7x7-renju", "7x7-freestyle"]
    np.testing.assert_allclose([v.weight for v in vs], np.array([6, 3, 2, 1]) / 12)
    assert [v.name for v in run_variants(15, "freestyle", 5)] == ["15x15-freestyle"]
    assert parse_weighted("a, b:0.5", "x") == [("a", 1.0), ("b", 0.5)]


@pytest.mark.parametrize("sizes, rules, words", [
    ("9,11", "", "must include --board-size"),
    ("", "standard,renju", "must include --rule"),
    ("15,x", "", "whole numbers"),
    ("15:0", "", "must be positive"),
    ("15,15", "", "listed twice"),
    ("15:a", "", "must be a number"),
])
def test_a_bad_mix_is_refused_with_its_flag(sizes, rules, words):
    with pytest.raises(ValueError, match=words):
        run_variants(15, "freestyle", 5, sizes, rules)


def test_a_variant_mix_names_its_pairs_and_no_others():
    vs = run_variants(15, "freestyle", 5, mix="20/freestyle, 15/renju:2, 15/freestyle:3")
    assert [v.name for v in vs] == ["15x15-freestyle", "15x15-renju", "20x20-freestyle"]
    np.testing.assert_allclose([v.weight for v in vs], np.array([3, 2, 1]) / 6)


@pytest.mark.parametrize("mix, sizes, words", [
    ("20/freestyle", "", "must include 15/freestyle"),
    ("15/freestyle,20", "", "SIZE/RULE"),
    ("15/freestyle,x/renju", "", "SIZE/RULE"),
    ("15/freestyle,15/freestyle", "", "listed twice"),
    ("15/freestyle", "15,20", "leave out --board-sizes"),
])
def test_a_bad_variant_mix_is_refused_with_its_flag(mix, sizes, words):
    with pytest.raises(ValueError, match=words):
        run_variants(15, "freestyle", 5, sizes, mix=mix)


def test_the_config_checks_a_variant_mix():
    with pytest.raises(ConfigError, match="--variant-mix: .*--model-arch kata"):
        TrainConfig(variant_mix="15/freestyle,15/renju")
    with pytest.raises(ConfigError, match="--variant-mix: unknown rule 'gomoku'"):
        TrainConfig(model_arch="kata", variant_mix="15/freestyle,15/gomoku")
    with pytest.raises(ConfigError, match="--variant-mix: board width must be an integer from 5 to 22"):
        TrainConfig(model_arch="kata", variant_mix="15/freestyle,30/freestyle")
    cfg = TrainConfig(model_arch="kata", variant_mix="15/freestyle:2,20/freestyle,15/standard,15/renju:2")
    assert [v.name for v in cfg.variants] == ["15x15-freestyle", "15x15-standard", "15x15-renju",
                                              "20x20-freestyle"]


def test_the_config_checks_the_mix():
    with pytest.raises(ConfigError, match="--model-arch kata"):
        TrainConfig(board_sizes="15,20")
    with pytest.raises(ConfigError, match="--model-arch kata"):
        TrainConfig(rules="freestyle,renju")
    with pytest.raises(ConfigError, match="--board-sizes"):
        TrainConfig(model_arch="kata", board_sizes="15,30")
    with pytest.raises(ConfigError, match="renju"):
        TrainConfig(model_arch="kata", board_size=9, n_in_row=4, rules="freestyle,renju")
    cfg = TrainConfig(model_arch="kata", board_sizes="15,20:0.5", rules="freestyle,standard")
    assert len(cfg.variants) == 4 and cfg.variants[0].game == cfg.game


def test_tasks_follow_the_weights(rng):
    vs = run_variants(9, "freestyle", 5, "7:1,9:3")
    plan = assign_variants(vs, 40, rng)
    assert len(plan) == 40
    assert sum(v.name == "9x9-freestyle" for v in plan) == 30
    # Three tasks at shares 3/4 and 1/4: two and none for sure, the third drawn so that each
    # variant's expected count is its share, 2.25.
    counts = [sum(v.name == "9x9-freestyle" for v in assign_variants(vs, 3, rng))
              for _ in range(1000)]
    assert set(counts) == {2, 3} and 2.18 < np.mean(counts) < 2.32
    # Several left-over tasks: each variant still gets its share on average.
    six = run_variants(15, "freestyle", 5, "15:3,20:1", "freestyle,standard,renju:2")
    totals = np.zeros(len(six))
    for _ in range(4000):
        for v in assign_variants(six, 2, rng):
            totals[six.index(v)] += 1
    np.testing.assert_allclose(totals / 4000, [2 * v.weight for v in six], atol=0.03)


def test_each_variant_has_its_buffer_and_batches_come_in_proportion(tmp_path, rng):
    vs = run_variants(7, "freestyle", 4, "5,7")
    buffers = VariantBuffers(vs, 1000)
    assert [b.capacity for b in buffers.buffers.values()] == [500, 500]
    small, large = GameConfig(width=5, n_in_row=4), GameConfig(width=7, n_in_row=4)
    for _ in range(6):
        buffers.of(large).add_game(random_record(large, rng))
    buffers.of(small).add_game(random_record(small, rng))
    with pytest.raises(ValueError, match="not one of this run's variants"):
        buffers.of(GameConfig(width=6, n_in_row=4))
    share = len(buffers.of(large)) / len(buffers)
    picks = [buffers.pick(rng)[0].name for _ in range(2000)]
    assert abs(picks.count("7x7-freestyle") / 2000 - share) < 0.04
    buffers.save(tmp_path, epoch=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["replay-5x5-freestyle.npz", "replay.npz"]
    again = VariantBuffers(vs, 1000)
    assert again.load(tmp_path) == 3
    for name, buf in buffers.buffers.items():
        np.testing.assert_array_equal(again.buffers[name].boards[:len(buf)], buf.boards[:len(buf)])


def test_a_buffer_file_of_another_rule_is_refused(tmp_path, rng):
    game = GameConfig(width=7, n_in_row=4)
    buf = ReplayBuffer(game, 100)
    buf.add_game(random_record(game, rng))
    buf.save(tmp_path / "r.npz", 1)
    with pytest.raises(BufferFileError, match="standard"):
        ReplayBuffer.load(tmp_path / "r.npz", GameConfig(width=7, n_in_row=4, rule="standard"), 100)


MIXED = ["--model-arch", "kata", "--board-size", "7", "--board-sizes", "7,9", "--n-in-row", "4",
         "--rules", "freestyle,standard", "--model-preset", "tiny", "--device", "cpu",
         "--selfplay-games", "8", "--games-per-task", "2", "--simulations", "8",
         "--batch-size", "32", "--min-buffer-positions", "32", "--steps-per-epoch", "3",
         "--parallel-workers", "2", "--no-progress"]


@pytest.mark.slow
def test_a_mixed_run_trains_and_resumes(tmp_path):
    run = tmp_path / "run"

    def train(*args):
        return subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), *MIXED,
                               "--run-dir", str(run), *args],
                              capture_output=True, text=True, timeout=400, cwd=ROOT)

    first = train("--epochs", "2")
    assert first.returncode == 0, first.stderr[-3000:]
    names = {p.name for p in run.iterdir() if p.name.startswith("replay")}
    assert names <= {"replay.npz", "replay-7x7-standard.npz", "replay-9x9-freestyle.npz",
                     "replay-9x9-standard.npz"} and len(names) >= 2
    # Every buffer holds positions of its own size and rule; every game file, games of its own.
    for name in names:
        key = "7x7-freestyle" if name == "replay.npz" else name[len("replay-"):-len(".npz")]
        size, rule = key.split("-")
        game = GameConfig(width=int(size.split("x")[0]), n_in_row=4, rule=rule)
        buf, epoch = ReplayBuffer.load(run / name, game, 10_000)
        assert epoch == 2 and len(buf) > 0
    for path in (run / "games").iterdir():
        game, games = load_games(path)
        assert games and all(max(g["moves"]) < game.area for g in games)
    total = sum(len(load_games(p)[1]) for p in (run / "games").iterdir())
    assert total == 16
    again = train("--epochs", "3", "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed" in again.stdout and "epoch 3/3" in again.stdout
