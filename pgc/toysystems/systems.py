"""The toy systems (see the package docstring)."""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError
from pgc.mechanisms.accounting import gaussian_event
from pgc.mechanisms.calibration import analytic_gaussian_sigma


def _finite_array(secret) -> np.ndarray:
    try:
        x = np.asarray(secret, dtype=np.float64)
    except (TypeError, ValueError):
        raise UserError(f"a secret is a number or a vector of numbers, got {type(secret).__name__}") from None
    if not np.all(np.isfinite(x)):
        raise UserError("a secret holds NaN or inf")
    return x


class GaussianVectorSystem:
    """Release clip₂(x, 1) + N(0, σ²I): neighbours differ in the whole vector, so Δ₂ = 2 and σ is the
    analytic calibration for (ε, δ) at sensitivity 2·``sensitivity_factor`` (1: correct). The claim states
    the μ-GDP curve of that calibration (μ = stated sensitivity / σ) unless ``curve`` is False, and
    ``dp_event`` declares the noise relative to that stated sensitivity: a wrong sensitivity is a bug the claim,
    the curve and the accountant share, which only the releases can show."""

    name = "gaussian-vector"
    channels = ("value",)

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        dim: int = 4,
        sensitivity_factor: float = 1.0,
        curve: bool = True,
    ):
        self.dim = int(dim)
        self.sensitivity_factor = float(sensitivity_factor)
        self.sigma = analytic_gaussian_sigma(epsilon, delta, 2.0 * sensitivity_factor)
        # the stated sensitivity 2·sensitivity_factor over σ: the μ-GDP curve the claim states
        self.claim = PrivacyClaim(
            epsilon, delta, ("value",), gdp_mu=2.0 * sensitivity_factor / self.sigma if curve else None
        )
        if sensitivity_factor != 1.0:
            self.name = f"gaussian-vector-sensitivity×{sensitivity_factor:g}"

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        x = _finite_array(secret)
        if x.shape != (self.dim,) or not np.all(np.isfinite(x)):
            raise UserError(f"a secret is a finite vector of length {self.dim}")
        x = x / max(1.0, float(np.linalg.norm(x)))
        return {"value": x[None, :] + rng.normal(0.0, self.sigma, size=(n, self.dim))}

    def canaries(self) -> dict:
        e1 = np.zeros(self.dim)
        e1[0] = 1.0
        return {"opposite unit vectors": (e1, -e1), "unit vs zero": (e1, np.zeros(self.dim))}

    def dp_event(self):
        """The noise as the claimant accounts it: σ over the sensitivity it states (2·``sensitivity_factor``)."""
        return gaussian_event(self.sigma / (2.0 * self.sensitivity_factor))


