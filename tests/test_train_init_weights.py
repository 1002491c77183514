"""--init-weights: a new run that starts from another run's or a shipped model's weights."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

import pytest
import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import CheckpointError, load_model, save_model
from alphagomoku.train.config import TrainConfig


def _config(tmp_path, **overrides) -> TrainConfig:
    settings = dict(board_size=7, n_in_row=4, model_preset="tiny", model_arch="kata", device="cpu",
                    selfplay_games=2, games_per_task=2, simulations=8, batch_size=32,
                    steps_per_epoch=2, parallel_workers=0, vcf_plane_budget=0, ema_decay=0.9,
                    run_dir=str(tmp_path / "run"))
    settings.update(overrides)
    return TrainConfig(**settings)


def _saved_net(path, seed: int, preset: str = "tiny", arch: str = "kata", width: int = 9,
               batch_norm: bool = True):
    torch.manual_seed(seed)
    net = PolicyValueNet(ModelConfig.preset(preset, width, arch=arch, vcf_plane_budget=0,
                                            batch_norm=batch_norm))
    # Random last convolutions, as a trained network has, not the zeros a fresh one starts with.
    with torch.no_grad():
        for name, tensor in net.named_parameters():
            if ".conv2." in name and not tensor.any():
                tensor.normal_(0.0, 0.1)
    save_model(path, net)
    return net


def _assert_same_outputs(source, grown, seed: int) -> torch.Tensor:
    """Both networks' policy and value on a batch of random 7x7 positions agree; the batch."""
    torch.manual_seed(seed)
    x = (torch.rand(6, source.config.num_planes, 7, 7) < 0.3).float()
    source.eval(), grown.eval()
    with torch.no_grad():
        for a, b in zip(source(x), grown(x)):
            assert torch.allclose(a, b, atol=1e-6)
    return x


def _same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_kata_run_starts_from_the_weights_of_another_board(tmp_path):
    from alphagomoku.train.loop import Trainer

    source = _saved_net(tmp_path / "nine.pt", seed=5, width=9)
    lines = []
    trainer = Trainer(_config(tmp_path, init_weights=str(tmp_path / "nine.pt")), log=lines.append,
                      progress=False)
    assert _same_weights(trainer.model.state_dict(), source.state_dict())
    # Everything that plays (the weight average, the first weights the workers get) starts there too.
    assert _same_weights(trainer.average.state_dict(), source.state_dict())
    first = load_model(trainer.initial_weights)
    assert first.config.width == 7
    assert _same_weights(first.state_dict(), source.state_dict())
    assert any("starting from the weights in" in x for x in lines)

    fresh = Trainer(_config(tmp_path, run_dir=str(tmp_path / "fresh")), log=lambda _: None,
                    progress=False)
    assert not _same_weights(fresh.model.state_dict(), source.state_dict())


def test_a_deeper_run_starts_from_a_shallower_network_and_plays_as_it_did(tmp_path):
    from alphagomoku.train.loop import Trainer

    source = _saved_net(tmp_path / "two.pt", seed=3, width=9, batch_norm=False)
    cfg = _config(tmp_path, init_weights=str(tmp_path / "two.pt"), model_blocks=4,
                  model_batch_norm=0)
    trainer = Trainer(cfg, log=lambda _: None, progress=False)
    grown = trainer.model
    assert len(grown.tower) == 4 and grown.config.blocks == 4
    kept = source.state_dict()
    mine = grown.state_dict()
    assert all(torch.equal(mine[k], v) for k, v in kept.items())
    # The added blocks learn (their first convolution is random) but start as the identity.
    assert mine["tower.2.conv1.0.weight"].abs().sum() > 0
    assert not mine["tower.3.conv2.0.weight"].any()
    _assert_same_outputs(source, grown, seed=0)
    # The run's saved settings keep the depth, which a resumed run may not change.
    assert json.loads((tmp_path / "run" / "config.json").read_text())["model_blocks"] == 4
    assert "model_blocks" in cfg.resume_refusal(asdict(replace(cfg, model_blocks=3)))


