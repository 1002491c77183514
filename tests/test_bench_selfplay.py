"""scripts/benchmark.py: the self-play figures come out, as JSON, on a tiny setting."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_selfplay_benchmark_reports_speed_and_network_share_per_backend():
    from alphagomoku.nn.inference_backend import onnx_problem

    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay", "--json", "--preset", "tiny",
         "--board-size", "7", "--simulations", "4", "--games-per-worker", "2", "--workers", "1,2",
         "--repeats", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    r = data["selfplay"]
    assert data["machine"]["cpu_count"] >= 1
    backends = ["torch"] if onnx_problem() else ["torch", "onnx"]
    assert r["backends"] == ",".join(backends)
    for b in backends:
        assert r[f"{b}_workers1_games"] == 2 and r[f"{b}_workers2_games"] == 4
        for w in (1, 2):
            assert r[f"{b}_workers{w}_positions_per_second"] > 0
            # CPU time is at most wall time per worker, so the per-CPU-second speed is no lower.
            assert r[f"{b}_workers{w}_positions_per_cpu_second"] >= \
                r[f"{b}_workers{w}_positions_per_second"] / w * 0.99
            assert 0 < r[f"{b}_workers{w}_network_share"] <= 1
            assert r[f"{b}_workers{w}_mean_batch"] >= 1
        assert r[f"{b}_speedup_2_vs_1"] > 0 and r[f"{b}_raw_forward_per_second_at_batch"] > 0
        for w in (1, 2):
            runs = r[f"{b}_workers{w}_positions_per_second_runs"]
            assert len(runs) == 2 and r[f"{b}_workers{w}_positions_per_second"] == pytest.approx(
                sum(runs) / 2)  # the median of two
    if "onnx" in backends:
        assert r["backends_left_out"] == "none"
        paired = [o / t for o, t in zip(r["onnx_workers2_positions_per_second_runs"],
                                        r["torch_workers2_positions_per_second_runs"])]
        assert r["onnx_over_torch_workers2_runs"] == pytest.approx(paired)
        assert r["onnx_over_torch_workers2"] == pytest.approx(sum(paired) / 2)
        assert len(r["onnx_over_torch_cpu_workers1_runs"]) == 2 and r["onnx_over_torch_cpu_workers1"] > 0
    else:
        assert r["backends_left_out"].startswith("onnx left out: onnxruntime or onnx is not installed")


def test_profile_says_where_a_workers_time_goes():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay", "--json", "--profile",
         "--backends", "torch", "--board-size", "7", "--simulations", "8", "--games-per-worker", "3",
         "--vcf-plane-budget", "20"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)["selfplay"]
    assert r["torch_positions_per_second"] > 0 and 0 < r["torch_network_share"] < 1
    assert r["torch_gather_us_per_leaf"] > 0 and r["torch_apply_us_per_leaf"] > 0
    # Profile rows as "file:line(function)". Which rows make the top 12 on a 7x7 board moves
    # with the machine (the search kernels are a few percent there), so only their form is
    # checked; the kernels' own rows are what gather_us_per_leaf sums.
    names = [name for name, _ in r["torch_top_own_seconds"]]
    assert len(names) == 12 and all(re.fullmatch(r".+:\d+\(.+\)", name) for name in names)
    seconds = [sec for _, sec in r["torch_top_own_seconds"]]
    assert seconds == sorted(seconds, reverse=True)
    assert not any(k.startswith("onnx_") for k in r)  # only the backend asked for
    tenths = r["torch_mean_batch_by_tenth"]
    assert len(tenths) == 10 and all(b >= 1 for b in tenths)


def test_profile_against_the_stand_in_device_times_the_plane_budget_on_the_same_trees():
    """Its answers ignore the VCF planes, so two budgets build the same trees and send the same
    batches: only the kernels' work differs."""
    runs = {}
    for budget in ("0", "20"):
        out = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay", "--json",
             "--profile", "--simulated-device", "0,0", "--board-size", "7", "--simulations", "8",
             "--games-per-worker", "3", "--vcf-plane-budget", budget],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        runs[budget] = json.loads(out.stdout)["selfplay"]
    for r in runs.values():
        assert r["simulated_gather_us_per_leaf"] > 0 and r["simulated_apply_us_per_leaf"] > 0
        assert not any(k.startswith(("torch_", "onnx_")) for k in r)
    assert runs["0"]["simulated_mean_batch_by_tenth"] == runs["20"]["simulated_mean_batch_by_tenth"]


def test_selfplay_benchmark_sets_int8_beside_fp32():
    from alphagomoku.nn.inference_backend import onnx_problem

    if onnx_problem():
        pytest.skip(onnx_problem())
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay", "--json", "--preset", "tiny",
         "--board-size", "7", "--simulations", "8", "--games-per-worker", "4", "--workers", "1",
         "--repeats", "1", "--backends", "onnx,onnx-int8"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)["selfplay"]
    assert r["backends"] == "onnx,onnx-int8" and r["onnx-int8_workers1_games"] == 4
    ratio = r["onnx-int8_workers1_positions_per_second"] / r["onnx_workers1_positions_per_second"]
    assert r["int8_over_fp32_workers1"] == pytest.approx(ratio)
    assert r["int8_over_fp32_raw_forward"] == pytest.approx(
        r["onnx-int8_raw_forward_per_second_at_batch"] / r["onnx_raw_forward_per_second_at_batch"])


