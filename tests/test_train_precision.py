"""The trainer's layout and mixed precision on a CPU: channels-last weights, bf16 when asked, and
files that read the same as from a network kept in the default layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku import device as dev
from alphagomoku.nn.io import load_model, save_model
from alphagomoku.train.config import ConfigError, TrainConfig
from alphagomoku.train.metrics import read_metrics

CPU = dev.DeviceChoice(torch.device("cpu"), "cpu", "test CPU", "test")
MPS = dev.DeviceChoice(torch.device("mps"), "mps", "test GPU", "test")


def test_a_cpu_trains_in_bf16_only_when_asked_and_mps_never():
    assert dev.training_autocast_dtype(CPU, "auto") is None
    assert dev.training_autocast_dtype(CPU, "on") == torch.bfloat16
    assert dev.training_autocast_dtype(CPU, "off") is None
    assert dev.training_autocast_dtype(MPS, "on") is None


def test_only_the_cpu_keeps_its_weights_channels_last():
    assert dev.training_memory_format("cpu") == torch.channels_last
    for kind in ("cuda", "mps"):
        assert dev.training_memory_format(kind) == torch.contiguous_format


def test_an_unknown_mode_is_refused_by_name():
    with pytest.raises(ConfigError, match="--train-amp: must be one of auto, on, off"):
        TrainConfig(train_amp="bf16")


def _tiny_trainer(tmp_path, amp: str):
    from alphagomoku.train.loop import Trainer

    cfg = TrainConfig(board_size=7, n_in_row=4, model_preset="tiny", device="cpu",
                      selfplay_games=4, games_per_task=4, simulations=8, batch_size=32,
                      steps_per_epoch=3, min_buffer_positions=32, parallel_workers=0,
                      final_eval_games=0, epochs=2, train_amp=amp, run_dir=str(tmp_path / amp))
    return Trainer(cfg, log=lambda _: None, progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("amp", ["on", "off"])
def test_a_run_trains_in_the_mode_asked_and_its_files_read_as_from_a_plain_network(tmp_path, amp):
    trainer = _tiny_trainer(tmp_path, amp)
    assert trainer.amp_dtype == (torch.bfloat16 if amp == "on" else None)
    conv = next(p for p in trainer.model.parameters() if p.dim() == 4)
    assert conv.is_contiguous(memory_format=torch.channels_last) and conv.stride()[1] == 1
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.run()
    rows = read_metrics(tmp_path / amp / "metrics.csv")
    assert [int(r["train_steps"]) for r in rows] == [3, 3], rows
    params = list(trainer.model.parameters())
    # Trained, in fp32 weights whatever the arithmetic, and still channels-last.
    assert all(p.dtype == torch.float32 and torch.isfinite(p).all() for p in params)
    assert any(not torch.equal(a, b) for a, b in zip(before, params))
    assert conv.is_contiguous(memory_format=torch.channels_last)

    # The saved network, loaded into the default layout, and its ONNX file answer as the
    # trainer's own network does.
    path = save_model(tmp_path / "net.pt", trainer.model)
    loaded = load_model(path)
    assert all(p.is_contiguous() for p in loaded.parameters())
    rng = np.random.default_rng(0)
    planes = (rng.random((5, loaded.config.num_planes, 7, 7)) < 0.3).astype(np.float32)
    legal = np.ones((5, 49), dtype=np.bool_)
    trainer.model.eval()
    with torch.no_grad():
        want_logits, want_values = trainer.model(torch.from_numpy(planes))
        got_logits, got_values = loaded(torch.from_numpy(planes))
    assert torch.allclose(got_logits, want_logits, atol=1e-5)
    assert torch.allclose(got_values, want_values, atol=1e-5)
    pytest.importorskip("onnxruntime", reason="the [onnx] extra is not installed")
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    priors, values = OnnxEvaluator(trainer.model)(planes, legal)
    assert np.allclose(priors, torch.softmax(want_logits, dim=1).numpy(), atol=1e-5)
    assert np.allclose(values, want_values.numpy().reshape(-1), atol=1e-5)
