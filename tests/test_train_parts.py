"""The trainer's parts on their own: config, replay buffer, augmentation, loss, checkpoints."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import BLACK, WHITE
from alphagomoku.game.symmetry import transform_planes, transform_policy, valid_symmetries
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import CheckpointError
from alphagomoku.selfplay.training_game import TrainingGameError, TrainingGame
from alphagomoku.train.augment import make_batch
from alphagomoku.train.buffer import BufferFileError, ReplayBuffer
from alphagomoku.train.checkpoint import load_checkpoint, save_checkpoint
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.loss import alphazero_loss

GAME = GameConfig(width=7, n_in_row=4)


def random_record(game: GameConfig, rng: np.random.Generator) -> TrainingGame:
    """A legal random game with visit distributions spread over the legal points."""
    pos = Position(game)
    moves, policies = [], []
    while not pos.is_over:
        legal = pos.legal_mask()
        pol = rng.random(game.area) * legal
        pol /= pol.sum()
        move = int(rng.choice(game.area, p=pol))
        moves.append(move)
        policies.append(pol.astype(np.float16))
        pos.play(move)
    return TrainingGame(
        moves=np.array(moves, dtype=np.int16),
        policies=np.array(policies, dtype=np.float16),
        root_values=np.zeros(len(moves), dtype=np.float16),
        result=pos.winner,
    )


# -- config -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, words",
    [
        ({"board_size": 3}, "--board-size"),
        ({"board_size": 23}, "--board-size"),
        ({"rule": "gomoku"}, "--rule"),
        ({"n_in_row": 9, "board_size": 7}, "--n-in-row"),
        ({"rule": "renju", "n_in_row": 4}, "renju"),
        ({"model_preset": "huge"}, "--model-preset"),
        ({"parallel_workers": -1}, "--parallel-workers"),
        ({"epochs": 0}, "--epochs"),
        ({"lr": 0.0}, "--lr"),
        ({"device": "gpu"}, "--device"),
        ({"buffer_positions": 10, "batch_size": 64}, "--buffer-positions"),
        ({"simulations": "many"}, "--simulations"),
    ],
)
def test_config_rejects_impossible_values(change, words):
    with pytest.raises(ConfigError, match=words):
        TrainConfig(**change)


def test_config_rejects_unknown_keys_and_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="unknown setting.*board_sise"):
        TrainConfig.from_dict({"board_sise": 9})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        TrainConfig.from_file(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        TrainConfig.from_file(tmp_path / "missing.json")


def test_config_round_trips_through_its_file(tmp_path):
    cfg = TrainConfig(board_size=9, rule="standard", epochs=3)
    cfg.save(tmp_path / "c.json")
    assert TrainConfig.from_file(tmp_path / "c.json") == cfg
    assert json.loads((tmp_path / "c.json").read_text())["rule"] == "standard"


# -- game records -------------------------------------------------------------------------------
def test_record_validation_catches_bad_data():
    rng = np.random.default_rng(0)
    rec = random_record(GAME, rng)
    rec.validate(GAME)
    empty = TrainingGame(np.zeros(0, np.int16), np.zeros((0, GAME.area), np.float16), np.zeros(0, np.float16), BLACK)
    with pytest.raises(TrainingGameError, match="empty"):
        empty.validate(GAME)
    wrong = TrainingGame(rec.moves, rec.policies, rec.root_values, WHITE if rec.result == BLACK else BLACK)
    with pytest.raises(TrainingGameError, match="result"):
        wrong.validate(GAME)
    twice = TrainingGame(np.array([3, 3], np.int16), rec.policies[:2], rec.root_values[:2], BLACK)
    with pytest.raises(TrainingGameError, match="occupied"):
        twice.validate(GAME)


def test_value_targets_follow_the_side_to_move():
    rec = TrainingGame(np.array([0, 1, 2], np.int16), np.zeros((3, 49), np.float16),
                     np.zeros(3, np.float16), BLACK, resigned=True)
    assert rec.value_targets().tolist() == [1.0, -1.0, 1.0]


# -- replay buffer ------------------------------------------------------------------------------
def test_buffer_keeps_only_the_newest_positions_in_its_window():
    rng = np.random.default_rng(1)
    buf = ReplayBuffer(GAME, capacity=50)
    records = [random_record(GAME, rng) for _ in range(8)]
    for r in records:
        buf.add_game(r)
    total = sum(r.length for r in records)
    assert total > 50 and len(buf) == 50 and buf.total_added == total
    # The newest position is the last one of the last game: its policy is that game's last policy.
    newest = (buf.next - 1) % buf.capacity
    np.testing.assert_array_equal(buf.policies[newest], records[-1].policies[-1])
    # Every stored board has the right number of stones for its side to move.
    stones = np.count_nonzero(buf.boards[: len(buf)], axis=1)
    assert np.array_equal(np.where(stones % 2 == 0, BLACK, WHITE), buf.to_move[: len(buf)])


def test_buffer_survives_save_and_load_and_rejects_corrupt_files(tmp_path):
    rng = np.random.default_rng(2)
    buf = ReplayBuffer(GAME, capacity=64)
    for _ in range(6):
        buf.add_game(random_record(GAME, rng))
    buf.save(tmp_path / "replay.npz", epoch=4)
    again, epoch = ReplayBuffer.load(tmp_path / "replay.npz", GAME, capacity=64)
    assert epoch == 4 and len(again) == len(buf) and again.total_added == buf.total_added
    order = (np.arange(len(buf)) + buf.next) % buf.capacity
    np.testing.assert_array_equal(again.boards[: len(buf)], buf.boards[order])
    (tmp_path / "bad.npz").write_bytes(b"garbage" * 10)
    with pytest.raises(BufferFileError, match="corrupt") as info:
        ReplayBuffer.load(tmp_path / "bad.npz", GAME, 64)
    # numpy takes any such file for pickled data and suggests loading it with allow_pickle.
    assert str(info.value).endswith("ValueError: not a .npz or .npy file")
    with pytest.raises(BufferFileError, match="7x7 games"):
        ReplayBuffer.load(tmp_path / "replay.npz", GameConfig(width=9), 64)


# -- augmentation -------------------------------------------------------------------------------
def test_augmentation_transforms_planes_and_policy_together():
    rng = np.random.default_rng(3)
    buf = ReplayBuffer(GAME, capacity=200)
    for _ in range(4):
        buf.add_game(random_record(GAME, rng))
    idx = np.arange(len(buf))
    plain, plain_pol, plain_val, *_ = make_batch(buf, idx, None, GAME)
    aug, aug_pol, aug_val, *_ = make_batch(buf, idx, np.random.default_rng(4), GAME)
    np.testing.assert_array_equal(plain_val, aug_val)
    used = set()
    for i in range(len(idx)):
        matches = [
            k for k in valid_symmetries(7, 7)
            if np.array_equal(transform_planes(plain[i], k), aug[i])
            and np.allclose(transform_policy(plain_pol[i], k, 7, 7), aug_pol[i])
        ]
        assert matches, f"sample {i}: planes and policy were not moved by one symmetry"
        used.add(matches[0])
        # The policy target never sits on a stone after augmentation.
        stones = aug[i, 0] + aug[i, 1]
        assert float((aug_pol[i].reshape(7, 7) * stones).sum()) == 0.0
    assert len(used) >= 4, "augmentation should use many of the 8 symmetries"


# -- loss ---------------------------------------------------------------------------------------
def test_loss_falls_on_a_fixed_batch():
    torch.manual_seed(0)
    rng = np.random.default_rng(5)
    buf = ReplayBuffer(GAME, capacity=300)
    for _ in range(6):
        buf.add_game(random_record(GAME, rng))
    planes, pol, val = (torch.from_numpy(a) for a in make_batch(buf, np.arange(64), None, GAME)[:3])
    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    # Cross-entropy cannot fall below the targets' own entropy; measure what is above it.
    floor = float(-(pol * torch.log(pol.clamp_min(1e-12))).sum(1).mean())
    history = []
    for _ in range(80):
        parts = alphazero_loss(model, planes, pol, val, weight_decay=1e-4)
        opt.zero_grad()
        parts["loss"].backward()
        opt.step()
        history.append((parts["policy"].item() - floor, parts["value"].item()))
    (p0, v0), (p1, v1) = history[0], history[-1]
    assert p1 < 0.5 * p0, f"policy excess {p0:.3f} -> {p1:.3f}"
    assert v1 < 0.5 * v0, f"value loss {v0:.3f} -> {v1:.3f}"


# -- checkpoints --------------------------------------------------------------------------------
def test_checkpoints_are_pruned_and_corrupt_ones_rejected(tmp_path):
    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    for epoch in range(1, 6):
        save_checkpoint(tmp_path, {"epoch": epoch, "model": model.state_dict()}, keep=2)
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == ["epoch_000004.pt", "epoch_000005.pt", "latest.pt"]
    assert load_checkpoint(tmp_path / "checkpoints" / "latest.pt")["epoch"] == 5
    latest = tmp_path / "checkpoints" / "latest.pt"
    latest.write_bytes(latest.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_checkpoint(latest)
    torch.save({"something": 1}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not an alphagomoku training checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.pt")


def _checkpoint_as_saved_today(model) -> dict:
    """The keys and kinds of value the trainer writes each epoch, spelt out by hand so that a
    change to TrainingState that old checkpoints would not survive shows up here."""
    from alphagomoku.train.checkpoint import rng_state

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 1.0)
    return {
        "epoch": 3, "config": TrainConfig(board_size=7).to_dict(),
        "model_config": model.config.to_dict(), "model": model.state_dict(),
        "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
        "scaler": torch.amp.GradScaler("cuda", enabled=False).state_dict(), "rng": rng_state(),
        "selfplay_rng": np.random.default_rng(5).bit_generator.state, "best_elo": 41.5,
        "lopsided_epochs": 2, "opening_target": -0.125,
        "opening_targets": {"7x7-freestyle": -0.125}, "wall_seconds": 93.0, "world_size": 1,
        "ema": model.state_dict(),
    }


def test_the_training_state_saves_and_restores_the_same_fields(tmp_path):
    from alphagomoku.train.checkpoint import TrainingState

    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    saved = _checkpoint_as_saved_today(model)
    save_checkpoint(tmp_path, saved, keep=1)
    loaded = load_checkpoint(tmp_path / "checkpoints" / "latest.pt")
    state = TrainingState.from_dict(loaded)
    assert (state.epoch, state.best_elo, state.lopsided_epochs, state.opening_target,
            state.wall_seconds, state.world_size) == (3, 41.5, 2, -0.125, 93.0, 1)
    assert state.selfplay_rng == saved["selfplay_rng"] and state.config == saved["config"]
    # Every field read back is a field written: the two lists cannot drift apart.
    assert set(state.to_dict()) == set(saved)
    again = TrainingState.from_dict(state.to_dict()).to_dict()
    assert all(torch.equal(again["model"][k], v) for k, v in model.state_dict().items())


def test_a_checkpoint_from_before_the_later_fields_loads_with_their_defaults():
    from alphagomoku.train.checkpoint import TrainingState

    old = _checkpoint_as_saved_today(PolicyValueNet(ModelConfig.preset("tiny", 7)))
    for key in ("scaler", "best_elo", "lopsided_epochs", "opening_target", "opening_targets",
                "wall_seconds", "world_size", "ema"):
        del old[key]
    state = TrainingState.from_dict(old)
    assert (state.scaler, state.best_elo, state.lopsided_epochs, state.opening_target,
            state.opening_targets, state.wall_seconds, state.world_size, state.ema) == (
        None, 0.0, 0, 0.0, {}, 0.0, 1, None)
    del old["optimizer"]
    with pytest.raises(CheckpointError, match="lacks optimizer"):
        TrainingState.from_dict(old)


def test_a_training_checkpoint_loads_wherever_weights_are_asked_for(tmp_path):
    from alphagomoku.nn.io import load_model

    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    save_checkpoint(tmp_path, {"epoch": 1, "model": model.state_dict(),
                               "model_config": model.config.to_dict()}, keep=1)
    again = load_model(tmp_path / "checkpoints" / "latest.pt")
    for a, b in zip(model.state_dict().values(), again.state_dict().values()):
        assert torch.equal(a, b)


def test_random_states_round_trip_through_a_checkpoint(tmp_path):
    import random

    from alphagomoku.train.checkpoint import restore_rng_state, rng_state

    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    save_checkpoint(tmp_path, {"epoch": 1, "model": model.state_dict(), "rng": rng_state()}, keep=1)
    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    restore_rng_state(load_checkpoint(tmp_path / "checkpoints" / "latest.pt")["rng"])
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected


def test_export_script_writes_a_weights_file_and_rejects_a_bad_checkpoint(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from alphagomoku.nn.io import load_model

    script = Path(__file__).resolve().parents[1] / "scripts" / "export_model.py"
    model = PolicyValueNet(ModelConfig.preset("tiny", 7))
    save_checkpoint(tmp_path, {"epoch": 1, "model": model.state_dict(),
                               "model_config": model.config.to_dict()}, keep=1)
    ok = subprocess.run([sys.executable, str(script), str(tmp_path / "checkpoints" / "latest.pt"),
                         str(tmp_path / "model.pt")], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    exported = load_model(tmp_path / "model.pt").state_dict()
    assert all(torch.equal(exported[k], v) for k, v in model.state_dict().items())
    (tmp_path / "bad.pt").write_bytes(b"nope")
    bad = subprocess.run([sys.executable, str(script), str(tmp_path / "bad.pt"), str(tmp_path / "m2.pt")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "corrupt or truncated" in bad.stderr
    assert not (tmp_path / "m2.pt").exists()


def test_export_averages_several_networks_of_one_shape_and_refuses_two_shapes(tmp_path):
    import dataclasses
    import subprocess
    import sys
    from pathlib import Path

    from alphagomoku.nn.io import load_model, save_model
    from alphagomoku.train.checkpoint import export_average

    config = ModelConfig.preset("tiny", 9, arch="kata", batch_norm=False)
    paths = []
    for seed, board in ((1, 9), (2, 9), (3, 11)):   # the third trained on another board
        torch.manual_seed(seed)
        net = PolicyValueNet(config.with_board(board))
        paths.append(save_model(tmp_path / f"n{seed}.pt", net))
    nets = [load_model(p).state_dict() for p in paths]
    script = Path(__file__).resolve().parents[1] / "scripts" / "export_model.py"
    ok = subprocess.run([sys.executable, str(script), *map(str, paths), str(tmp_path / "mean.pt")],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    mean = load_model(tmp_path / "mean.pt")
    assert mean.config.plays(9, 9) and mean.config.plays(11, 11)
    for k, v in mean.state_dict().items():
        expected = (nets[0][k].double() + nets[1][k].double() + nets[2][k].double()) / 3
        assert torch.allclose(v.double(), expected, atol=1e-7), k
    first = next(iter(nets[0]))
    assert not torch.equal(mean.state_dict()[first], nets[0][first])
    # A network averaged with itself is itself.
    export_average([paths[0], paths[0]], tmp_path / "same.pt")
    same = load_model(tmp_path / "same.pt").state_dict()
    assert all(torch.equal(same[k], v) for k, v in nets[0].items())

    wider = save_model(tmp_path / "wide.pt",
                       PolicyValueNet(dataclasses.replace(config, channels=config.channels * 2)))
    with pytest.raises(CheckpointError, match=r"channels=64 \(the first: 32\).*only networks of one shape"):
        export_average([paths[0], wider], tmp_path / "no.pt")
    assert not (tmp_path / "no.pt").exists()
    with pytest.raises(ValueError, match="at least two"):
        export_average([paths[0]], tmp_path / "no.pt")


def test_the_progress_picture_is_drawn_at_most_once_a_minute_and_at_the_end(tmp_path, monkeypatch):
    from alphagomoku.train import plot

    drawn = []
    monkeypatch.setattr(plot, "plot_progress", lambda csv, out: drawn.append(now[0]))
    now = [0.0]
    picture = plot.ProgressPlot(tmp_path / "metrics.csv", tmp_path / "progress.png", every=60.0,
                                clock=lambda: now[0])
    for t in (0.0, 20.0, 59.0, 61.0, 100.0):   # epochs ending at these seconds
        now[0] = t
        picture.update()
    assert drawn == [0.0, 61.0]
    now[0] = 110.0
    picture.finish()                            # the epoch at 100 s is drawn at the end
    picture.finish()                            # and only once
    assert drawn == [0.0, 61.0, 110.0]
