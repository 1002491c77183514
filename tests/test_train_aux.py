"""The training targets beyond the result and the search policy: the opponent's reply, the soft
policy, the short-term value, the future stones and policy-surprise weighting, each checked
against its definition on a hand-built game, and each adding nothing to the loss when turned
off."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import BLACK
from alphagomoku.game.symmetry import transform_planes, transform_policy, valid_symmetries
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.selfplay.training_game import TrainingGame
from alphagomoku.train.augment import make_batch
from alphagomoku.train.buffer import FUTURE_PLIES, ReplayBuffer, future_boards, short_term_values
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.loss import AuxWeights, alphazero_loss, soft_policy_target, training_loss

GAME = GameConfig(width=9)
MOVES = ["e5", "e6", "a9", "a1", "b9", "b1", "c9", "c1", "d9", "d1", "e9"]
FULL = np.array([1, 0, 1, 1, 0, 1, 1, 1, 1], bool)


def hand_game() -> TrainingGame:
    """A 2-stone opening, then black makes five along the top row; ply j's policy puts all its
    weight on the move played (so the reply target of ply j is the point of move j + 1)."""
    pos = Position.from_moves(MOVES, GAME)
    assert pos.winner == BLACK
    idx = [pos.index(m) for m in MOVES]
    s = len(MOVES) - 2
    policies = np.zeros((s, GAME.area), np.float16)
    for j in range(s):
        policies[j, idx[2 + j]] = 1.0
    return TrainingGame(
        moves=np.array(idx, np.int16), policies=policies,
        root_values=np.array([0.1, -0.2, 0.5, -0.6, 0.7, -0.9, 1.0, -1.0, 1.0], np.float16),
        result=BLACK, opening=2, full_search=FULL.copy(),
    )


def test_short_term_value_is_the_discounted_sum_of_what_follows():
    """Against the definition written out as a sum: the root values from ply j on, each from
    j's side and weighted (1 - d) d^k, and the result for whatever weight is left."""
    rec = hand_game()
    v = rec.root_values.astype(np.float64)
    z = rec.value_targets()
    for horizon in (1.0, 3.0, 6.0):
        d = 1 - 1 / horizon
        got = short_term_values(v, z, horizon)
        s = len(v)
        for j in range(s):
            want = sum((1 - d) * d ** k * (-1) ** k * v[j + k] for k in range(s - j))
            want += d ** (s - j) * (-1) ** (s - 1 - j) * z[-1]
            assert got[j] == pytest.approx(want, abs=1e-6)
    # Horizon 1: the search's own value at that ply.
    np.testing.assert_allclose(short_term_values(v, z, 1.0), v, atol=1e-6)


def test_the_reply_target_is_the_next_plys_policy():
    rec = hand_game()
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(rec)
    s = len(FULL)
    # A reply exists where the next ply had a full search; never for the last ply.
    assert buf.reply[:s].tolist() == [bool(FULL[j + 1]) for j in range(s - 1)] + [False]
    batch = make_batch(buf, np.arange(s), None, GAME)
    pos = Position.from_moves(MOVES, GAME)
    for j in range(s):
        if buf.reply[j]:
            assert batch.reply_weight[j] == 1.0
            assert batch.reply[j].argmax() == pos.index(MOVES[3 + j]) and batch.reply[j].sum() == 1
        else:
            assert batch.reply_weight[j] == 0.0 and batch.reply[j].sum() == 0
    np.testing.assert_allclose(batch.short_value, short_term_values(rec.root_values,
                                                                    rec.value_targets()))


def test_the_reply_turns_with_its_position():
    """Under the random symmetry of each sample, the reply target turns exactly as the planes
    do (the symmetry is read back from the planes, which the board's stones pin down)."""
    rec = hand_game()
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(rec)
    plain = make_batch(buf, np.arange(9), None, GAME)
    turned = make_batch(buf, np.arange(9), np.random.default_rng(5), GAME)
    moved = 0
    for j in np.flatnonzero(buf.reply[:9]):
        ks = [k for k in valid_symmetries(9, 9)
              if np.array_equal(transform_planes(plain.planes[j:j + 1], k)[0], turned.planes[j])]
        assert len(ks) == 1, ks
        np.testing.assert_array_equal(turned.reply[j],
                                      transform_policy(plain.reply[j:j + 1], ks[0], 9, 9)[0])
        moved += ks[0] != 0
    assert moved > 0   # some sample did turn


def test_an_overwritten_next_slot_is_no_reply():
    """Capacity 12: the second game's nine plies go to slots 9, 10, 11, 0, ..., 5, so slots 6 to
    8 keep the first game's last three plies."""
    buf = ReplayBuffer(GAME, 12)
    buf.add_game(hand_game())
    assert buf.reply[5]                # first game: ply 5 -> ply 6, a full search
    buf.add_game(hand_game())
    game_of = [1] * 6 + [0] * 3 + [1] * 3
    ply_of = [3, 4, 5, 6, 7, 8, 6, 7, 8, 0, 1, 2]
    for i in range(12):
        nxt = (i + 1) % 12
        follows = game_of[nxt] == game_of[i] and ply_of[nxt] == ply_of[i] + 1
        assert buf.reply[i] == (follows and bool(FULL[ply_of[nxt]])), i
    assert not buf.reply[5]            # now the second game's last ply; slot 6 is another game's
    assert buf.reply[11]               # the second game across the wrap: ply 2 -> ply 3


