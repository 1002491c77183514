"""Fixtures shared across the test files."""

import numpy as np
import pytest

from alphagomoku.game import GameConfig

# The self-play pool tests' small game: workers finish a task in about a second.
POOL_GAME = GameConfig(width=7, n_in_row=4)


@pytest.fixture
def rng():
    """A seeded generator, fresh for every test, so each test draws the same numbers alone or in a suite."""
    return np.random.default_rng(20240611)


@pytest.fixture(scope="module")
def compiled_selfplay_kernels():
    """Fill the Numba cache in this process first, as the trainer does, so that spawned workers
    load the kernels instead of compiling them (which can outlast the pool tests' short
    timeouts on a machine with an empty cache)."""
    from alphagomoku.selfplay.warmup import compile_selfplay_kernels

    compile_selfplay_kernels(POOL_GAME)


@pytest.fixture(scope="module")
def weights(tmp_path_factory, compiled_selfplay_kernels):
    """An untrained tiny network for POOL_GAME, saved as the weights file workers load."""
    from alphagomoku.nn import ModelConfig, PolicyValueNet
    from alphagomoku.nn.io import save_model

    path = tmp_path_factory.mktemp("weights") / "v0.pt"
    save_model(path, PolicyValueNet(ModelConfig.preset("tiny", POOL_GAME.width)))
    return str(path)


@pytest.fixture
def fault_dir(tmp_path, monkeypatch):
    """Where tests/faults.py marks the faults it has fired (inherited by spawned workers)."""
    monkeypatch.setenv("ALPHAGOMOKU_FAULT_DIR", str(tmp_path))
    return tmp_path
