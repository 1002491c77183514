"""Fixed batch sizes for the forward pass (CUDA graphs on a GPU): padding never leaks.

The padding is the same code on every device, so it is checked here on the CPU's eager path;
graph capture itself and the CUDA submit path carry the ``gpu`` mark."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from alphagomoku.nn import ModelConfig, PolicyValueNet
from alphagomoku.nn.evaluator import Evaluator
from alphagomoku.nn.graphs import StaticBatches, padded_size
from alphagomoku.nn.inflight import Ready, submit

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device (CUDA graphs, pinned buffers, events)")


def _inputs(n, cfg, seed=0):
    rng = np.random.default_rng(seed)
    planes = (rng.random((n, cfg.num_planes, cfg.height, cfg.width)) < 0.3).astype(np.float32)
    legal = rng.random((n, cfg.area)) < 0.7
    legal[0] = False  # a row with nothing legal gets zeros, padded or not
    return planes, legal


def _model(vcf=0):
    torch.manual_seed(0)
    return PolicyValueNet(ModelConfig.preset("tiny", 9, vcf_plane_budget=vcf)).eval()


def test_padded_size_is_the_next_size_or_none():
    assert padded_size(1, (8, 16)) == 8 and padded_size(8, (8, 16)) == 8
    assert padded_size(9, (16, 8)) == 16 and padded_size(17, (8, 16)) is None


@pytest.mark.parametrize("vcf", [0, 100])
def test_padding_never_leaks_into_the_real_rows(vcf):
    model = _model(vcf)
    cfg = model.config
    plain = Evaluator(model, "cpu", amp=False)
    padded = Evaluator(model, "cpu", amp=False, batch_sizes=(4, 8, 16))
    assert padded.batch_sizes == (4, 8, 16) and not padded.graphs
    for n in (1, 3, 4, 5, 11, 16, 20):  # 20 is above the largest size: eager
        planes, legal = _inputs(n, cfg, seed=n)
        p0, v0 = plain(planes, legal)
        p1, v1 = padded(planes, legal)
        assert p1.shape == (n, cfg.area) and v1.shape == (n,)  # no padding row comes back
        np.testing.assert_allclose(p1, p0, rtol=0, atol=2e-6)
        np.testing.assert_allclose(v1, v0, rtol=0, atol=2e-6)
        assert (p1[~legal] == 0).all() and (p1[0] == 0).all()


def test_a_network_of_every_board_runs_other_boards_unpadded():
    """Fixed sizes are captured on one board; a kata network asked about another board runs
    that batch eagerly, with the same answers as without fixed sizes."""
    torch.manual_seed(0)
    model = PolicyValueNet(ModelConfig.preset("tiny", 9, arch="kata")).eval()
    plain = Evaluator(model, "cpu", amp=False)
    padded = Evaluator(model, "cpu", amp=False, batch_sizes=(4, 8))
    for size in (9, 13):
        cfg = model.config.with_board(size)
        planes, legal = _inputs(3, cfg, seed=size)
        p0, v0 = plain(planes, legal)
        p1, v1 = padded(planes, legal)
        np.testing.assert_allclose(p1, p0, rtol=0, atol=2e-6)
        np.testing.assert_allclose(v1, v0, rtol=0, atol=2e-6)


def test_static_batches_zero_the_rows_a_smaller_batch_leaves():
    seen = []

    def forward(x, legal):
        seen.append((x.clone(), legal.clone()))
        return x.reshape(x.shape[0], -1)[:, :3] + 0, x.sum(dim=(1, 2, 3))

    static = StaticBatches(forward, (4,), (1, 2, 2), 4, "cpu")
    static(torch.ones((4, 1, 2, 2)), torch.zeros((4, 4), dtype=torch.bool))
    priors, values = static(torch.full((2, 1, 2, 2), 2.0), torch.zeros((2, 4), dtype=torch.bool))
    x, legal = seen[-1]
    assert x.shape[0] == 4 and (x[2:] == 0).all() and legal[2:].all() and not legal[:2].any()
    assert priors.shape == (2, 3) and torch.equal(values, torch.full((2,), 8.0))
    assert static(torch.ones((5, 1, 2, 2)), torch.ones((5, 4), dtype=torch.bool)) is None
    assert static(torch.ones((2, 1, 3, 3)), torch.ones((2, 9), dtype=torch.bool)) is None


def test_a_cpu_evaluator_submits_synchronously():
    model = _model()
    ev = Evaluator(model, "cpu", amp=False)
    planes, legal = _inputs(3, model.config)
    assert not ev.overlaps
    h = submit(ev, planes, legal)
    assert isinstance(h, Ready)
    p, v = h.result()
    p0, v0 = ev(planes, legal)
    assert np.array_equal(p, p0) and np.array_equal(v, v0)
    with pytest.raises(ValueError, match="CUDA graphs need a CUDA device"):
        Evaluator(model, "cpu", graphs=True)


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("amp", [False, True])
def test_cuda_graphs_and_submit_match_the_eager_call(amp):
    model = _model()
    cfg = model.config
    eager = Evaluator(model, "cuda", amp=amp, graphs=False)
    graphed = Evaluator(model, "cuda", amp=amp)
    assert graphed.graphs and graphed.overlaps
    tol = 2e-2 if amp else 1e-4
    handles = []
    for n in (1, 7, 8, 33, 1500):
        planes, legal = _inputs(n, cfg, seed=n)
        p0, v0 = eager(planes, legal)
        handles.append((graphed.submit(planes, legal), p0, v0, n))
    for h, p0, v0, n in handles:  # several batches in flight at once
        p, v = h.result()
        assert p.shape == (n, cfg.area)
        np.testing.assert_allclose(p, p0, atol=tol)
        np.testing.assert_allclose(v, v0, atol=tol)
    assert "CUDA graphs" in graphed.describe()
    # New weights copied in place reach the captured graphs.
    other = _model()
    with torch.no_grad():
        for prm in other.parameters():
            prm.add_(0.05)
    graphed.load_state_dict(other.state_dict())
    eager.load_state_dict(other.state_dict())
    planes, legal = _inputs(5, cfg, seed=9)
    np.testing.assert_allclose(graphed(planes, legal)[1], eager(planes, legal)[1], atol=tol)
