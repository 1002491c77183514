"""ModelConfig validation and presets; PolicyValueNet shapes and ranges on many board sizes."""

import sys
import subprocess

import pytest
import torch

from alphagomoku.game import GameConfig, Position
from alphagomoku.game.constants import NUM_PLANES
from alphagomoku.nn import PRESETS, ModelConfig, PolicyValueNet


def _randomise_batch_norm(model, seed=0):
    """Fresh batch norms are the identity; random statistics make eval mode matter."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)


# -- config -------------------------------------------------------------------------------------
def test_presets_grow_and_default_to_a_square_15x15_board():
    sizes = [ModelConfig.preset(name).num_parameters() for name in PRESETS]
    assert list(PRESETS) == ["tiny", "compact", "small", "medium", "large"]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(PRESETS)
    cfg = ModelConfig.preset("small")
    assert (cfg.width, cfg.height, cfg.num_planes) == (15, 15, NUM_PLANES)
    assert (cfg.blocks, cfg.channels) == PRESETS["small"][:2]
    assert ModelConfig.preset("tiny", 9, 7).area == 63


def test_config_is_frozen_and_round_trips_through_a_dict():
    cfg = ModelConfig.preset("tiny", 9, 11)
    with pytest.raises(AttributeError):
        cfg.blocks = 3
    again = ModelConfig.from_dict(cfg.to_dict())
    assert again == cfg and again.height == 11


@pytest.mark.parametrize("kwargs, words", [
    ({"blocks": 2, "channels": 8, "width": 4}, ["width", "5", "22", "4"]),
    ({"blocks": 2, "channels": 8, "width": 9, "height": 23}, ["height", "23"]),
    ({"blocks": 0, "channels": 8}, ["blocks", "positive"]),
    ({"blocks": 2, "channels": 8.0}, ["channels"]),
    ({"blocks": True, "channels": 8}, ["blocks"]),
    ({"blocks": 2, "channels": 8, "value_hidden": -1}, ["value_hidden"]),
])
def test_bad_configs_are_rejected_with_the_field_named(kwargs, words):
    with pytest.raises(ValueError) as info:
        ModelConfig(**kwargs)
    for w in words:
        assert w in str(info.value)


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown model preset 'huge'.*tiny, compact, small, medium, large"):
        ModelConfig.preset("huge")


def test_from_dict_rejects_unknown_and_missing_keys():
    d = ModelConfig.preset("tiny").to_dict()
    with pytest.raises(ValueError, match="unknown model config key.*'dropout'"):
        ModelConfig.from_dict({**d, "dropout": 0.1})
    del d["channels"]
    with pytest.raises(ValueError, match="lacks channels"):
        ModelConfig.from_dict(d)
    with pytest.raises(ValueError, match="must be a dict"):
        ModelConfig.from_dict([1, 2])


def test_parameter_and_weight_counts_match_torch():
    for cfg in (ModelConfig.preset("tiny", 7), ModelConfig(blocks=3, channels=16, width=6, height=9,
                                                          value_hidden=5)):
        model = PolicyValueNet(cfg)
        assert cfg.num_parameters() == sum(p.numel() for p in model.parameters())
        float_buffers = [b for b in model.buffers() if b.dtype.is_floating_point]
        held = sum(t.numel() * 4 for t in [*model.parameters(), *float_buffers])
        assert cfg.weight_bytes() == held


def test_importing_the_config_does_not_load_torch():
    code = ("import sys; from alphagomoku.nn import ModelConfig; ModelConfig.preset('large')"
            ".num_parameters(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


# -- the network --------------------------------------------------------------------------------
@pytest.mark.parametrize("preset, width, height, batch", [
    ("tiny", 5, 5, 3),
    ("tiny", 15, 15, 4),
    ("tiny", 9, 7, 2),      # rectangular, wider than high
    ("tiny", 6, 11, 2),     # rectangular, higher than wide
    ("tiny", 22, 22, 1),
    ("small", 9, 9, 2),
    ("medium", 7, 7, 1),
    ("large", 5, 5, 1),
    ("large", 15, 15, 1),   # the one full-size run of the biggest preset
])
def test_forward_shapes_and_ranges(preset, width, height, batch):
    torch.manual_seed(0)
    cfg = ModelConfig.preset(preset, width, height)
    model = PolicyValueNet(cfg).eval()
    x = (torch.rand(batch, NUM_PLANES, height, width) < 0.3).float()
    with torch.no_grad():
        logits, value = model(x)
    assert logits.shape == (batch, width * height) and logits.dtype == torch.float32
    assert value.shape == (batch,)
    assert torch.isfinite(logits).all()
    assert (value.abs() <= 1).all()


def test_value_head_ends_in_tanh_even_for_huge_activations():
    torch.manual_seed(1)
    model = PolicyValueNet(ModelConfig.preset("tiny", 7)).eval()
    with torch.no_grad():
        model.value_fc2.weight.mul_(1e4)
        _, value = model(torch.rand(8, NUM_PLANES, 7, 7))
    assert (value.abs() <= 1).all() and (value.abs() > 0.99).any()


def test_forward_takes_the_game_core_planes():
    pos = Position.from_moves(["d4", "e5", "c3"], GameConfig(width=9, height=7))
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, 7)).eval()
    with torch.no_grad():
        logits, _ = model(torch.from_numpy(pos.planes())[None])
    assert logits.shape == (1, 63)


def test_forward_rejects_planes_for_another_board():
    model = PolicyValueNet(ModelConfig.preset("tiny", 9))
    with pytest.raises(ValueError, match=r"\(B, 5, 9, 9\).*got \(1, 5, 7, 7\)"):
        model(torch.zeros(1, NUM_PLANES, 7, 7))
    with pytest.raises(TypeError, match="ModelConfig"):
        PolicyValueNet({"blocks": 2, "channels": 8})


def test_batch_rows_are_independent_in_eval_mode():
    torch.manual_seed(2)
    model = PolicyValueNet(ModelConfig.preset("tiny", 7)).eval()
    _randomise_batch_norm(model)
    x = torch.rand(5, NUM_PLANES, 7, 7)
    with torch.no_grad():
        all_logits, all_values = model(x)
        one_logits, one_value = model(x[3:4])
    torch.testing.assert_close(all_logits[3:4], one_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(all_values[3:4], one_value, rtol=1e-5, atol=1e-5)
