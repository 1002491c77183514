"""Denormal floats, which a CPU multiplies about a hundred times slower than normal ones: weight
decay leaves them in dead channels' weights, so saved weights drop them and CPU processes read
them as zero."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.io import load_model, save_model


@pytest.mark.parametrize("flushed", [False, True], ids=["as-is", "after-flush_denormals"])
def test_saved_weights_hold_no_denormals_and_the_model_keeps_its_own(tmp_path, flushed):
    if flushed:
        from alphagomoku.device import flush_denormals

        flush_denormals()
    net = PolicyValueNet(ModelConfig.preset("tiny", 9, arch="kata", batch_norm=False))
    weight = net.stem[0].weight
    # Written as bits: once denormals are flushed, any conversion from a float makes them zero.
    # A positive and a negative denormal (exponent bits zero), then the smallest normal float.
    bits = weight.detach().numpy().view(np.int32)
    bits[0, 0, 0, :3] = [0x00012345, 0x80054321 - 2**32, 0x00800000]
    loaded = load_model(save_model(tmp_path / "m.pt", net), device="cpu")
    saved = loaded.stem[0].weight
    saved_bits = saved.detach().numpy().view(np.int32)
    assert (saved_bits[0, 0, 0, :2] & 0x7FFFFFFF).tolist() == [0, 0]  # zeros (-0.0 included)
    assert saved_bits[0, 0, 0, 2] == bits[0, 0, 0, 2] != 0
    # The live model is not changed under the trainer (read from the bits: once denormals are
    # flushed, a comparison reads them as zero).
    assert bits[0, 0, 0, 0] != 0
    others = [k for k in net.state_dict() if k != "stem.0.weight"]
    assert all(torch.equal(net.state_dict()[k], loaded.state_dict()[k]) for k in others)


def test_cpu_processes_read_denormals_as_zero():
    from alphagomoku.device import flush_denormals

    flush_denormals()
    assert float(torch.tensor([1e-30]) * torch.tensor([1e-10])) == 0.0
    assert float(torch.tensor([1e-30]) * torch.tensor([1e-7])) == pytest.approx(1e-37)


def test_onnx_sessions_read_denormals_as_zero():
    ort = pytest.importorskip("onnxruntime")
    from alphagomoku.nn.onnx_file import session_options

    assert session_options(ort, 1).get_session_config_entry("session.set_denormal_as_zero") == "1"
