"""The trainer's matches report the score as black and as white, in the log and final_eval.json."""

from __future__ import annotations

import json
import re

import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import save_model
from alphagomoku.train.config import TrainConfig
from alphagomoku.train.evaluation import evaluate_epoch, final_evaluation

CFG = TrainConfig(board_size=7, n_in_row=4, parallel_workers=0, eval_games=2, final_eval_games=2,
                  eval_simulations=2, baseline_playouts=2, device="cpu")


def _weights(tmp_path, seed):
    torch.manual_seed(seed)
    return save_model(tmp_path / f"w{seed}.pt", PolicyValueNet(ModelConfig.preset("tiny", 7)))


def test_epoch_matches_log_both_colours(tmp_path):
    lines: list[str] = []
    row = evaluate_epoch(CFG, _weights(tmp_path, 1), _weights(tmp_path, 2), 0.0, 3, progress=False,
                         log=lines.append)
    assert [line.split(":")[0] for line in lines] == ["epoch 3 vs best", "epoch 3 vs pure MCTS 2"]
    for line in lines:
        # Two games, one with each colour: a score and a W-D-L of one game for each.
        assert re.search(r": score \d\.\d{3}: as black (0|0\.5|1)\.?\d* \(\+\d =\d -\d\), "
                         r"as white (0|0\.5|1)\.?\d* \(\+\d =\d -\d\)$", line), line
    assert set(row) == {"score_vs_best", "elo_vs_best", "promoted", "elo", "score_vs_baseline",
                        "elo_vs_baseline"}  # metrics.csv columns only


def test_final_evaluation_saves_the_score_per_colour(tmp_path):
    lines: list[str] = []
    out = final_evaluation(CFG, _weights(tmp_path, 1), _weights(tmp_path, 2), tmp_path, False,
                           lines.append)
    saved = json.loads((tmp_path / "final_eval.json").read_text())
    assert saved == json.loads(json.dumps(out))
    for name in ("vs_untrained", "vs_pure_mcts"):
        r = saved[name]
        for colour in ("a_as_black", "a_as_white"):
            c = r[colour]
            assert c["wins"] + c["draws"] + c["losses"] == 1
            assert c["score"] == c["wins"] + 0.5 * c["draws"]
    assert len(lines) == 2 and all("A as black:" in s and ", score " in s for s in lines)
