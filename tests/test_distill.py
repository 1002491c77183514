"""Distillation (scripts/distill.py): the teacher's targets, what the student learns from them,
the buffers the teacher cannot read, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from alphagomoku.game import GameConfig
from alphagomoku.game.position import Position
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import load_model, save_model
from alphagomoku.train.augment import make_batch
from alphagomoku.train.buffer import ReplayBuffer
from alphagomoku.train.checkpoint import starting_weights
from alphagomoku.train.distill import DistillConfig, Distiller
from alphagomoku.train.teacher import legal_mask, teacher_targets
from scripts import distill as distill_script
from tests.test_train_parts import random_record

SEVEN = GameConfig(width=7, n_in_row=4)
NINE = GameConfig(width=9, n_in_row=4)


def _net(path, arch: str, width: int, seed: int, sharpen: float = 1.0) -> PolicyValueNet:
    torch.manual_seed(seed)
    net = PolicyValueNet(ModelConfig.preset("tiny", width, arch=arch))
    if sharpen != 1.0:
        # A random network's policy is nearly uniform; a sharper one leaves the student
        # something to learn.
        with torch.no_grad():
            net.policy_fc.weight.mul_(sharpen)
    save_model(path, net.eval())
    return net


def _buffer(game: GameConfig, games: int, rng) -> ReplayBuffer:
    buf = ReplayBuffer(game, 4000)
    for _ in range(games):
        buf.add_game(random_record(game, rng))
    return buf


@pytest.fixture
def run_dir(tmp_path):
    """A run directory with a 7x7 buffer (the teacher's board) and a 9x9 one (not)."""
    rng = np.random.default_rng(3)
    run = tmp_path / "run"
    run.mkdir()
    _buffer(SEVEN, 40, rng).save(run / "replay.npz", epoch=2)
    _buffer(NINE, 20, rng).save(run / "replay-9x9-freestyle.npz", epoch=2)
    (run / "config.json").write_text(json.dumps({"n_in_row": 4}))
    return run


def _config(tmp_path, run_dir, **changes) -> DistillConfig:
    if not (tmp_path / "teacher.pt").exists():
        _net(tmp_path / "teacher.pt", "az", 7, seed=1, sharpen=100.0)
        _net(tmp_path / "student.pt", "kata", 7, seed=2)
    settings = dict(teacher=str(tmp_path / "teacher.pt"), student=str(tmp_path / "student.pt"),
                    positions=str(run_dir), out=str(tmp_path / "out.pt"), steps=4, batch_size=32,
                    held_out=64, save_every=2)
    settings.update(changes)
    return DistillConfig(**settings)


def test_the_legal_mask_matches_the_rule_kernels_under_renju():
    rng = np.random.default_rng(0)
    game = GameConfig(width=15, rule="renju")
    forbidden = 0
    for _ in range(6):
        record = random_record(game, rng)
        buf = ReplayBuffer(game, 400)
        buf.add_game(record)
        planes = make_batch(buf, np.arange(len(buf)), None, game, rule_planes=True).planes
        pos = Position(game)
        for i, move in enumerate(record.moves):
            want = pos.legal_mask()
            np.testing.assert_array_equal(legal_mask(planes[i : i + 1])[0], want)
            forbidden += int(((pos.board == 0) & ~want).sum())
            pos.play(int(move))
    assert forbidden > 0   # the positions had forbidden points to leave out


def test_the_teachers_policy_is_its_softmax_over_the_legal_moves(tmp_path):
    teacher = _net(tmp_path / "t.pt", "az", 7, seed=1)
    buf = _buffer(SEVEN, 3, np.random.default_rng(1))
    planes = torch.from_numpy(make_batch(buf, np.arange(len(buf)), None, SEVEN,
                                         rule_planes=True).planes)
    policy, value = teacher_targets(teacher, planes)
    logits, want_value = teacher(planes[:, :-2])   # the teacher does not read the rule planes
    for row in range(len(planes)):
        legal = legal_mask(planes[row : row + 1])[0].numpy()
        want = np.zeros(SEVEN.area)
        z = logits[row].detach().double().numpy()[legal]
        want[legal] = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        np.testing.assert_allclose(policy[row].numpy(), want, atol=1e-5)
    torch.testing.assert_close(value, want_value.detach())


def test_the_student_learns_the_teachers_play_and_goes_on_in_a_run(tmp_path, run_dir):
    cfg = _config(tmp_path, run_dir, steps=60, held_out=128)
    report = Distiller(cfg, log=lambda _: None, show_progress=False).run()
    before, after = report["before"]["7x7-freestyle"], report["after"]["7x7-freestyle"]
    assert after["policy_kl"] < 0.75 * before["policy_kl"]
    assert after["top_move_agrees"] > before["top_move_agrees"] + 0.2
    assert after["value_mse"] < before["value_mse"]
    assert "9x9-freestyle" not in report["after"]   # the teacher does not play 9x9
    student = load_model(cfg.out)
    assert student.config.arch == "kata"
    # A kata run on another board goes on from it.
    starting_weights(cfg.out, ModelConfig.preset("tiny", 9, arch="kata"))


def test_targets_mix_the_teachers_and_the_buffers_by_the_share(tmp_path, run_dir):
    distiller = Distiller(_config(tmp_path, run_dir, teacher_share=0.25), log=lambda _: None,
                          show_progress=False)
    for game, buffer, _ in distiller.buffers:
        indices = np.arange(16)
        own = [torch.from_numpy(a) for a in make_batch(
            buffer, indices, None, game, 0.5, 0, rule_planes=True)]
        mixed = distiller._batch(game, buffer, indices, None)
        if game == NINE:
            for a, b in zip(mixed, own):
                torch.testing.assert_close(a, b)
            continue
        policy, value = teacher_targets(distiller.teacher, own[0])
        own_policy = own[1] / own[1].sum(dim=1, keepdim=True)
        torch.testing.assert_close(mixed[1], 0.25 * policy + 0.75 * own_policy)
        torch.testing.assert_close(mixed[2], 0.25 * value + 0.75 * own[2])
        torch.testing.assert_close(mixed[3], own[4])


@pytest.mark.parametrize("change, words", [
    (dict(teacher_share=1.5), "--teacher-share"),
    (dict(steps=0), "--steps"),
    (dict(positions="EMPTY"), "holds no replay buffer"),
    (dict(teacher="BROKEN"), "BROKEN"),
    (dict(student="AZ9"), "does not play the 7x7"),
])
def test_bad_input_is_one_clear_line(tmp_path, run_dir, capsys, change, words):
    _config(tmp_path, run_dir)   # writes the teacher and the student
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "BROKEN").write_bytes(b"not a model")
    _net(tmp_path / "AZ9", "az", 9, seed=3)
    args = dict(teacher="teacher.pt", student="student.pt", positions=str(run_dir), out="out.pt")
    args.update(change)
    argv = []
    for name, value in args.items():
        path = tmp_path / str(value)
        argv += [f"--{name.replace('_', '-')}", str(path) if path.exists() else str(value)]
    assert distill_script.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and words in err
    assert not (tmp_path / "out.pt").exists()


def test_a_teacher_that_reads_other_inputs_is_refused(tmp_path, run_dir):
    torch.manual_seed(0)
    save_model(tmp_path / "vcf.pt", PolicyValueNet(ModelConfig.preset("tiny", 7, vcf_plane_budget=50)))
    with pytest.raises(ValueError, match="VCF planes"):
        Distiller(_config(tmp_path, run_dir, teacher=str(tmp_path / "vcf.pt")), show_progress=False)
