"""tools/batch_norm_check.py on a small run of two rules: a network with batch norm reads a
variant's positions differently in play than in training, one without reads them alike."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from alphagomoku.train.config import TrainConfig

TOOL = Path(__file__).resolve().parents[1] / "tools" / "batch_norm_check.py"


def _tool():
    spec = importlib.util.spec_from_file_location("batch_norm_check", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=[1, 0], ids=["batch-norm", "no-batch-norm"])
def mixed_run(request, tmp_path_factory):
    from alphagomoku.train.loop import Trainer

    run = tmp_path_factory.mktemp("run") / "run"
    cfg = TrainConfig(board_size=9, rules="freestyle,renju", model_preset="tiny", model_arch="kata",
                      model_batch_norm=request.param, device="cpu", selfplay_games=4,
                      games_per_task=2, simulations=8, batch_size=16, steps_per_epoch=3,
                      parallel_workers=0, vcf_plane_budget=0, epochs=2, seed=3,
                      run_dir=str(run))
    Trainer(cfg, log=lambda _: None, progress=False).run()
    return request.param, run


def test_play_and_training_agree_only_without_batch_norm(mixed_run, capsys):
    batch_norm, run = mixed_run
    assert _tool().main([str(run), str(run / "checkpoints" / "latest.pt"), "--positions", "16",
                         "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"9x9-freestyle", "9x9-renju"}
    for r in report.values():
        play, training = r["play"], r["training"]
        gap = max(abs(play[k] - training[k]) for k in play)
        if batch_norm:
            assert gap > 1e-3, r
        else:
            assert gap < 1e-4, r


def test_a_directory_that_holds_no_run_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        _tool().main([str(tmp_path), str(tmp_path / "x.pt")])
    assert "no run at" in capsys.readouterr().err
