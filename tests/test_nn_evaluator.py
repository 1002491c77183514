"""The batched Evaluator: masking, agreement with a direct forward pass, weight swaps, and the
out-of-memory back-off (the error injected on the CPU)."""

import logging

import numpy as np
import pytest
import torch
from torch import nn

from alphagomoku.game import GameConfig, Position
from alphagomoku.nn import Evaluator, EvaluatorOutOfMemoryError, ModelConfig, PolicyValueNet


def make_model(width=7, height=None, seed=0):
    torch.manual_seed(seed)
    model = PolicyValueNet(ModelConfig.preset("tiny", width, height))
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():  # random statistics, so that train mode would give other numbers
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model.eval()


def random_batch(cfg, n, seed=0, legal_fraction=0.6):
    rng = np.random.default_rng(seed)
    planes = (rng.random((n, cfg.num_planes, cfg.height, cfg.width)) < 0.3).astype(np.float32)
    legal = rng.random((n, cfg.area)) < legal_fraction
    legal[:, 0] = True  # at least one legal point per row
    return planes, legal


def direct(model, planes, legal):
    """The reference: a plain forward pass, then a numpy softmax over the legal points."""
    with torch.no_grad():
        logits, values = model(torch.from_numpy(planes))
    logits = logits.double().numpy()
    logits = np.where(legal, logits, -np.inf)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), values.numpy()


