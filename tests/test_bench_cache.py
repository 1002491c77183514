"""scripts/benchmark.py cache: the evaluation cache's figures, on a tiny setting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench(*argv, timeout=300):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark.py"), "cache", *argv],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_cache_benchmark_reports_the_same_games_and_what_the_cache_answered(tmp_path):
    import torch

    from alphagomoku.nn import PolicyValueNet, save_model
    from alphagomoku.nn.config import ModelConfig

    torch.manual_seed(0)
    model = tmp_path / "tiny9.pt"
    save_model(model, PolicyValueNet(ModelConfig.preset("tiny", width=9, vcf_plane_budget=20)))
    out = _bench("--json", "--model", str(model), "--games", "3", "--repeats", "1",
                 "--time-per-move", "0.05", "--plies", "4")
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)["cache"]
    assert r["board"] == "9x9" and r["recipe"] == "cpu-hour"
    assert r["player_torch_device"].startswith("cpu")
    assert r["selfplay_same_games"] is True
    assert 0 < r["selfplay_hit_share"] < 1
    assert r["selfplay_positions_per_second_off"] > 0 and r["selfplay_positions_per_second_on"] > 0
    assert r["selfplay_speedup"] == (r["selfplay_positions_per_second_on"]
                                     / r["selfplay_positions_per_second_off"])
    assert len(r["selfplay_runs_off"]) == len(r["selfplay_runs_on"]) == 1
    assert r["player_simulations_a_move_off"] >= 1 and r["player_simulations_a_move_on"] >= 1
    assert 0 <= r["player_hit_share"] < 1
    from alphagomoku.nn.inference_backend import onnx_problem

    assert r["player_backend"] == ("Evaluator" if onnx_problem() else "OnnxEvaluator")
    assert r["player_backend_ratio"] == (r["player_simulations_a_move_on"]
                                         / r["player_simulations_a_move_on_torch"])
    if not onnx_problem():
        assert r["player_simulations_a_move_on_int8"] >= 1
        assert r["player_int8_ratio"] == (r["player_simulations_a_move_on_int8"]
                                          / r["player_simulations_a_move_on"])


def test_cache_benchmark_refuses_a_damaged_model_and_bad_settings(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a model")
    out = _bench("--model", str(bad), timeout=60)
    assert out.returncode == 2 and "bad.pt" in out.stderr and "Traceback" not in out.stderr
    out = _bench("--plies", "0", timeout=60)
    assert out.returncode == 2 and "--plies must be at least 1" in out.stderr
    out = _bench("--device", "tpu", timeout=60)
    assert out.returncode == 2 and "unknown device 'tpu'" in out.stderr
    assert "Traceback" not in out.stderr