def test_the_buffer_file_keeps_them(tmp_path):
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(hand_game())
    buf.save(tmp_path / "b.npz", epoch=1)
    back, _ = ReplayBuffer.load(tmp_path / "b.npz", GAME, 100)
    np.testing.assert_array_equal(back.reply[:9], buf.reply[:9])
    np.testing.assert_array_equal(back.short_value[:9], buf.short_value[:9])
    np.testing.assert_array_equal(back.future[:9], buf.future[:9])
    assert back.has_future[:9].all()
    # A file from before the future targets (format 3) loads them as unknown: weight 0.
    with np.load(tmp_path / "b.npz") as data:
        older = {k: data[k] for k in data.files if k not in ("future", "has_future")}
    older["format_version"] = np.array(3)
    np.savez_compressed(tmp_path / "old.npz", **older)
    old, _ = ReplayBuffer.load(tmp_path / "old.npz", GAME, 100)
    assert not old.has_future[:9].any()
    assert (make_batch(old, np.arange(9), None, GAME).future_weight == 0).all()


def test_soft_policy_target_is_the_policy_at_a_temperature():
    p = torch.tensor([[0.64, 0.32, 0.04, 0.0], [0, 0, 0, 0]])
    soft = soft_policy_target(p, 2.0)
    want = torch.tensor([0.8, 0.32 ** 0.5, 0.2, 0.0])
    torch.testing.assert_close(soft[0], want / want.sum())
    assert soft[1].sum() == 0
    torch.testing.assert_close(soft_policy_target(p, 1.0)[0], p[0] / p[0].sum())
    # Flatter: the weakest tried move gains weight.
    assert soft[0, 2] > p[0, 2]


@pytest.fixture
def kata_batch():
    torch.manual_seed(0)
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, arch="kata"))
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(hand_game())
    batch = make_batch(buf, np.arange(9), None, GAME, rule_planes=True)
    return model, [torch.from_numpy(a) for a in batch]


def loss(model, t, aux):
    return training_loss(model, *t[:3], 0.0, *t[3:], aux=aux)


def test_targets_turned_off_add_nothing(kata_batch):
    model, t = kata_batch
    base = alphazero_loss(model, *t[:3], 0.0, t[3], t[4])["loss"]
    torch.testing.assert_close(loss(model, t, AuxWeights())["loss"], base)
    # Each target on: the loss grows by exactly its weight times its own term.
    for name in ("reply", "soft_policy", "short_value"):
        parts = loss(model, t, AuxWeights(**{name: 0.5}))
        torch.testing.assert_close(parts["loss"], base + 0.5 * parts[name])
        assert parts[name] > 0


def test_a_target_trains_only_its_own_head(kata_batch):
    model, t = kata_batch

    def grads(aux):
        model.zero_grad()
        loss(model, t, aux)["loss"].backward()
        return model.policy_out.weight.grad[:, :, 0, 0].abs().sum(dim=1), \
            model.value_fc2.weight.grad.abs().sum(dim=1)

    policy, value = grads(AuxWeights())
    assert policy[0] > 0 and policy[1] == 0 and policy[2] == 0 and value[1] == 0
    policy, value = grads(AuxWeights(reply=1.0, soft_policy=1.0, short_value=1.0))
    assert (policy > 0).all() and value[1] > 0


def test_surprise_weights_follow_the_disagreement(kata_batch):
    """With full surprise weighting, a sample whose target the network already matches (KL 0)
    has weight 0: changing its value target changes nothing."""
    model, t = kata_batch
    with torch.no_grad():
        logits, _ = model(t[0])
    t = list(t)
    t[1] = t[1].clone()
    t[1][0] = torch.softmax(logits[0], dim=0)   # sample 0: the network's own policy
    aux = AuxWeights(surprise=1.0)
    base = loss(model, t, aux)
    changed = list(t)
    changed[2] = t[2].clone()
    changed[2][0] = -t[2][0]
    torch.testing.assert_close(loss(model, changed, aux)["value"], base["value"])
    changed[2] = t[2].clone()
    changed[2][2] = -t[2][2]   # a sample the network disagrees with: it counts
    assert not torch.allclose(loss(model, changed, aux)["value"], base["value"])


@pytest.mark.parametrize("flag", ["aux_reply_weight", "soft_policy_weight", "short_value_weight",
                                  "future_weight"])
def test_the_targets_need_a_network_with_heads(flag):
    with pytest.raises(ConfigError, match="--model-arch kata"):
        TrainConfig(**{flag: 0.15})
    assert getattr(TrainConfig(model_arch="kata", **{flag: 0.15}), flag) == 0.15
    with pytest.raises(ConfigError, match="--policy-surprise"):
        TrainConfig(policy_surprise=1.5)


