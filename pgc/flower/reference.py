"""A numpy reference of Flower's LocalDpMod on crafted updates: the same releases without Flower.

It draws exactly what :func:`pgc.flower.local_dp_update_system` releases (the global generator seeded
with the same per-block seeds from the caller's ``rng``, the same clip and the same N(0, σ²) draws in the
same order), one vectorized call per block; ``pgc bench flower`` checks that both give the same bound and
times the adapter against it.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim

from .system import CHANNEL, block_seeds, seeded_global_numpy


class NumpyLocalDp:
    """±C·e₁ clipped to norm ``clipping_norm`` plus N(0, σ²I), σ = sensitivity·√(2 ln(1.25/δ))/ε."""

    channels = (CHANNEL,)

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        clipping_norm: float = 1.0,
        sensitivity: float | None = None,
        dim: int = 8,
    ):
        self.sensitivity = 2.0 * clipping_norm if sensitivity is None else sensitivity
        self.sigma = self.sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
        self.clipping_norm, self.dim = clipping_norm, dim
        self.name = f"numpy-localdp ({epsilon:g}, {delta:g})"
        self.claim = PrivacyClaim(epsilon, delta, (CHANNEL,), gdp_mu=self.sensitivity / self.sigma)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        step = np.zeros(self.dim)
        step[0] = (1.0 if secret == "+" else -1.0) * self.clipping_norm
        step *= min(1.0, self.clipping_norm / float(np.linalg.norm(step)))
        noise = []
        for size, seed in block_seeds(n, rng):
            with seeded_global_numpy(seed):
                noise.append(np.random.normal(0.0, self.sigma, (size, self.dim)))
        return {CHANNEL: step[None, :] + (np.concatenate(noise) if noise else np.empty((0, self.dim)))}

    def canaries(self) -> dict:
        return {"±C·e1": ("+", "-")}

    def dp_event(self):
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.sigma / self.sensitivity)
