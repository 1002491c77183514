"""The learning benchmark and what it stands on: the trainer's time budget and snapshots, named
recipes, and ``scripts/benchmark.py learning`` end to end on a tiny board."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from alphagomoku.bench import UsageError
from alphagomoku.bench import learning
from alphagomoku.train import cli
from alphagomoku.train.budget import Snapshots, budget_spent, read_index
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.recipes import RECIPE_DIR, available_recipes, recipe_path

ROOT = Path(__file__).resolve().parents[1]
TINY = {
    "board_size": 7, "n_in_row": 4, "model_preset": "tiny", "device": "cpu", "parallel_workers": 0,
    "selfplay_games": 4, "games_per_task": 4, "simulations": 8, "batch_size": 32,
    "min_buffer_positions": 32, "buffer_positions": 2000, "steps_per_epoch": 2,
}
# Settings of a run or of the machine rather than of a recipe: configs/plain.json need not pin
# them. The inference backend and the evaluation cache change the speed, not what is learned
# (the cache plays the same games: tests/test_nn_cache.py), so old and new recipes compared on
# one machine both get the faster one.
RUN_SPECIFIC = {"run_dir", "seed", "device", "inference_backend", "inference_amp", "eval_cache",
                "train_amp",
                "time_budget_minutes", "snapshot_minutes",
                # Where and on how many processes a run executes (docs/scaling.md); a one-process
                # run on the pool is the same whatever they say.
                "selfplay_backend", "ray_address", "ray_actor_cpus", "ray_actor_gpus", "ray_max_lag",
                "dist_backend", "dist_timeout", "dist_control_timeout", "lr_scaling",
                # Threads that make the same gradient batches (tests/test_train_prefetch.py).
                "batch_threads",
                # A fine-tune's starting weights and teacher; every recipe learns from scratch.
                "init_weights", "teacher", "teacher_share", "teacher_fade"}


def script(name: str, args: list[str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


# -- the clock and the snapshots -----------------------------------------------------------------
def test_the_budget_is_spent_at_its_minute_not_before(tmp_path):
    assert not budget_spent(0.0, 10_000)  # 0: no budget
    assert not budget_spent(1.0, 59.9)
    assert budget_spent(1.0, 60.0)
    # Six marks of M/6 end exactly at M even when 6 * (M / 6) rounds above M.
    m = 0.23
    assert 6 * (m / 6) * 60 > m * 60  # the rounding this guards against
    assert budget_spent(m, m * 60)
    snaps = Snapshots(tmp_path, every_minutes=m / 6, until_minutes=m)
    assert snaps.due(m * 60 + 30) == pytest.approx([m / 6 * k for k in range(1, 7)])


def test_each_mark_keeps_the_first_epoch_that_ends_after_it(tmp_path):
    from alphagomoku.nn import ModelConfig, PolicyValueNet
    from alphagomoku.nn.io import load_model

    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    snaps = Snapshots(tmp_path, every_minutes=0.5)
    taken = {}
    for epoch, seconds in ((1, 10), (2, 25), (3, 31), (4, 95), (5, 100)):
        taken[epoch] = [e["mark_minutes"] for e in snaps.take(epoch, seconds, model)]
    # 30 s falls in epoch 3; 60 s and 90 s both in epoch 4; 120 s is not reached.
    assert taken == {1: [], 2: [], 3: [0.5], 4: [1.0, 1.5], 5: []}
    index = read_index(tmp_path)
    assert [(e["mark_minutes"], e["epoch"]) for e in index] == [(0.5, 3), (1.0, 4), (1.5, 4)]
    assert all(e["minutes"] >= e["mark_minutes"] for e in index)
    files = [tmp_path / "snapshots" / e["file"] for e in index]
    assert [f.name for f in files] == ["min_000.50.pt", "min_001.00.pt", "min_001.50.pt"]
    assert files[1].read_bytes() == files[2].read_bytes()
    load_model(files[0])  # a file any net:PATH player can load

    # On resume from epoch 3, the marks after it are due again (epoch 4 is played again).
    again = Snapshots(tmp_path, every_minutes=0.5, last_epoch=3)
    assert [e["epoch"] for e in again.entries] == [3]
    assert again.due(95) == [1.0, 1.5]

    # Under a budget of 1.2 minutes the marks end there, however late the last epoch ends.
    budgeted = Snapshots(tmp_path / "budgeted", every_minutes=0.4, until_minutes=1.2)
    assert budgeted.due(500) == pytest.approx([0.4, 0.8, 1.2])


@pytest.mark.slow
def test_a_time_budget_stops_the_run_with_a_resumable_checkpoint_and_snapshots(tmp_path):
    from alphagomoku.train.checkpoint import load_checkpoint
    from alphagomoku.train.metrics import read_metrics

    run = tmp_path / "run"
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items()]
    first = script("train.py", [*flags, "--no-progress", "--epochs", "1000", "--run-dir", str(run),
                                "--time-budget-minutes", "0.05", "--snapshot-minutes", "0.025"])
    assert first.returncode == 0, first.stderr[-3000:]
    assert "time budget spent" in first.stdout
    state = load_checkpoint(run / "checkpoints" / "latest.pt")
    epochs = int(state["epoch"])
    assert 1 <= epochs < 1000
    assert f"done: {epochs} epochs;" in first.stdout  # the epochs run, not --epochs
    # The clock as the checkpoint was written; the budget may run out just after that.
    assert 0 < state["wall_seconds"] <= 60 * read_index(run)[-1]["minutes"]
    assert [int(r["epoch"]) for r in read_metrics(run / "metrics.csv")] == list(range(1, epochs + 1))
    index = read_index(run)
    assert [e["mark_minutes"] for e in index] == [0.025, 0.05]
    assert all(e["minutes"] >= e["mark_minutes"] and 1 <= e["epoch"] <= epochs for e in index)
    assert index[-1]["epoch"] == epochs  # the last mark is the budget's end: the final weights
    assert all((run / "snapshots" / e["file"]).is_file() for e in index)

    # More budget and --resume: the run goes on from its checkpoint, its clock carried over.
    # The new budget leaves room for one more epoch however long the first part took (a busy
    # machine can spend more than a fixed 0.1 minutes there), and reaches two more marks at least.
    budget = max(0.1, round(state["wall_seconds"] / 60 + 0.05, 2))
    again = script("train.py", ["--no-progress", "--run-dir", str(run), "--resume",
                                "--time-budget-minutes", str(budget)])
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"at epoch {epochs}" in again.stdout and "time budget spent" in again.stdout
    # The clock goes on from the checkpoint's: the next epoch ends later than that (the log
    # prints minutes to 0.01, hence 0.3 s of slack; a clock started afresh would read ~1 s).
    minute = re.search(rf"epoch {epochs + 1} \(([0-9.]+) of {budget:g} min\)", again.stdout)
    assert minute and float(minute.group(1)) * 60 > state["wall_seconds"] - 0.3
    resumed = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert resumed["epoch"] > epochs and resumed["wall_seconds"] > state["wall_seconds"]
    later = read_index(run)
    assert later[:2] == index
    # Every mark up to the new budget; a mark the checkpoint's clock had already passed keeps the
    # checkpoint's weights, later ones the resumed epochs'.
    marks = [round(0.025 * k, 6) for k in range(1, 1000) if 0.025 * k <= budget + 1e-9]
    assert [e["mark_minutes"] for e in later] == marks
    assert all(e["epoch"] >= epochs for e in later[2:]) and later[-1]["epoch"] > epochs


# -- recipes -------------------------------------------------------------------------------------
def test_every_recipe_is_a_valid_config_and_plain_pins_every_training_setting():
    assert "plain" in available_recipes()
    for name in available_recipes():
        TrainConfig.from_file(recipe_path(name))
    plain = json.loads((RECIPE_DIR / "plain.json").read_text())
    # A setting added later must be pinned in plain.json to the plain behaviour, or "plain" would
    # silently change with the code's defaults.
    missing = {f.name for f in fields(TrainConfig)} - RUN_SPECIFIC - set(plain)
    assert not missing, f"configs/plain.json does not pin {sorted(missing)}"


def test_train_recipe_loads_the_file_and_flags_still_win():
    parser = cli.build_parser()
    cfg = cli.resolve_config(parser.parse_args(["--recipe", "plain", "--simulations", "5"]))
    expected = TrainConfig.from_file(RECIPE_DIR / "plain.json", simulations=5)
    assert cfg == expected and cfg.simulations == 5
    with pytest.raises(ConfigError, match=r"no recipe named 'nope'.*plain"):
        cli.resolve_config(parser.parse_args(["--recipe", "nope"]))
    with pytest.raises(ConfigError, match="not a recipe name"):
        cli.resolve_config(parser.parse_args(["--recipe", "../configs/plain"]))
    with pytest.raises(SystemExit):  # one source of settings at a time
        parser.parse_args(["--recipe", "plain", "--config", "x.json"])


def test_unknown_recipes_are_refused_with_the_list_by_both_scripts():
    train = script("train.py", ["--recipe", "nope"], timeout=60)
    assert train.returncode == 2 and "no recipe named 'nope'" in train.stderr and "plain" in train.stderr
    bench = script("benchmark.py", ["learning", "--minutes", "1", "--recipe", "nope"], timeout=60)
    assert bench.returncode == 2 and "no recipe named 'nope'" in bench.stderr and "plain" in bench.stderr


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    learning.add_arguments(p)
    return p.parse_args(argv)


def test_benchmark_options_become_a_budgeted_config(tmp_path):
    cfg, label, path = learning.resolve_config(
        _args(["--minutes", "12", "--recipe", "plain", "--board", "9", "--preset", "small",
               "--set", "simulations=32", "--set", "lr=0.001", "--workers", "1"]), tmp_path)
    assert (label, Path(path).name) == ("plain", "plain.json")
    assert (cfg.board_size, cfg.model_preset, cfg.simulations, cfg.lr) == (9, "small", 32, 0.001)
    assert cfg.parallel_workers == 1 and cfg.final_eval_games == 0
    assert cfg.time_budget_minutes == 12 and cfg.snapshot_minutes == 2 and cfg.epochs >= 10**5
    for argv, message in ((["--minutes", "0"], "--minutes"),
                          (["--minutes", "1", "--set", "simulation=3"], "KEY=VALUE"),
                          (["--minutes", "1", "--set", "simulations=many"], "not a whole number"),
                          (["--minutes", "1", "--board", "99"], "board-size")):
        with pytest.raises(UsageError, match=message):
            learning.resolve_config(_args(argv), tmp_path)
    with pytest.raises(UsageError, match="even"):
        learning._ladder(_args(["--games", "3"]))
    with pytest.raises(UsageError, match="unknown player spec"):
        learning._ladder(_args(["--rung", "pur:10"]))
    assert learning._ladder(_args(["--engine", "pbrain-x --fast"]))[-1] == "engine:pbrain-x --fast"


# -- the benchmark end to end --------------------------------------------------------------------
def test_the_speed_probe_times_the_tiny_network_on_the_backend_cpu_workers_use():
    from alphagomoku.bench.machine import forward_speed
    from alphagomoku.nn.inference_backend import resolve_backend

    assert forward_speed(0) is None  # --speed-probe-seconds 0 skips it
    figure = forward_speed(0.05, repeats=2)
    assert figure["backend"] == resolve_backend("onnx", "cpu")[0]
    assert len(figure["positions_per_second"]) == 2 and figure["median"] > 0


@pytest.mark.slow
def test_learning_benchmark_reports_every_rung_by_colour_and_replays_and_compares(tmp_path):
    config = tmp_path / "tiny.json"
    config.write_text(json.dumps(TINY))
    run = tmp_path / "run"
    ladder = ["--games", "4", "--rung", "random", "--rung", "pure:20", "--net-simulations", "4",
              "--workers", "0", "--opening-moves", "2"]
    done = script("benchmark.py", ["learning", "--minutes", "0.05", "--config", str(config),
                                   "--out", str(run), "--snapshots", "2", "--json",
                                   "--speed-probe-seconds", "0.05", *ladder])
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)["learning"]
    assert report == json.loads((run / "learning.json").read_text())
    assert report["recipe"] == "tiny" and report["minutes"] == 0.05
    assert report["training"]["epochs"] == report["snapshots"][-1]["epoch"] >= 1
    # The clock is reported to 3 decimals, the snapshot's minute to 4.
    assert 0 < report["training"]["clock_minutes"] <= report["snapshots"][-1]["minutes"] + 0.0005
    assert report["snapshots"][-1]["minutes"] >= 0.05
    assert [e["mark_minutes"] for e in report["snapshots"]] == [0.025, 0.05]
    # The machine's speed, timed before and after training, with each of its three figures.
    speed = report["training"]["machine_speed"]
    assert list(speed) == ["before_training", "after_training"]
    for figure in speed.values():
        assert figure["probe"] == "tiny network, 15x15, batch 64, one thread"
        rates = figure["positions_per_second"]
        assert len(rates) == 3 and min(rates) > 0 and min(rates) <= figure["median"] <= max(rates)
    assert done.stderr.count("machine speed (tiny network") == 2
    # Progress without a terminal: a line per epoch and per match, no progress bars.
    assert "epoch 1 (" in done.stderr and "vs pure:20: +" in done.stderr and "\r" not in done.stderr
    for entry in report["snapshots"]:
        assert list(entry["results"]) == ["random", "pure:20"]
        for rung, s in entry["results"].items():
            b, w = s["as_black"], s["as_white"]
            assert s["games"] == s["wins"] + s["draws"] + s["losses"] == 4
            assert b["games"] == w["games"] == 2
            for key in ("wins", "draws", "losses"):
                assert b[key] + w[key] == s[key]
            for part in (s, b, w):
                assert part["score"] == pytest.approx((part["wins"] + part["draws"] / 2) / part["games"])
                assert part["elo"]["lower"] <= part["elo"]["elo"] <= part["elo"]["upper"]
            assert s["elo_by_pairs"]["games"] == 4 and s["elo_by_pairs"]["score"] == pytest.approx(s["score"])
            games = run / "ladder" / f"epoch_{entry['epoch']:06d}"
            assert len(list(games.glob(f"*_{rung.replace(':', '_')}/games/*.psq"))) == 4
    try:
        import matplotlib  # noqa: F401

        assert report["png"] and Path(report["png"]).stat().st_size > 0
    except ImportError:
        assert report["png"] is None and "matplotlib" in report["png_note"]

    # --evaluate replays nothing that was played with the same settings.
    again = script("benchmark.py", ["learning", "--evaluate", str(run), "--json", *ladder])
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["learning"]["snapshots"] == report["snapshots"]
    assert json.loads(again.stdout)["learning"]["training"]["machine_speed"] == speed
    assert "vs random: +" not in again.stderr
    refused = script("benchmark.py", ["learning", "--evaluate", str(run), "--minutes", "3"])
    assert refused.returncode == 2 and "--minutes" in refused.stderr

    png = tmp_path / "compare.png"
    both = script("benchmark.py", ["learning", "--compare", str(run / "learning.json"), str(run),
                                   "--png", str(png), "--json"])
    assert both.returncode == 0, both.stderr[-3000:]
    finals = json.loads(both.stdout)["learning"]["final_scores"]
    assert len(finals) == 2  # the same run twice still gets two labels
    assert all(f["epoch"] == report["snapshots"][-1]["epoch"] for f in finals.values())
    if json.loads(both.stdout)["learning"]["png"]:
        assert png.stat().st_size > 0


def test_the_colour_share_check_reads_games_from_openings_after_the_third_epoch():
    rows = [{"epoch": 1, "opening_games": 10, "opening_black_wins": 10, "opening_white_wins": 0},
            {"epoch": 4, "opening_games": 10, "opening_black_wins": 3, "opening_white_wins": 7},
            {"epoch": 5, "opening_games": 0, "opening_black_wins": 0, "opening_white_wins": 0},
            {"epoch": 6, "opening_games": 20, "opening_black_wins": 12, "opening_white_wins": 6}]
    assert learning.colour_share(rows)["max"] == {"share": 0.7, "colour": "white", "epoch": 4,
                                                  "games": 10}
    assert learning.colour_share(rows[:1]) is None


def test_timed_rungs_and_every_variant_get_their_own_results(tmp_path):
    """A rung with @SECONDS is played at equal time; a run on several boards and rules plays the
    ladder on each, the main one's results under the rung's name and the others' with the
    variant's."""
    from alphagomoku.bench.learning import play_ladder, split_timed_rung, variant_key
    from alphagomoku.game import GameConfig
    from alphagomoku.nn import ModelConfig, PolicyValueNet
    from alphagomoku.nn.io import save_model

    assert split_timed_rung("net:a.pt@0.5") == ("net:a.pt", 0.5)
    assert split_timed_rung("pure:100") == ("pure:100", None)
    with pytest.raises(ValueError, match="positive number"):
        split_timed_rung("random@-1")
    assert split_timed_rung("engine:/opt/me@home/pbrain") == ("engine:/opt/me@home/pbrain", None)
    assert variant_key("random", None) == "random"
    assert variant_key("random", "9x9-renju") == "random on 9x9-renju"

    (tmp_path / "snapshots").mkdir()
    save_model(tmp_path / "snapshots" / "min_1.pt",
               PolicyValueNet(ModelConfig.preset("tiny", 7, arch="kata")))
    dense = tmp_path / "dense7.pt"   # a network with dense heads: 7x7 only
    save_model(dense, PolicyValueNet(ModelConfig.preset("tiny", 7)))
    report = {"ladder": {"games": 2, "net_simulations": 4, "opening_moves": 2, "seed": 0,
                         "rungs": ["random", "pure:10@0.05", f"net:{dense}:4"]},
              "snapshots": [{"epoch": 1, "file": "min_1.pt", "mark_minutes": 1.0}]}
    games = [GameConfig(width=7, n_in_row=4), GameConfig(width=9, n_in_row=4, rule="standard")]
    lines = []
    play_ladder(report, tmp_path, games, workers=0, device="cpu", progress=False,
                log=lines.append, save=lambda: None)
    results = report["snapshots"][0]["results"]
    assert list(results) == ["random", "pure:10@0.05", f"net:{dense}:4", "random on 9x9-standard",
                             "pure:10@0.05 on 9x9-standard"]
    assert all(r["games"] == 2 for r in results.values())
    # The dense network cannot play 9x9: that match is left out, and said so.
    assert any(f"net:{dense}:4 on 9x9-standard: not played" in line for line in lines)
    played = sorted(p.name for p in (tmp_path / "ladder" / "epoch_000001").iterdir()
                    if (p / "result.json").exists())
    assert len(played) == 5 and sum("9x9-standard" in p for p in played) == 2
    for name in played:
        psq = next((tmp_path / "ladder" / "epoch_000001" / name / "games").glob("*.psq"))
        size = 9 if "9x9" in name else 7
        assert psq.read_text().splitlines()[0].split()[1].startswith(f"{size}x{size}")