def test_global_pooling_is_turned_off_only_in_a_kata_network():
    assert TrainConfig(model_arch="kata", model_global_pooling=0).model_global_pooling == 0
    with pytest.raises(ConfigError, match="--model-global-pooling: .*--model-arch kata"):
        TrainConfig(model_global_pooling=0)
    with pytest.raises(ConfigError, match="--model-global-pooling: must be 1 \\(on\\) or 0"):
        TrainConfig(model_arch="kata", model_global_pooling=2)



def test_batch_norm_is_on_or_off_and_a_run_keeps_it():
    assert TrainConfig(model_batch_norm=0).model_batch_norm == 0
    with pytest.raises(ConfigError, match="--model-batch-norm: must be 1 \\(on\\) or 0"):
        TrainConfig(model_batch_norm=2)
    from alphagomoku.train.config import _FIXED_ON_RESUME

    assert "model_batch_norm" in _FIXED_ON_RESUME


# -- the future stones ---------------------------------------------------------------------------

def test_the_future_target_is_the_board_some_plies_on():
    rec = hand_game()
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(rec)
    batch = make_batch(buf, np.arange(9), None, GAME)
    for j in range(9):
        t = 2 + j   # the position before move t
        later = Position.from_moves(MOVES[:min(t + FUTURE_PLIES, len(MOVES))], GAME).board
        np.testing.assert_array_equal(buf.future[j], later)
        # From the side to move's view: its stones +1, the opponent's -1.
        mover = buf.to_move[j]
        want = np.where(later == mover, 1.0, np.where(later == 0, 0.0, -1.0))
        np.testing.assert_array_equal(batch.future[j], want)
        assert batch.future_weight[j] == 1.0
    # One ply on: the next position's board; past the end: the final board.
    idx = [Position.from_moves(MOVES, GAME).index(m) for m in MOVES]
    one = future_boards(np.array(idx), GAME.area, 1)
    for t in range(len(MOVES)):
        np.testing.assert_array_equal(one[t], Position.from_moves(MOVES[:t + 1], GAME).board)


def test_the_future_target_turns_with_its_position():
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(hand_game())
    plain = make_batch(buf, np.arange(9), None, GAME)
    turned = make_batch(buf, np.arange(9), np.random.default_rng(5), GAME)
    moved = checked = 0
    for j in range(9):
        ks = [k for k in valid_symmetries(9, 9)
              if np.array_equal(transform_planes(plain.planes[j:j + 1], k)[0], turned.planes[j])]
        if len(ks) != 1:
            continue   # a position its own mirror image (the opening): the planes cannot say
        np.testing.assert_array_equal(turned.future[j],
                                      transform_policy(plain.future[j:j + 1], ks[0], 9, 9)[0])
        moved += ks[0] != 0
        checked += 1
    assert checked >= 7 and moved > 0


@pytest.fixture
def future_batch():
    torch.manual_seed(0)
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, arch="kata", future_head=True))
    buf = ReplayBuffer(GAME, 100)
    buf.add_game(hand_game())
    batch = make_batch(buf, np.arange(9), None, GAME, rule_planes=True)
    return model, [torch.from_numpy(a) for a in batch]


def test_the_future_term_is_its_weight_times_the_mean_squared_error(future_batch):
    model, t = future_batch
    base = loss(model, t, AuxWeights())
    parts = loss(model, t, AuxWeights(future=0.5))
    torch.testing.assert_close(parts["loss"], base["loss"] + 0.5 * parts["future"])
    with torch.no_grad():
        _, _, future = model(t[0], all_heads=True)
    want = ((future - t[-2]) ** 2).mean(dim=1)
    torch.testing.assert_close(parts["future"], (want * t[-1]).sum() / t[-1].sum())
    assert parts["future"] > 0
    # Off: its head learns nothing.
    model.zero_grad()
    base["loss"].backward()
    assert model.future_out.weight.grad is None or model.future_out.weight.grad.abs().sum() == 0
    model.zero_grad()
    loss(model, t, AuxWeights(future=0.5))["loss"].backward()
    assert model.future_out.weight.grad.abs().sum() > 0


def test_a_future_target_needs_the_head(kata_batch):
    model, t = kata_batch
    with pytest.raises(ValueError, match="future head"):
        loss(model, t, AuxWeights(future=0.5))
    with pytest.raises(ValueError, match="needs a 'kata' network"):
        ModelConfig.preset("tiny", 9, future_head=True)


def test_a_resumed_run_keeps_the_future_head_on_or_off():
    on = TrainConfig(model_arch="kata", future_weight=0.25)
    assert TrainConfig(model_arch="kata", future_weight=1.0).resume_refusal(on.to_dict()) is None
    assert TrainConfig(model_arch="kata").resume_refusal({}) is None
    assert TrainConfig(model_arch="kata").resume_refusal(on.to_dict()) == (
        "--resume: the checkpoint was trained with future_weight=0.25 (a future head), this run "
        "asks for 0.0 (no future head); keep the head on or off as it was, or start a new "
        "--run-dir")