class BatchedSumSystem:
    """A stream of T values in [0, 1]; every B rounds the batch's sum + N(0, σ²) is sent. One value
    replaced moves one sum by at most 1 (Δ₂ = 1); k = T/B messages of multiplier σ compose to one Gaussian
    of multiplier σ/√k, so σ = √k·σ(ε, δ) makes the whole release (ε, δ)-DP.

    ``messages`` holds the T/B noisy sums (0 where nothing is sent); ``schedule`` the T/B send flags.
    ``adaptive=True``: a batch is also sent as soon as the stream's running sum passes ``threshold``
    (and the schedule then carries the first values unprotected)."""

    name = "batched-sum"
    channels = ("messages", "schedule")

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        rounds: int = 8,
        batch: int = 4,
        adaptive: bool = False,
        threshold: float = 2.5,
    ):
        if rounds % batch:
            raise UserError("rounds must be a multiple of batch")
        self.rounds, self.batch, self.adaptive, self.threshold = int(rounds), int(batch), bool(adaptive), threshold
        self.messages = self.rounds // self.batch
        # all messages together: one Gaussian with multiplier σ/√k (Δ₂ = 1 per message)
        self.sigma = analytic_gaussian_sigma(epsilon, delta, 1.0) * math.sqrt(self.messages)
        # k messages of multiplier σ (Δ₂ = 1) compose to √k/σ-GDP
        self.claim = PrivacyClaim(
            epsilon, delta, ("messages", "schedule"), gdp_mu=math.sqrt(self.messages) / self.sigma
        )
        if adaptive:
            self.name = "batched-sum-adaptive"

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        x = np.clip(_finite_array(secret), 0.0, 1.0)
        if x.shape != (self.rounds,):
            raise UserError(f"a secret is a stream of {self.rounds} values")
        sums = x.reshape(self.messages, self.batch).sum(axis=1)
        noisy = sums[None, :] + rng.normal(0.0, self.sigma, size=(n, self.messages))
        schedule = np.ones((n, self.messages))
        if self.adaptive:  # an extra early message when the running sum passes the threshold (data-dependent)
            early = float(np.cumsum(x)[: self.batch - 1].max(initial=0.0) > self.threshold)
            schedule = np.concatenate([np.full((n, 1), early), schedule], axis=1)
        return {"messages": noisy, "schedule": schedule}

    def canaries(self) -> dict:
        high, low = np.ones(self.rounds), np.ones(self.rounds)
        low[0] = 0.0  # one value replaced: the first
        return {"first value replaced": (high, low)}

    def dp_event(self):
        return gaussian_event(self.sigma, self.messages)


class LaplaceCountSystem:
    """x ∈ [0, 1] released as x + Lap(1/ε): pure ε-LDP."""

    name = "laplace-count"
    channels = ("count",)

    def __init__(self, epsilon: float = 1.0):
        self.epsilon = float(epsilon)
        self.claim = PrivacyClaim(self.epsilon, 0.0, ("count",))

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        x = _finite_array(secret)
        if x.shape != ():
            raise UserError("a secret is one number")
        x = float(np.clip(x, 0.0, 1.0))
        return {"count": x + rng.laplace(0.0, 1.0 / self.epsilon, size=(n, 1))}

    def canaries(self) -> dict:
        return {"0 vs 1": (1.0, 0.0)}


def gaussian_vector_system(
    epsilon: float = 1.0, delta: float = 1e-5, dim: int = 4, sensitivity_factor: float = 1.0, curve: bool = True
) -> GaussianVectorSystem:
    """A Gaussian vector release at (ε, δ) (``sensitivity_factor`` < 1: the noise sized for too small a Δ₂;
    ``curve``: the claim states its μ-GDP curve)."""
    return GaussianVectorSystem(epsilon, delta, dim, sensitivity_factor, curve)


def miscalibrated_gaussian_system(curve: bool = True) -> GaussianVectorSystem:
    """A vector of L2 norm ≤ 1 (diameter 2) released with Gaussian noise sized for a sensitivity of 1e-4
    (σ ≈ 5e-5) at a claimed (10, 1e-5): every release tells the neighbours apart. With ``curve`` the claim
    states its μ-GDP curve (μ ≈ 2), else only (10, 1e-5)."""
    return GaussianVectorSystem(10.0, 1e-5, 4, 5e-5, curve)


def miscalibrated_gaussian_system_without_curve() -> GaussianVectorSystem:
    """:func:`miscalibrated_gaussian_system` claiming only (10, 1e-5)."""
    return miscalibrated_gaussian_system(curve=False)


def batched_sum_system(
    epsilon: float = 1.0, delta: float = 1e-5, rounds: int = 8, batch: int = 4, adaptive: bool = False
) -> BatchedSumSystem:
    """Batched noisy sums at (ε, δ) (``adaptive``: a data-dependent send schedule)."""
    return BatchedSumSystem(epsilon, delta, rounds, batch, adaptive)


def laplace_count_system(epsilon: float = 1.0) -> LaplaceCountSystem:
    """A count in [0, 1] plus Laplace noise: pure ε-LDP."""
    return LaplaceCountSystem(epsilon)
