"""The ONNX Runtime backend: agreement with torch for every preset and batch size, weight swaps,
the choice between backends, and the one-line fall-back to torch when ONNX cannot be used."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn import inference_backend as nb
from alphagomoku.nn.config import PRESETS
from alphagomoku.nn.evaluator import Evaluator
from alphagomoku.selfplay.game_loop import SelfPlaySettings
from alphagomoku.selfplay.worker import SelfPlayTask, WorkerSpec, run_task, setup_worker
from alphagomoku.train.config import ConfigError, TrainConfig
from conftest import POOL_GAME

from alphagomoku.nn import onnx_evaluator

# The fall-back tests run everywhere; these need the [onnx] extra, which `make setup` installs.
needs_onnx = pytest.mark.skipif(bool(nb.onnx_problem()), reason=nb.onnx_problem() or "installed")

# The big presets on a small board: the same layers, a fraction of the time.
BOARD = {"tiny": 15, "compact": 15, "small": 15, "medium": 9, "large": 7}


def batch(config, n, rng):
    planes = (rng.random((n, config.num_planes, config.height, config.width)) < 0.3).astype(np.float32)
    legal = rng.random((n, config.area)) < 0.6
    return planes, legal


def model_for(preset, seed=0, width=None, arch="az"):
    torch.manual_seed(seed)
    model = PolicyValueNet(ModelConfig.preset(preset, width or BOARD[preset], arch=arch)).eval()
    # Batch-norm statistics away from 0/1, as after training, so the export must carry them.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return model


@pytest.fixture(autouse=True)
def fresh_reports(monkeypatch):
    monkeypatch.setattr(nb, "_REPORTED", set())


@needs_onnx
@pytest.mark.parametrize("preset", list(PRESETS))
def test_onnx_matches_torch_for_every_preset_and_batch_size(preset, rng):
    model = model_for(preset)
    onnx_ev = onnx_evaluator.OnnxEvaluator(model)
    torch_ev = Evaluator(model, "cpu")
    # One session, the batch size changing between calls (fewer calls for the slow presets).
    for n in (1, 5, 16) if preset in ("tiny", "compact", "small") else (1, 4):
        planes, legal = batch(model.config, n, rng)
        legal[0] = False  # a row with no legal point: zeros, not NaN
        p_onnx, v_onnx = onnx_ev(planes, legal)
        p_torch, v_torch = torch_ev(planes, legal)
        assert p_onnx.dtype == np.float32 and v_onnx.dtype == np.float32
        assert p_onnx.shape == (n, model.config.area) and v_onnx.shape == (n,)
        np.testing.assert_allclose(p_onnx, p_torch, atol=1e-5, rtol=1e-3)
        np.testing.assert_allclose(v_onnx, v_torch, atol=1e-5, rtol=1e-3)
        assert np.all(p_onnx[~legal] == 0) and np.all(p_onnx[0] == 0)
        np.testing.assert_allclose(p_onnx[1:].sum(axis=1), 1.0, atol=1e-5)


@needs_onnx
def test_onnx_takes_new_weights_and_checks_its_inputs(rng):
    first, second = model_for("tiny", seed=1, width=9), model_for("tiny", seed=2, width=9)
    ev = onnx_evaluator.OnnxEvaluator(first)
    planes, legal = batch(first.config, 4, rng)
    before = ev(planes, legal)
    ev.load_state_dict({f"_orig_mod.{k}": v for k, v in second.state_dict().items()})
    after = ev(planes, legal)
    expected = Evaluator(second, "cpu")(planes, legal)
    assert not np.allclose(before[1], after[1])
    np.testing.assert_allclose(after[0], expected[0], atol=1e-5, rtol=1e-3)
    np.testing.assert_allclose(after[1], expected[1], atol=1e-5, rtol=1e-3)
    assert ev(planes[:0], legal[:0])[0].shape == (0, 81)
    with pytest.raises(ValueError, match="planes must have shape"):
        ev(planes[:, :, :7], legal)
    with pytest.raises(TypeError, match="bool"):
        ev(planes, legal.astype(np.float32))
    assert "onnxruntime" in ev.describe() and "1 thread" in ev.describe()


@needs_onnx
def test_auto_picks_onnx_on_the_cpu_and_torch_elsewhere():
    model = model_for("tiny", width=7)
    assert isinstance(nb.make_evaluator(model, "cpu", "auto"), onnx_evaluator.OnnxEvaluator)
    assert isinstance(nb.make_evaluator(model, "cpu", "torch"), Evaluator)
    for device in ("cuda", "cuda:1", "mps", torch.device("mps")):
        assert not nb.wants_onnx("auto", device) and not nb.wants_onnx("onnx", device)
    assert nb.wants_onnx("onnx", torch.device("cpu"))
    with pytest.raises(ValueError, match="auto, torch, onnx"):
        nb.wants_onnx("tensorrt", "cpu")


def test_a_missing_onnxruntime_falls_back_to_torch_with_one_line(monkeypatch, rng):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime now fails
    model = model_for("tiny", width=7)
    lines: list[str] = []
    evaluators = [nb.make_evaluator(model, "cpu", "auto", log=lines.append) for _ in range(3)]
    assert all(type(ev) is Evaluator for ev in evaluators)
    assert len(lines) == 1, lines
    assert "falling back to torch" in lines[0] and "pip install 'alphagomoku[onnx]'" in lines[0]
    planes, legal = batch(model.config, 3, rng)
    np.testing.assert_allclose(evaluators[0](planes, legal)[1], Evaluator(model)(planes, legal)[1])
    assert "inference: torch (fallback: onnxruntime or onnx is not installed" in \
        nb.describe_backend("auto", "cpu")
    # Asked for by name, it is an error that says why, as a missing --device is.
    with pytest.raises(nb.InferenceBackendError, match="onnx was asked for.*not installed"):
        nb.make_evaluator(model, "cpu", "onnx", log=lines.append)
    # On a GPU nothing is missing: torch is what runs there anyway.
    nb.require_backend("onnx", "cuda")


@needs_onnx
def test_an_export_that_fails_falls_back_to_torch_with_one_line(monkeypatch):
    def broken(model):
        raise RuntimeError("exporter exploded\nsecond line")

    monkeypatch.setattr(onnx_evaluator, "export_onnx", broken)
    model = model_for("tiny", width=7)
    lines: list[str] = []
    for _ in range(2):  # a second weights version failing the same way adds no line
        assert type(nb.make_evaluator(model, "cpu", "auto", log=lines.append)) is Evaluator
    assert lines == ["inference: falling back to torch on the CPU: ONNX Runtime could not load "
                     "the network (RuntimeError: exporter exploded)"]
    with pytest.raises(nb.InferenceBackendError, match="exporter exploded"):
        nb.make_evaluator(model, "cpu", "onnx")


def test_the_config_validates_the_backend_and_the_flag_sets_it():
    from alphagomoku.train import cli

    assert TrainConfig().inference_backend == "auto"
    with pytest.raises(ConfigError, match="--inference-backend: must be one of auto, torch, onnx"):
        TrainConfig(inference_backend="onnxruntime")
    args = cli.build_parser().parse_args(["--inference-backend", "torch"])
    assert cli.resolve_config(args).inference_backend == "torch"


def test_the_mixed_precision_flag_reaches_the_workers_evaluator(weights):
    from alphagomoku.device import select_device
    from alphagomoku.train import cli
    from alphagomoku.train.selfplay_epoch import worker_spec

    assert TrainConfig().inference_amp == "auto"
    with pytest.raises(ConfigError, match="--inference-amp: must be one of auto, on, off"):
        TrainConfig(inference_amp="bf16")
    cfg = cli.resolve_config(cli.build_parser().parse_args(["--inference-amp", "on"]))
    assert worker_spec(cfg, select_device("cpu")).inference_amp == "on"
    forced = setup_worker(0, dataclasses.replace(_spec("torch"), inference_amp="on"))
    run_task(forced, SelfPlayTask(0, 1, seed=1, weights_path=weights, weights_version=0))
    assert forced.evaluator.amp_dtype == torch.bfloat16  # autocast on a CPU is bf16
    default = setup_worker(1, _spec("torch"))
    run_task(default, SelfPlayTask(0, 1, seed=1, weights_path=weights, weights_version=0))
    assert default.evaluator.amp is False  # auto: fp32 away from CUDA
    with pytest.raises(ValueError, match="mixed precision must be one of auto, on, off, got 'bf16'"):
        nb.make_evaluator(model_for("tiny"), "cpu", "torch", amp="bf16")


def _spec(backend):
    from alphagomoku.mcts import SearchConfig

    return WorkerSpec(game=POOL_GAME, search=SearchConfig(num_simulations=4),
                      settings=SelfPlaySettings(games_at_once=2), device="cpu",
                      inference_backend=backend)


@needs_onnx
def test_a_cpu_worker_plays_with_onnx_and_says_so(weights, capfd):
    state = setup_worker(0, _spec("auto"))
    assert "; inference: onnxruntime " in state.device_line and not state.init_error
    result = run_task(state, SelfPlayTask(0, 2, seed=1, weights_path=weights, weights_version=0))
    assert isinstance(state.evaluator, onnx_evaluator.OnnxEvaluator) and len(result.records) == 2
    torch_state = setup_worker(1, _spec("torch"))
    assert torch_state.device_line.endswith("; inference: torch")
    run_task(torch_state, SelfPlayTask(0, 1, seed=1, weights_path=weights, weights_version=0))
    assert type(torch_state.evaluator) is Evaluator


def test_a_worker_without_onnxruntime_says_it_once_or_stops_when_onnx_was_asked(
        weights, monkeypatch, capfd):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    state = setup_worker(0, _spec("auto"))
    assert "inference: torch (fallback: onnxruntime or onnx is not installed" in state.device_line
    run_task(state, SelfPlayTask(0, 1, seed=1, weights_path=weights, weights_version=0))
    assert type(state.evaluator) is Evaluator
    err = capfd.readouterr().err
    assert err.count("onnxruntime or onnx is not installed") == 1, err  # the device line only
    strict = setup_worker(0, _spec("onnx"))
    assert "InferenceBackendError" in strict.init_error and "FAILED" in strict.device_line
