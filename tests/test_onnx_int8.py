"""int8 convolutions for CPU workers: the sample of positions they calibrate on, the quantised
network's answers beside fp32's, the switch once calibrated, new weights, and the flag's way
from the command line to a worker's evaluator and the self-play benchmark."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from alphagomoku.mcts import SearchConfig
from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn import inference_backend as nb
from alphagomoku.nn.int8 import InputSample
from alphagomoku.selfplay.game_loop import SelfPlaySettings
from alphagomoku.selfplay.worker import SelfPlayTask, WorkerSpec, run_task, setup_worker
from alphagomoku.train.config import ConfigError, TrainConfig
from conftest import POOL_GAME

needs_onnx = pytest.mark.skipif(bool(nb.onnx_problem()), reason=nb.onnx_problem() or "installed")


def positions(config, n, rng, stones=0.3):
    """``n`` boards with black and white stones on disjoint points, and their empty points as
    the legal ones: planes of the kind a search asks about, not random values in every plane."""
    planes = np.zeros((n, config.num_planes, config.height, config.width), np.float32)
    cells = rng.random((n, config.height, config.width))
    planes[:, 0] = cells < stones / 2
    planes[:, 1] = (cells >= stones / 2) & (cells < stones)
    planes[:, 3] = 1.0  # a constant plane, as the encoder's colour plane for black to move
    legal = (cells >= stones).reshape(n, -1)
    return planes, legal


def correlation(a, b) -> float:
    return float(np.corrcoef(np.ravel(a), np.ravel(b))[0, 1])


def network(arch, seed=0, width=9):
    torch.manual_seed(seed)
    model = PolicyValueNet(ModelConfig.preset("tiny", width, arch=arch,
                                              batch_norm=arch == "az")).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):  # statistics as after training
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return model


def test_the_sample_fills_from_every_call_then_follows_one_call_in_every():
    sample = InputSample(positions=8, every=4)
    config = ModelConfig.preset("tiny", 7)
    rng = np.random.default_rng(0)
    for _ in range(3):
        sample.add(*positions(config, 3, rng))
    assert sample.ready and len(sample) == 9  # three calls of three rows: full after the third
    first = sample.batches()[0]["planes"].copy()
    for _ in range(3):  # calls 4 to 6: only the fourth is kept
        sample.add(*positions(config, 3, rng))
    assert len(sample) == 9  # the oldest three rows dropped for the newest three
    assert not np.array_equal(sample.batches()[0]["planes"][:3], first[:3])
    sample.add(np.zeros((0, config.num_planes, 7, 7), np.float32), np.zeros((0, 49), bool))
    assert len(sample) == 9


def test_the_sample_keeps_board_sizes_apart_in_batches_of_at_most_64():
    sample = InputSample(positions=200, every=1)
    rng = np.random.default_rng(1)
    small, large = ModelConfig.preset("tiny", 9, arch="kata"), ModelConfig.preset("tiny", 13,
                                                                                 arch="kata")
    sample.add(*positions(small, 100, rng))
    sample.add(*positions(large, 100, rng))
    sample.add(*positions(small, 30, rng))
    batches = sample.batches()
    assert all(len(b["planes"]) <= 64 and len(b["planes"]) == len(b["legal"]) for b in batches)
    assert sum(len(b["planes"]) for b in batches) == len(sample) == 230
    sizes = {b["planes"].shape[2:] for b in batches}
    assert sizes == {(9, 9), (13, 13)}
    for b in batches:
        assert b["legal"].shape == (len(b["planes"]), b["planes"].shape[2] * b["planes"].shape[3])
        assert b["planes"].dtype == np.float32 and b["legal"].dtype == np.bool_


@needs_onnx
@pytest.mark.parametrize("arch", ["az", "kata"])
def test_an_int8_network_answers_as_the_fp32_one_does_once_calibrated(arch, rng):
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    model = network(arch)
    fp32 = OnnxEvaluator(model)
    lines = []
    int8 = OnnxEvaluator(model, precision="int8", log=lines.append)
    assert int8.arithmetic == "fp32 until int8 is calibrated" and not int8.quantized
    planes, legal = positions(model.config, 16, rng)
    # Until the sample is full it is the fp32 network, to the bit.
    for p, v in zip(int8(planes, legal), fp32(planes, legal)):
        np.testing.assert_array_equal(p, v)
    for _ in range(16):  # 256 more positions
        int8(*positions(model.config, 16, rng))
    assert int8.quantized and "(int8, onnxruntime" in int8.describe()
    assert lines == ["inference: int8 convolutions from now on (calibrated on 256 positions)"]
    planes, legal = positions(model.config, 64, rng)
    legal[0] = False
    (p8, v8), (p32, v32) = int8(planes, legal), fp32(planes, legal)
    assert not np.array_equal(p8, p32)  # quantised: close, not the same
    assert np.all(p8[~legal] == 0) and np.all(p8[0] == 0)
    np.testing.assert_allclose(p8[1:].sum(axis=1), 1.0, atol=1e-5)
    assert np.all(np.abs(v8) <= 1)
    # Scale-free: an untrained network's answers vary little from position to position, so
    # what must hold is that int8 ranks them as fp32 does.
    assert correlation(v8, v32) > 0.98
    assert correlation(np.log(p8[legal]), np.log(p32[legal])) > 0.98


@needs_onnx
def test_new_weights_are_quantised_on_the_sample_at_once(rng):
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    first, second = network("az", seed=1), network("az", seed=2)
    int8 = OnnxEvaluator(first, precision="int8")
    for _ in range(16):
        int8(*positions(first.config, 16, rng))
    planes, legal = positions(first.config, 32, rng)
    before = int8(planes, legal)
    int8.load_state_dict(second.state_dict())
    assert int8.quantized
    after = int8(planes, legal)
    reference = OnnxEvaluator(second)(planes, legal)
    assert correlation(after[1], before[1]) < 0.9  # the new weights answer, not the old
    assert correlation(after[1], reference[1]) > 0.98
    assert correlation(np.log(after[0][legal]), np.log(reference[0][legal])) > 0.98


def test_the_flag_is_checked_and_reaches_the_workers(monkeypatch):
    from alphagomoku.device import select_device
    from alphagomoku.train import cli
    from alphagomoku.train.selfplay_epoch import worker_spec

    assert TrainConfig().onnx_precision == "fp32"
    with pytest.raises(ConfigError, match="--onnx-precision: must be one of fp32, int8, got 'int4'"):
        TrainConfig(onnx_precision="int4")
    cfg = cli.resolve_config(cli.build_parser().parse_args(["--onnx-precision", "int8"]))
    assert worker_spec(cfg, select_device("cpu")).onnx_precision == "int8"
    with pytest.raises(ValueError, match="ONNX Runtime precision must be one of fp32, int8"):
        nb.make_evaluator(network("az"), "cpu", "onnx", precision="fp16")


@needs_onnx
def test_a_worker_keeps_its_int8_evaluator_and_its_sample_across_weights(weights, tmp_path):
    from alphagomoku.nn.io import load_model, save_model
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    spec = WorkerSpec(game=POOL_GAME, search=SearchConfig(num_simulations=16),
                      settings=SelfPlaySettings(games_at_once=4), device="cpu",
                      inference_backend="onnx", onnx_precision="int8")
    state = setup_worker(0, spec)
    assert state.device_line.endswith(" (int8 convolutions once calibrated)")
    run_task(state, SelfPlayTask(0, 4, seed=1, weights_path=weights, weights_version=0))
    evaluator = state.evaluator
    assert isinstance(evaluator, OnnxEvaluator) and evaluator.quantized
    newer = load_model(weights)
    with torch.no_grad():
        for p in newer.parameters():
            p.add_(0.01)
    path = tmp_path / "v1.pt"
    save_model(path, newer)
    result = run_task(state, SelfPlayTask(1, 2, seed=2, weights_path=str(path), weights_version=1))
    assert state.evaluator is evaluator and evaluator.quantized and len(result.records) == 2
    plain = setup_worker(1, dataclasses.replace(spec, onnx_precision="fp32"))
    run_task(plain, SelfPlayTask(0, 1, seed=1, weights_path=weights, weights_version=0))
    assert plain.evaluator.sample is None and plain.evaluator.arithmetic == "fp32"


@needs_onnx
def test_a_quantisation_that_fails_leaves_the_network_in_fp32_and_says_so(monkeypatch, rng):
    from alphagomoku.nn import int8
    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    def broken(graph, feeds):
        raise RuntimeError("no int8 kernels here\nsecond line")

    monkeypatch.setattr(int8, "quantize_graph", broken)
    model = network("az")
    lines = []
    evaluator = OnnxEvaluator(model, precision="int8", log=lines.append)
    for _ in range(20):
        evaluator(*positions(model.config, 16, rng))
    assert lines == ["inference: int8 quantisation failed (RuntimeError: no int8 kernels here); "
                     "the network stays fp32"]
    assert evaluator.arithmetic == "fp32" and evaluator.sample is None
    planes, legal = positions(model.config, 8, rng)
    for a, b in zip(evaluator(planes, legal), OnnxEvaluator(model)(planes, legal)):
        np.testing.assert_array_equal(a, b)


@needs_onnx
def test_quantising_leaves_no_file_behind(tmp_path, monkeypatch, rng):
    import tempfile

    from alphagomoku.nn.onnx_evaluator import OnnxEvaluator

    scratch, cwd = tmp_path / "tmp", tmp_path / "cwd"
    scratch.mkdir()
    cwd.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.chdir(cwd)
    model = network("kata")
    evaluator = OnnxEvaluator(model, precision="int8")
    for _ in range(17):
        evaluator(*positions(model.config, 16, rng))
    evaluator.load_state_dict(model.state_dict())
    assert evaluator.quantized
    assert list(scratch.iterdir()) == [] and list(cwd.iterdir()) == []