def test_priors_are_the_softmax_of_the_masked_logits():
    model = make_model()
    planes, legal = random_batch(model.config, 6)
    priors, values = Evaluator(model)(planes, legal)
    want_p, want_v = direct(model, planes, legal)
    assert priors.dtype == np.float32 and values.dtype == np.float32
    assert priors.shape == (6, 49) and values.shape == (6,)
    np.testing.assert_allclose(priors, want_p, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(values, want_v, rtol=1e-5, atol=1e-6)


def test_illegal_points_get_exactly_zero_and_legal_ones_sum_to_one():
    model = make_model(9, 7)
    planes, legal = random_batch(model.config, 4, seed=3, legal_fraction=0.3)
    priors, values = Evaluator(model)(planes, legal)
    assert (priors[~legal] == 0).all()
    assert (priors[legal] > 0).all()
    np.testing.assert_allclose(priors.sum(axis=1), 1, atol=1e-5)
    assert (np.abs(values) <= 1).all()


def test_the_mask_follows_the_game_core_layout_on_a_rectangular_board():
    cfg = GameConfig(width=9, height=6)
    pos = Position.from_moves([(0, 0), (8, 5), (4, 2)], cfg)  # x, y pairs
    model = make_model(9, 6)
    priors, _ = Evaluator(model)(pos.planes()[None], pos.legal_mask()[None])
    for x, y in [(0, 0), (8, 5), (4, 2)]:
        assert priors[0, y * 9 + x] == 0
    assert priors[0, 1 * 9 + 4] > 0


def test_a_row_without_legal_points_gives_zeros_not_nan():
    model = make_model()
    planes, legal = random_batch(model.config, 3)
    legal[1] = False
    priors, values = Evaluator(model)(planes, legal)
    assert np.isfinite(priors).all() and np.isfinite(values).all()
    assert (priors[1] == 0).all()
    np.testing.assert_allclose(priors[[0, 2]].sum(axis=1), 1, atol=1e-5)


def test_an_empty_batch_gives_empty_arrays():
    model = make_model()
    planes, legal = random_batch(model.config, 0)
    priors, values = Evaluator(model)(planes, legal)
    assert priors.shape == (0, 49) and values.shape == (0,)


def test_bad_inputs_are_rejected_with_the_expected_shape():
    ev = Evaluator(make_model())
    planes, legal = random_batch(ev.config, 2)
    with pytest.raises(ValueError, match=r"planes must have shape \(B, 5, 7, 7\)"):
        ev(planes[:, :4], legal)
    with pytest.raises(ValueError, match=r"legal must have shape \(2, 49\)"):
        ev(planes, legal[:, :48])
    with pytest.raises(TypeError, match="bool"):
        ev(planes, legal.astype(np.int8))
    with pytest.raises(ValueError, match="max_batch"):
        Evaluator(make_model(), max_batch=0)


def test_max_batch_splits_the_work_without_changing_the_answer():
    model = make_model()
    planes, legal = random_batch(model.config, 11, seed=5)
    whole = Evaluator(model)(planes, legal)
    split = Evaluator(model, max_batch=4)(planes, legal)
    for a, b in zip(whole, split):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_load_state_dict_swaps_weights_in_place_and_strips_prefixes():
    first, second = make_model(seed=0), make_model(seed=1)
    planes, legal = random_batch(first.config, 3)
    ev = Evaluator(first)
    model_before = ev.model
    before = ev(planes, legal)
    ev.load_state_dict({"_orig_mod." + k: v for k, v in second.state_dict().items()})
    after = ev(planes, legal)
    assert ev.model is model_before
    assert not np.allclose(before[0], after[0])
    np.testing.assert_allclose(after[0], direct(second, planes, legal)[0], rtol=1e-5, atol=1e-7)


def test_compiled_evaluator_agrees_and_follows_weight_swaps():
    first, second = make_model(seed=0), make_model(seed=1)
    planes, legal = random_batch(first.config, 3)
    ev = Evaluator(first, compile="eager")  # the compile wrapper without a C++ build
    assert "compiled" in ev.describe()
    np.testing.assert_allclose(ev(planes, legal)[0], direct(first, planes, legal)[0], rtol=1e-5, atol=1e-7)
    ev.load_state_dict(second.state_dict())
    np.testing.assert_allclose(ev(planes, legal)[0], direct(second, planes, legal)[0], rtol=1e-5, atol=1e-7)


def test_amp_on_cpu_uses_bfloat16_and_stays_close():
    model = make_model()
    planes, legal = random_batch(model.config, 4)
    ev = Evaluator(model, amp=True)
    assert ev.amp_dtype == torch.bfloat16 and "bf16" in ev.describe()
    priors, values = ev(planes, legal)
    want_p, want_v = direct(model, planes, legal)
    assert (priors[~legal] == 0).all()
    np.testing.assert_allclose(priors.sum(axis=1), 1, atol=1e-4)
    np.testing.assert_allclose(priors, want_p, atol=0.05)
    np.testing.assert_allclose(values, want_v, atol=0.05)
    assert Evaluator(model).amp is False  # off by default away from CUDA


def test_runs_under_inference_mode():
    seen = []

    class Spy(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net, self.config = net, net.config

        def forward(self, x):
            seen.append(torch.is_inference_mode_enabled())
            return self.net(x)

    model = make_model()
    Evaluator(Spy(model))(*random_batch(model.config, 2))
    assert seen == [True]


# -- out-of-memory back-off ---------------------------------------------------------------------
class OutOfMemoryAbove(nn.Module):
    """The real network, except that batches above ``limit`` raise ``error`` as CUDA would."""

    def __init__(self, net, limit, error):
        super().__init__()
        self.net, self.config, self.limit, self.error = net, net.config, limit, error
        self.sizes = []

    def forward(self, x):
        self.sizes.append(x.shape[0])
        if x.shape[0] > self.limit:
            raise self.error
        return self.net(x)


@pytest.mark.parametrize("error", [
    torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
    RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"),
    RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"),
])
def test_out_of_memory_halves_the_batch_and_keeps_every_row(error, caplog):
    model = make_model()
    planes, legal = random_batch(model.config, 10, seed=7)
    flaky = OutOfMemoryAbove(model, limit=3, error=error)
    ev = Evaluator(flaky)
    with caplog.at_level(logging.WARNING, logger="alphagomoku.nn.evaluator"):
        priors, values = ev(planes, legal)
    assert flaky.sizes == [10, 5, 2, 2, 2, 2, 2]
    assert ev.max_batch == 2 and ev.oom_backoffs == 2
    assert "batches of 2" in caplog.text
    want_p, want_v = direct(model, planes, legal)
    np.testing.assert_allclose(priors, want_p, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(values, want_v, rtol=1e-5, atol=1e-6)
    # The smaller size sticks: the next call goes straight to batches of 2.
    flaky.sizes.clear()
    ev(planes[:5], legal[:5])
    assert flaky.sizes == [2, 2, 1]


def test_out_of_memory_at_batch_one_is_a_clear_error():
    model = make_model()
    ev = Evaluator(OutOfMemoryAbove(model, limit=0, error=torch.cuda.OutOfMemoryError("CUDA out of memory")))
    with pytest.raises(EvaluatorOutOfMemoryError, match="single position.*smaller preset"):
        ev(*random_batch(model.config, 4))
    assert ev.max_batch == 1


def test_other_errors_are_not_mistaken_for_out_of_memory():
    model = make_model()
    failure = RuntimeError("cuDNN error: CUDNN_STATUS_EXECUTION_FAILED")
    broken = OutOfMemoryAbove(model, limit=0, error=failure)
    ev = Evaluator(broken)
    with pytest.raises(RuntimeError, match="CUDNN_STATUS"):
        ev(*random_batch(model.config, 4))
    assert broken.sizes == [4] and ev.max_batch is None


def test_auto_mixed_precision_on_cuda_follows_the_gpu(monkeypatch):
    # No GPU here: the choice alone, on a stand-in for an evaluator placed on cuda:0.
    from types import SimpleNamespace

    monkeypatch.setattr(torch.version, "hip", None)
    on_gpu = SimpleNamespace(device=torch.device("cuda", 0))
    for capability, want in (((7, 5), torch.float16), ((8, 6), torch.bfloat16)):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda d, c=capability: c)
        assert Evaluator._amp_dtype(on_gpu, None) == want
        assert Evaluator._amp_dtype(on_gpu, False) is None