def test_a_wider_and_deeper_run_starts_from_a_narrower_network_and_plays_as_it_did(tmp_path):
    from alphagomoku.train.loop import Trainer

    source = _saved_net(tmp_path / "narrow.pt", seed=4, width=9, batch_norm=False)
    cfg = _config(tmp_path, init_weights=str(tmp_path / "narrow.pt"), model_blocks=3,
                  model_channels=48, model_batch_norm=0)
    grown = Trainer(cfg, log=lambda _: None, progress=False).model
    assert grown.config.channels == 48 and grown.config.blocks == 3
    # The pooled branch widens with the tower (a quarter of its channels: 12 here, 8 before),
    # so the pooled readers' inputs move within their three groups.
    assert grown.config.pool_channels == 12 and source.config.pool_channels == 8
    x = _assert_same_outputs(source, grown, seed=1)
    # Every new weight that an old output reads is zero, and learns from the first step.
    mine = grown.state_dict()
    assert not mine["tower.0.conv1.0.weight"][:32, 32:].any()
    assert mine["stem.0.weight"][32:].abs().sum() > 0
    grown.train()
    logits, value = grown(x)
    (logits.logsumexp(dim=1).mean() + value.mean()).backward()
    params = dict(grown.named_parameters())
    for name, new_inputs in (("tower.0.conv1.0.weight", slice(32, 48)),
                             ("policy_conv.0.weight", slice(32, 48)),
                             ("tower.1.pool_fc.weight", slice(8, 12))):   # the mean's group
        assert params[name].grad[:32, new_inputs].abs().sum() > 0, name
    assert "model_channels" in cfg.resume_refusal(asdict(replace(cfg, model_channels=64)))


def test_growth_keeps_every_old_weight_in_its_place():
    from alphagomoku.nn.grow import grown_state

    torch.manual_seed(2)
    narrow = ModelConfig.preset("tiny", 9, arch="kata", vcf_plane_budget=0, batch_norm=False)
    net = PolicyValueNet(narrow)
    wide = replace(narrow, channels=64)
    state = grown_state(narrow, net.state_dict(), wide)
    old = net.state_dict()
    assert torch.equal(state["tower.0.conv2.0.weight"][:32, :32], old["tower.0.conv2.0.weight"])
    # The pooled readers: mean, scaled mean and max of 8 pooled channels, now of 16.
    fc = state["tower.1.pool_fc.weight"]
    for group in range(3):
        assert torch.equal(fc[:32, 16 * group:16 * group + 8],
                           old["tower.1.pool_fc.weight"][:, 8 * group:8 * group + 8])
        assert not fc[:32, 16 * group + 8:16 * group + 16].any()
    with pytest.raises(ValueError, match="only add blocks or channels"):
        grown_state(wide, PolicyValueNet(wide).state_dict(), narrow)


@pytest.mark.parametrize("arch, batch_norm, vcf", [("kata", True, 0), ("az", True, 50),
                                                    ("kata", False, 50)])
def test_a_run_with_the_threat_planes_starts_computing_what_the_network_without_them_did(
        tmp_path, arch, batch_norm, vcf):
    """The new planes' first-layer weights start at zero and the planes after them (the rule's)
    move along, so the grown network answers any input as the old one did without the planes;
    a network that reads them may not go back to one that does not."""
    from alphagomoku.game.constants import NUM_PLANES, THREAT_PLANES, VCF_PLANES
    from alphagomoku.train.loop import Trainer

    width = 9 if arch == "kata" else 7
    torch.manual_seed(4)
    source = PolicyValueNet(ModelConfig.preset("tiny", width, arch=arch, vcf_plane_budget=vcf,
                                               batch_norm=batch_norm))
    with torch.no_grad():
        for tensor in source.parameters():
            tensor.normal_(0.0, 0.1)  # every weight visibly used, as in a trained network
        for module in source.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.normal_(0.0, 0.1)
    save_model(tmp_path / "plain.pt", source)
    cfg = _config(tmp_path, init_weights=str(tmp_path / "plain.pt"), model_arch=arch,
                  model_batch_norm=int(batch_norm), vcf_plane_budget=vcf, model_threat_planes=1)
    grown = Trainer(cfg, log=lambda _: None, progress=False).model
    assert grown.config.threat_planes
    first = NUM_PLANES + (VCF_PLANES if vcf else 0)
    assert grown.config.num_planes == source.config.num_planes + THREAT_PLANES
    assert not grown.stem[0].weight[:, first:first + THREAT_PLANES].any()
    torch.manual_seed(5)
    x = (torch.rand(6, source.config.num_planes, 7, 7) < 0.3).float()
    threats = (torch.rand(6, THREAT_PLANES, 7, 7) < 0.3).float()
    wide = torch.cat([x[:, :first], threats, x[:, first:]], dim=1)
    source.eval(), grown.eval()
    with torch.no_grad():
        for a, b in zip(source(x), grown(wide)):
            assert torch.allclose(a, b, atol=1e-6)
    save_model(tmp_path / "threats.pt", grown)
    with pytest.raises(CheckpointError, match="threat_planes"):
        Trainer(_config(tmp_path, init_weights=str(tmp_path / "threats.pt"), model_arch=arch,
                        model_batch_norm=int(batch_norm), vcf_plane_budget=vcf,
                        run_dir=str(tmp_path / "back")), progress=False)


