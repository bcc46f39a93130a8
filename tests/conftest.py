import numpy as np
import pytest


@pytest.fixture
def rng():
    """A fresh seeded generator per test (no global RNG)."""
    return np.random.default_rng(np.random.SeedSequence(20261122))
