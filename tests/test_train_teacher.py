"""--teacher: a share of each training target from a teacher network, fading over the run."""

from __future__ import annotations

import pytest
import torch

from alphagomoku.game import GameConfig
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import save_model
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.metrics import read_metrics
from alphagomoku.train.teacher import FadingTeacher, teacher_targets


def _saved_net(path, seed: int, arch: str = "az", width: int = 7, vcf: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    net = PolicyValueNet(ModelConfig.preset("tiny", width, arch=arch, vcf_plane_budget=vcf))
    save_model(path, net.eval())
    return net


def _config(tmp_path, **overrides) -> TrainConfig:
    settings = dict(board_size=7, n_in_row=4, model_preset="tiny", model_arch="kata", device="cpu",
                    selfplay_games=4, games_per_task=2, simulations=8, batch_size=32,
                    steps_per_epoch=2, parallel_workers=0, vcf_plane_budget=0, epochs=2,
                    min_buffer_positions=16, run_dir=str(tmp_path / "run"))
    settings.update(overrides)
    return TrainConfig(**settings)


def test_the_share_falls_linearly_to_none_at_the_fade():
    teacher = FadingTeacher.__new__(FadingTeacher)
    teacher.share, teacher.fade = 0.6, 0.5
    assert [teacher.share_at(d) for d in (0.0, 0.25, 0.5, 0.9)] == pytest.approx([0.6, 0.3, 0.0, 0.0])


def test_a_run_trains_on_the_mixed_targets_and_logs_the_share(tmp_path):
    from alphagomoku.train.loop import Trainer

    _saved_net(tmp_path / "teacher.pt", seed=4)
    trainer = Trainer(_config(tmp_path, teacher=str(tmp_path / "teacher.pt"), teacher_share=0.8,
                              teacher_fade=1.0), log=lambda _: None, progress=False)
    trainer.run()
    shares = [float(r["teacher_share"]) for r in read_metrics(trainer.run_dir / "metrics.csv")]
    assert shares == pytest.approx([0.8, 0.4])   # epoch 2 starts half-way through the epochs

    # The batches the steps take: the share of the teacher's policy and value, the rest the
    # buffer's own; the policy weights stay the search's.
    trainer.teacher_share = 0.25
    plan = trainer._plan_batch(3, 0)
    trainer.teacher = None
    own = trainer._build_batch(plan)
    trainer.teacher = FadingTeacher(tmp_path / "teacher.pt", trainer.model_config, 0.8, 1.0)
    mixed = trainer._build_batch(plan)
    policy, value = teacher_targets(trainer.teacher.model, own[0])
    torch.testing.assert_close(mixed[1], 0.25 * policy + 0.75 * own[1] / own[1].sum(1, keepdim=True))
    torch.testing.assert_close(mixed[2], 0.25 * value + 0.75 * own[2])
    torch.testing.assert_close(mixed[3], own[3])


def test_a_board_the_teacher_does_not_play_keeps_its_own_targets(tmp_path):
    from alphagomoku.train.loop import Trainer

    _saved_net(tmp_path / "teacher.pt", seed=4)
    trainer = Trainer(_config(tmp_path, board_sizes="7,9", teacher=str(tmp_path / "teacher.pt")),
                      log=lambda _: None, progress=False)
    nine = next(v.game for v in trainer.variants if v.game.width == 9)
    tensors = [torch.rand(4, 3), torch.rand(4, 81), torch.rand(4)]
    kept = trainer.teacher.mix(tensors, nine, 0.5)
    assert all(a is b for a, b in zip(kept, tensors))
    assert trainer.teacher.mix(tensors, GameConfig(width=7, n_in_row=4), 0.0) is tensors


@pytest.mark.parametrize("change, words", [
    (dict(teacher="BROKEN"), "--teacher"),
    (dict(teacher="MISSING"), "MISSING"),
    (dict(teacher="AZ9"), "plays none of this run's boards"),
    (dict(teacher="VCF"), "VCF planes"),
])
def test_a_teacher_that_cannot_teach_the_run_is_one_clear_error(tmp_path, change, words):
    from alphagomoku.train.loop import Trainer

    (tmp_path / "BROKEN").write_bytes(b"not a model")
    _saved_net(tmp_path / "AZ9", seed=1, width=9)
    _saved_net(tmp_path / "VCF", seed=1, vcf=50)
    teacher = str(tmp_path / change["teacher"])
    with pytest.raises(ConfigError, match="--teacher") as caught:
        Trainer(_config(tmp_path, teacher=teacher), progress=False)
    assert words in str(caught.value)
    assert not (tmp_path / "run" / "checkpoints").exists()


@pytest.mark.parametrize("field, value", [("teacher_share", 1.5), ("teacher_fade", 0.0)])
def test_shares_out_of_range_are_refused(tmp_path, field, value):
    with pytest.raises(ConfigError, match="--" + field.replace("_", "-")):
        _config(tmp_path, **{field: value})
