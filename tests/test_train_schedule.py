"""The training schedule: the weight average that plays, the learning-rate drop at the end of a
run, and a kata run with every auxiliary target that trains, keeps them and resumes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import load_model
from alphagomoku.train.checkpoint import load_checkpoint
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.ema import WeightAverage
from alphagomoku.train.metrics import read_metrics


def _fill(model, value):
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.dtype.is_floating_point:
                t.fill_(value)


def test_the_average_follows_its_definition():
    """avg_n = d^n avg_0 + (1 - d) sum_k d^(n-1-k) w_k, for parameters and batch-norm
    statistics alike; counters are copied."""
    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    _fill(model, 1.0)
    avg = WeightAverage(model, decay=0.9)
    seen = [2.0, -1.0, 5.0]
    for w in seen:
        _fill(model, w)
        model.stem[1].num_batches_tracked.fill_(7)
        avg.update(model)
    want = 0.9 ** 3 * 1.0 + sum(0.1 * 0.9 ** (2 - k) * w for k, w in enumerate(seen))
    state = avg.state_dict()
    for name, t in state.items():
        if t.dtype.is_floating_point:
            torch.testing.assert_close(t, torch.full_like(t, want), msg=name)
    assert int(state["stem.1.num_batches_tracked"]) == 7
    # The copy is its own: the trained model's later changes do not leak into it.
    _fill(model, 100.0)
    assert float(avg.model.stem[0].weight.flatten()[0]) == pytest.approx(want)
    with pytest.raises(ValueError, match="decay"):
        WeightAverage(model, 1.0)


def _tiny(tmp_path, **overrides) -> TrainConfig:
    return TrainConfig(board_size=7, n_in_row=4, model_preset="tiny", device="cpu", selfplay_games=4,
                       games_per_task=2, simulations=8, batch_size=32, steps_per_epoch=3,
                       min_buffer_positions=16, parallel_workers=0, final_eval_games=0,
                       run_dir=str(tmp_path / "run"), **overrides)


def test_the_learning_rate_drops_over_the_last_share(tmp_path):
    from alphagomoku.train.loop import Trainer

    for schedule in ("constant", "cosine"):
        cfg = _tiny(tmp_path / schedule, epochs=10, lr_schedule=schedule, lr_drop_share=0.3,
                    lr_drop_factor=0.1)
        trainer = Trainer(cfg, log=lambda _: None, progress=False)
        plain = Trainer(_tiny(tmp_path / f"{schedule}-plain", epochs=10, lr_schedule=schedule),
                        log=lambda _: None, progress=False)
        for epoch in range(11):
            ratio = trainer._lr_factor(epoch) / plain._lr_factor(epoch)
            assert ratio == pytest.approx(0.1 if epoch >= 7 else 1.0), (schedule, epoch)
    with pytest.raises(ConfigError, match="--lr-drop-share"):
        TrainConfig(lr_drop_share=1.0)
    with pytest.raises(ConfigError, match="--ema-decay"):
        TrainConfig(ema_decay=1.0)


def test_a_resumed_run_trains_at_its_own_rate_from_its_first_epoch(tmp_path):
    """A checkpoint's schedule holds the rate its run started with and its last epoch's factor.
    A resume with another --lr, and more epochs than the drop had assumed, trains its first epoch
    at the rate of its own schedule, and says that the rate changed."""
    from alphagomoku.train.loop import Trainer

    def cfg(**kw):
        return _tiny(tmp_path, lr_schedule="constant", lr_drop_share=0.3, **kw)

    Trainer(cfg(epochs=2, lr=0.002), log=lambda _: None, progress=False).run()
    notes: list[str] = []
    Trainer(cfg(epochs=3, lr=0.001), resume=True, log=notes.append, progress=False).run()
    rates = {int(r["epoch"]): float(r["lr"]) for r in read_metrics(tmp_path / "run" / "metrics.csv")}
    # Epoch 2 ended the first run, in its drop (0.0002 from then on); epoch 3 of 3 is before it.
    assert rates == pytest.approx({1: 0.002, 2: 0.002, 3: 0.001})
    assert any("rate of 0.002, this run at 0.001 (--lr)" in n for n in notes), notes

    # A budget run resumed nine minutes into ten is in its drop before run() starts the clock.
    budget = Trainer(_tiny(tmp_path / "budget", time_budget_minutes=10, lr_schedule="constant",
                           lr_drop_share=0.3), log=lambda _: None, progress=False)
    budget.spent_seconds = 9 * 60
    assert budget._lr_factor(0) == pytest.approx(0.1)


@pytest.mark.slow
def test_a_kata_run_with_every_target_and_the_average_trains_and_resumes(tmp_path):
    """In process: two epochs of a kata network with the auxiliary targets, surprise weighting,
    the weight average and the drop; what plays is the average, and a resume picks it up."""
    from alphagomoku.train.loop import Trainer

    cfg = _tiny(tmp_path, epochs=2, model_arch="kata", rule="standard", aux_reply_weight=0.15,
                soft_policy_weight=1.0, short_value_weight=0.5, policy_surprise=0.5,
                ema_decay=0.5, lr_drop_share=0.5)
    trainer = Trainer(cfg, log=lambda _: None, progress=False)
    trainer.run()
    run = tmp_path / "run"
    rows = read_metrics(run / "metrics.csv")
    trained = [r for r in rows if int(r["train_steps"] or 0) > 0]
    assert trained and all(float(r[k]) > 0 for r in trained
                           for k in ("reply_loss", "soft_policy_loss", "short_value_loss"))
    state = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert state["model_config"]["arch"] == "kata"
    raw, avg = state["model"], state["ema"]
    assert any(not torch.equal(raw[k], avg[k]) for k in raw)
    # The published weights and the checkpoint read as a model are the average.
    published = load_model(trainer._publish_weights())
    from_ckpt = load_model(run / "checkpoints" / "latest.pt")
    for k, v in avg.items():
        assert torch.equal(published.state_dict()[k], v) and torch.equal(from_ckpt.state_dict()[k], v)
    again = Trainer(TrainConfig.from_dict({**cfg.to_dict(), "epochs": 3}), resume=True,
                    log=lambda _: None, progress=False)
    for k, v in avg.items():
        assert torch.equal(again.average.state_dict()[k], v)
    again.run()
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["epoch"] == 3
    buffer_positions = np.load(run / "replay.npz")["reply"]
    assert buffer_positions.any()


@pytest.mark.slow
def test_a_run_directory_from_before_these_settings_resumes(tmp_path):
    """A run saved without the network shape, the targets, the schedule or the variants in its
    config, and with a buffer file of format 2 (no reply links, short-term values or rule),
    resumes as the plain recipe it was."""
    import json

    from alphagomoku.train.loop import Trainer

    cfg = _tiny(tmp_path, epochs=1)
    Trainer(cfg, log=lambda _: None, progress=False).run()
    run = tmp_path / "run"
    new = {"model_arch", "board_sizes", "rules", "variant_mix", "aux_reply_weight", "soft_policy_weight",
           "soft_policy_temperature", "short_value_weight", "policy_surprise", "lr_drop_share",
           "lr_drop_factor", "ema_decay", "model_global_pooling", "model_batch_norm"}
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({k: v for k, v in config.items() if k not in new}))
    for path in (run / "checkpoints").glob("*.pt"):
        state = torch.load(path, weights_only=False)
        state["config"] = {k: v for k, v in state["config"].items() if k not in new}
        state["model_config"].pop("arch")
        state["model_config"].pop("global_pooling")
        state["model_config"].pop("batch_norm")
        torch.save(state, path)
    with np.load(run / "replay.npz") as data:
        old = {k: data[k] for k in data.files if k not in ("reply", "short_value", "rule")}
    old["format_version"] = np.array(2)
    with open(run / "replay.npz", "wb") as f:
        np.savez_compressed(f, **old)
    resumed_cfg = TrainConfig.from_dict({**{k: v for k, v in cfg.to_dict().items() if k not in new},
                                         "epochs": 2})
    again = Trainer(resumed_cfg, resume=True, log=lambda _: None, progress=False)
    assert again.model_config.arch == "az" and len(again.buffer) == len(old["values"])
    assert not again.buffer.reply.any()
    np.testing.assert_array_equal(again.buffer.short_value[:len(again.buffer)],
                                  old["values"][-len(again.buffer):])
    again.run()
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["epoch"] == 2
