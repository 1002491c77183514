"""Inference weights on disk: round trip, wrapper prefixes, atomic writes, and clear errors."""

import os

import pytest
import torch

from alphagomoku.nn import CheckpointError, ModelConfig, PolicyValueNet, load_model, save_model
from alphagomoku.nn.io import FORMAT, MODEL_FORMAT_VERSION, strip_prefixes


def make_model(width=7, height=None, seed=0):
    torch.manual_seed(seed)
    model = PolicyValueNet(ModelConfig.preset("tiny", width, height))
    with torch.no_grad():  # non-default batch-norm statistics must survive the trip too
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def assert_same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        assert torch.equal(sa[k], sb[k]), k


def test_round_trip_rebuilds_the_model_from_the_stored_config(tmp_path):
    model = make_model(9, 6)
    path = save_model(tmp_path / "weights" / "model.pt", model)
    loaded = load_model(path)
    assert loaded.config == model.config and loaded.config.height == 6
    assert not loaded.training
    assert_same_weights(model, loaded)
    x = torch.rand(2, 5, 6, 9)
    with torch.no_grad():
        for got, want in zip(loaded(x), model(x)):
            torch.testing.assert_close(got, want)


def test_the_file_holds_only_plain_types(tmp_path):
    path = save_model(tmp_path / "m.pt", make_model())
    payload = torch.load(path, weights_only=True)
    assert payload["format"] == FORMAT and payload["format_version"] == MODEL_FORMAT_VERSION
    assert payload["model_config"] == ModelConfig.preset("tiny", 7).to_dict()
    assert all(isinstance(v, torch.Tensor) for v in payload["state_dict"].values())


def test_a_compiled_model_saves_without_its_prefix(tmp_path):
    model = make_model()
    compiled = torch.compile(model, backend="eager")
    assert any(k.startswith("_orig_mod.") for k in compiled.state_dict())
    path = save_model(tmp_path / "m.pt", compiled)
    assert_same_weights(model, load_model(path))


def test_prefixes_of_compiled_and_distributed_wrappers_are_stripped(tmp_path):
    model = make_model()
    wrapped = {"module._orig_mod." + k: v for k, v in model.state_dict().items()}
    assert strip_prefixes(wrapped).keys() == model.state_dict().keys()
    # A file written by hand with prefixed keys still loads.
    path = tmp_path / "m.pt"
    torch.save({"format": FORMAT, "format_version": MODEL_FORMAT_VERSION,
                "model_config": model.config.to_dict(), "state_dict": wrapped}, path)
    assert_same_weights(model, load_model(path))


def test_saving_replaces_the_file_and_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "m.pt"
    save_model(path, make_model(seed=0))
    second = make_model(seed=1)
    save_model(path, second)
    assert os.listdir(tmp_path) == ["m.pt"]
    assert_same_weights(second, load_model(path))


def test_a_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "m.pt"
    first = make_model(seed=0)
    save_model(path, first)

    def broken_save(obj, f):
        f.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_model(path, make_model(seed=1))
    assert os.listdir(tmp_path) == ["m.pt"]
    monkeypatch.undo()
    assert_same_weights(first, load_model(path))


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="no model file at .*nothing.pt"):
        load_model(tmp_path / "nothing.pt")


def test_truncated_file(tmp_path):
    path = save_model(tmp_path / "m.pt", make_model())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        load_model(path)


def test_garbage_file(tmp_path):
    path = tmp_path / "m.pt"
    path.write_bytes(b"\x00\x01 this is not a torch file" * 10)
    with pytest.raises(CheckpointError, match="truncated or corrupt") as info:
        load_model(path)
    # torch's text suggests loading the file unsafely; the message keeps only what is wrong.
    assert "\n" not in str(info.value) and "weights_only" not in str(info.value)
    assert "UnpicklingError: " in str(info.value)


def test_a_pickled_module_is_refused_in_one_line(tmp_path):
    path = tmp_path / "m.pt"
    torch.save(make_model(), path)  # the whole module, which the safe loader will not build
    with pytest.raises(CheckpointError, match="Unsupported global") as info:
        load_model(path)
    assert "\n" not in str(info.value) and "add_safe_globals" not in str(info.value)


def test_a_file_that_is_not_ours(tmp_path):
    path = tmp_path / "m.pt"
    torch.save(make_model().state_dict(), path)  # a bare state dict, as other tools write
    with pytest.raises(CheckpointError, match="not an alphagomoku model file"):
        load_model(path)


def test_a_newer_format_version_asks_for_an_update(tmp_path):
    path = tmp_path / "m.pt"
    model = make_model()
    torch.save({"format": FORMAT, "format_version": MODEL_FORMAT_VERSION + 1,
                "model_config": model.config.to_dict(), "state_dict": model.state_dict()}, path)
    with pytest.raises(CheckpointError, match="version 2.*update"):
        load_model(path)


def test_an_invalid_stored_config(tmp_path):
    path = tmp_path / "m.pt"
    model = make_model()
    torch.save({"format": FORMAT, "format_version": MODEL_FORMAT_VERSION,
                "model_config": {**model.config.to_dict(), "width": 99},
                "state_dict": model.state_dict()}, path)
    with pytest.raises(CheckpointError, match="invalid model config.*width"):
        load_model(path)


def test_weights_of_another_shape(tmp_path):
    path = tmp_path / "m.pt"
    small_board = make_model(7)
    torch.save({"format": FORMAT, "format_version": MODEL_FORMAT_VERSION,
                "model_config": ModelConfig.preset("tiny", 9).to_dict(),
                "state_dict": small_board.state_dict()}, path)
    wanted = "(?s)do not fit a b2c32 9x9 model.*size mismatch for policy_fc.weight"
    with pytest.raises(CheckpointError, match=wanted):
        load_model(path)


def test_missing_keys_are_a_checkpoint_error(tmp_path):
    path = tmp_path / "m.pt"
    model = make_model()
    sd = model.state_dict()
    del sd["policy_fc.weight"]
    torch.save({"format": FORMAT, "format_version": MODEL_FORMAT_VERSION,
                "model_config": model.config.to_dict(), "state_dict": sd}, path)
    with pytest.raises(CheckpointError, match="policy_fc.weight"):
        load_model(path)
