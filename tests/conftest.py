"""Fixtures shared across the test files."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded generator, fresh for every test, so each test draws the same numbers alone or in a suite."""
    return np.random.default_rng(20240611)