def test_repeats_must_be_positive():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay",
                          "--repeats", "0"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "expected a positive integer, got '0'" in out.stderr


def test_backends_option_is_checked():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay",
                          "--backends", "torch,tensorrt"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "expected some of torch, onnx, onnx-int8" in out.stderr


def test_unknown_benchmark_is_a_clear_error():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "trees"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "invalid choice: 'trees'" in out.stderr


def test_scale_benchmark_times_pool_and_ray_on_the_same_games():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark.py"), "scale", "--json", "--preset", "tiny",
         "--board-size", "7", "--simulations", "4", "--games-per-worker", "2", "--tasks-per-worker", "1",
         "--workers", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)["scale"]
    assert r["pool1_positions_per_second"] > 0
    if "ray" in r:  # Ray not installed: said so, pool figures only
        assert "not installed" in r["ray"]
        return
    # Same seeds, same weights: the two backends play the very same games.
    assert r["ray1_positions"] == r["pool1_positions"]
    assert r["ray1_vs_pool1"] > 0


def _selfplay_args(*argv):
    import argparse

    from alphagomoku.bench import selfplay

    p = argparse.ArgumentParser()
    selfplay.add_arguments(p)
    return p.parse_args(list(argv))


def test_selfplay_benchmark_times_the_recipes_workers():
    """The workers are built as training builds them, from the recipe, flags overriding it."""
    from alphagomoku.bench.selfplay import recipe_config
    from alphagomoku.device import select_device
    from alphagomoku.train.config import TrainConfig
    from alphagomoku.train.selfplay_epoch import worker_spec
    from alphagomoku.train.recipes import recipe_path

    hour = TrainConfig.from_file(recipe_path("cpu-hour"))
    cfg = recipe_config(_selfplay_args())
    assert (cfg.model_preset, cfg.simulations, cfg.games_per_task, cfg.search) == (
        hour.model_preset, hour.simulations, hour.games_per_task, hour.search)
    spec = worker_spec(cfg, select_device("cpu"))
    assert spec.search.root_rule == "gumbel" and spec.search.dirichlet_eps == 0
    # The recipe's network, threat planes included, and one search size: the count a
    # progressive recipe rises to, or --simulations even below the schedule's start.
    assert hour.model_threat_planes == 1 and cfg.model.threat_planes and spec.search.threat_planes
    assert hour.simulations_start > 0 and cfg.simulations_start == 0
    assert recipe_config(_selfplay_args("--simulations", "4")).simulations == 4
    assert spec.settings.openings is not None and spec.settings.games_at_once == hour.games_per_task

    cfg = recipe_config(_selfplay_args("--recipe", "plain", "--simulations", "12", "--games-per-worker", "3",
                                       "--board-size", "9", "--preset", "small"))
    spec = worker_spec(cfg, select_device("cpu"))
    assert spec.search.root_rule == "puct" and spec.search.num_simulations == 12
    assert spec.settings.openings is None and spec.settings.games_at_once == 3
    assert spec.game.width == 9 and cfg.model_preset == "small"
    assert spec.search.vcf_plane_budget == 0
    spec = worker_spec(recipe_config(_selfplay_args("--vcf-plane-budget", "100")), select_device("cpu"))
    assert spec.search.vcf_plane_budget == 100
    assert spec.settings.eval_cache == hour.eval_cache > 0
    spec = worker_spec(recipe_config(_selfplay_args("--eval-cache", "0")), select_device("cpu"))
    assert spec.settings.eval_cache == 0
    # Fewer games at once than a task plays: the task's slots are refilled.
    cfg = recipe_config(_selfplay_args("--games-per-worker", "12", "--games-at-once", "4"))
    spec = worker_spec(cfg, select_device("cpu"))
    assert cfg.games_per_task == 12 and spec.settings.games_at_once == 4
    from alphagomoku.bench import UsageError

    with pytest.raises(UsageError, match="--games-at-once: must be from 1 to games_per_task"):
        recipe_config(_selfplay_args("--games-per-worker", "4", "--games-at-once", "5"))


def test_a_model_for_another_board_is_a_usage_error(tmp_path):
    import torch

    from alphagomoku.nn import PolicyValueNet, save_model
    from alphagomoku.nn.config import ModelConfig

    torch.manual_seed(0)
    model = tmp_path / "tiny9.pt"
    save_model(model, PolicyValueNet(ModelConfig.preset("tiny", width=9)))
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay",
                          "--model", str(model)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "plays 9x9, the recipe 15x15: give --board-size 9" in out.stderr


def test_unknown_recipe_is_a_usage_error():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "selfplay",
                          "--recipe", "fastest"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2 and "no recipe named 'fastest'" in out.stderr
    assert "cpu-hour" in out.stderr  # the recipes there are are listed