@pytest.mark.parametrize("blocks, batch_norm, words", [
    (4, 1, "blocks=2 (this run: 4); add --model-blocks 2 to match it"),  # batch norm's
    # statistics would not start as the identity
    (1, 0, "blocks=2 (this run: 1); add --model-blocks 2 to match it"),  # nor does one shrink
])
def test_depth_grows_only_without_batch_norm(tmp_path, blocks, batch_norm, words):
    from alphagomoku.train.loop import Trainer

    _saved_net(tmp_path / "two.pt", seed=3, width=9, batch_norm=bool(batch_norm))
    with pytest.raises(CheckpointError, match="--init-weights") as caught:
        Trainer(_config(tmp_path, init_weights=str(tmp_path / "two.pt"), model_blocks=blocks,
                        model_batch_norm=batch_norm), progress=False)
    assert words in str(caught.value)


@pytest.mark.parametrize("preset, arch, width, words", [
    # Another size of network, whose value head no flag but the preset sets.
    ("small", "kata", 9, "channels=64 (this run: 32)"),
    ("tiny", "az", 7, "arch='az' (this run: 'kata'); add --model-arch az to match it"),
])
def test_weights_of_another_network_are_refused_naming_what_differs(tmp_path, preset, arch, width,
                                                                    words):
    from alphagomoku.train.loop import Trainer

    _saved_net(tmp_path / "other.pt", seed=1, preset=preset, arch=arch, width=width)
    with pytest.raises(CheckpointError, match="--init-weights") as caught:
        Trainer(_config(tmp_path, init_weights=str(tmp_path / "other.pt")), progress=False)
    assert words in str(caught.value)
    assert ("choose the run's --model-preset" in str(caught.value)) == (preset != "tiny")
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_an_az_network_of_another_board_is_refused(tmp_path):
    from alphagomoku.train.loop import Trainer

    _saved_net(tmp_path / "az9.pt", seed=1, arch="az", width=9)
    with pytest.raises(CheckpointError, match="width=9"):
        Trainer(_config(tmp_path, model_arch="az", init_weights=str(tmp_path / "az9.pt")),
                progress=False)


def test_a_missing_or_corrupt_file_is_one_clear_line(tmp_path, capsys):
    from alphagomoku.train import cli

    (tmp_path / "broken.pt").write_bytes(b"not a model")
    for name, words in (("missing.pt", "no model file"), ("broken.pt", "not a readable model file")):
        code = cli.main(["--board-size", "7", "--n-in-row", "4", "--model-arch", "kata",
                         "--device", "cpu", "--parallel-workers", "0", "--no-progress",
                         "--run-dir", str(tmp_path / name), "--init-weights", str(tmp_path / name)])
        err = capsys.readouterr().err
        assert code == 1
        assert "train.py: error: --init-weights:" in err and words in err, err
        assert "Traceback" not in err


def test_weights_that_do_not_fit_their_own_config_are_refused(tmp_path):
    from alphagomoku.train.checkpoint import starting_weights

    source = _saved_net(tmp_path / "damaged.pt", seed=1)
    payload = torch.load(tmp_path / "damaged.pt", weights_only=True)
    del payload["state_dict"][next(iter(payload["state_dict"]))]
    torch.save(payload, tmp_path / "damaged.pt")
    with pytest.raises(CheckpointError, match="--init-weights: weights .* do not fit"):
        starting_weights(tmp_path / "damaged.pt", source.config)
