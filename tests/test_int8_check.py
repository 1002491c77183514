"""tools/int8_check.py on a small run: int8 calibrated on half of a buffer's positions names
mostly the same moves as fp32 on the other half, with values close to fp32's."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from alphagomoku.nn.inference_backend import onnx_problem
from alphagomoku.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
needs_onnx = pytest.mark.skipif(bool(onnx_problem()), reason=onnx_problem() or "installed")


def _tool():
    sys.path.insert(0, str(ROOT))  # the tool imports tools.batch_norm_check
    spec = importlib.util.spec_from_file_location("int8_check", ROOT / "tools" / "int8_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from alphagomoku.train.loop import Trainer

    run = tmp_path_factory.mktemp("run") / "run"
    cfg = TrainConfig(board_size=9, model_preset="tiny", device="cpu", selfplay_games=24,
                      games_per_task=12, simulations=8, batch_size=32, steps_per_epoch=4,
                      parallel_workers=0, vcf_plane_budget=0, epochs=2, seed=5, run_dir=str(run))
    Trainer(cfg, log=lambda _: None, progress=False).run()
    return run


@needs_onnx
def test_int8_answers_close_to_fp32_on_a_runs_positions(run, capsys):
    assert _tool().main([str(run), str(run / "checkpoints" / "latest.pt"), "--positions", "600",
                         "--seconds", "0.05", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"9x9-freestyle"}
    r = report["9x9-freestyle"]
    assert r["positions"] == 300
    assert r["same_best_move"] > 0.8
    assert r["value_difference_mean"] < 0.05 and r["value_difference_max"] < 0.3
    assert all(r[f"{p}_per_second_batch{b}"] > 0 for p in ("fp32", "int8") for b in (1, 16, 64))


@needs_onnx
def test_too_few_positions_to_calibrate_is_said(run):
    with pytest.raises(SystemExit, match="do not calibrate int8: give --positions of at least 512"):
        _tool().main([str(run), str(run / "checkpoints" / "latest.pt"), "--positions", "200"])
