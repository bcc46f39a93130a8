"""One record's view of DP-SGD: its clipped gradient in the noisy batch sums of ``steps`` training steps,
accounted as Poisson subsampling, and the batch samplers that implementations actually use.

The claim is what a DP-SGD accountant states for Poisson subsampling at rate q with noise multiplier σ
(dp-accounting's privacy-loss distribution: ε at δ, and the whole δ(ε) profile). The release follows the
``sampling`` the implementation uses:

* ``poisson`` — every step includes the record independently with probability q (what the accountant
  assumes);
* ``shuffle`` — the data are shuffled once per epoch of 1/q steps and cut into batches, so the record is in
  exactly one step of each epoch (what most training loops do). Chua et al., "How Private are DP-SGD
  Implementations?" (ICML 2024), show that its privacy is worse than the Poisson accounting says;
* ``always`` — the record is in every step (a fixed batch).

The model is one-dimensional and the other records' contributions are known to the observer (the worst
case of add-or-remove-one): a step's release is g·[record in the batch] + N(0, σ²), where g ∈ [−1, 1] is
the record's clipped gradient and an absent record is g = 0.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import logsumexp

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError
from pgc.mechanisms.accounting import pld_claim, poisson_gaussian_event

SAMPLINGS = ("poisson", "shuffle", "always")


@functools.lru_cache(maxsize=32)
def poisson_claim(sampling_rate: float, noise_multiplier: float, steps: int, delta: float) -> tuple:
    """(ε at δ, privacy profile) that dp-accounting's PLD accountant states for Poisson-sampled DP-SGD."""
    return pld_claim(poisson_gaussian_event(sampling_rate, noise_multiplier, steps), delta)


class FixedScorer:
    """A candidate test whose score is fixed by the system's parameters (nothing to fit)."""

    def __init__(self, name: str, score):
        self.name, self._score = name, score

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        sign = 1.0 if float(pos.mean()) >= float(neg.mean()) else -1.0  # which side holds the record
        return lambda y: self._score(sign * np.asarray(y, dtype=np.float64))


class SubsampledGaussianSystem:
    """``steps`` noisy batch sums seen by the aggregator, for one record (see the module docstring)."""

    channels = ("updates",)
    relation = "one record added or removed (its clipped gradient g vs nothing)"

    def __init__(
        self,
        sampling_rate: float = 0.1,
        noise_multiplier: float = 0.8,
        steps: int = 10,
        delta: float = 1e-5,
        sampling: str = "poisson",
        profile: bool = True,
    ):
        if sampling not in SAMPLINGS:
            raise UserError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
        if not isinstance(profile, bool):
            raise UserError(f"profile must be true or false, got {profile!r}")
        if not (0.0 < sampling_rate <= 1.0) or not (noise_multiplier > 0):
            raise UserError("need 0 < sampling_rate <= 1 and noise_multiplier > 0")
        self.epoch = int(round(1.0 / sampling_rate))
        if sampling == "shuffle" and (abs(self.epoch * sampling_rate - 1.0) > 1e-9 or steps % self.epoch):
            raise UserError("shuffle needs 1/sampling_rate to be an integer that divides steps")
        self.q, self.sigma, self.steps, self.sampling = (
            float(sampling_rate),
            float(noise_multiplier),
            int(steps),
            sampling,
        )
        epsilon, curve = poisson_claim(self.q, self.sigma, self.steps, float(delta))
        # ``profile``: the claim states the accountant's whole δ(ε) curve, else only (ε, δ)
        self.claim = PrivacyClaim(epsilon, delta, ("updates",), privacy_profile=curve if profile else None)
        self.name = f"dp-sgd-{sampling}" + ("" if profile else "-epsilon-delta-only")

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        try:
            g = float(np.clip(np.asarray(secret, dtype=np.float64), -1.0, 1.0)) if np.ndim(secret) == 0 else math.nan
        except (TypeError, ValueError):
            g = math.nan
        if not math.isfinite(g):
            raise UserError("a secret is one finite number: the record's gradient (0: the record is absent)")
        if self.sampling == "poisson":
            included = rng.random((n, self.steps)) < self.q
        elif self.sampling == "shuffle":  # the record's step within each epoch
            position = rng.integers(0, self.epoch, size=(n, self.steps // self.epoch))
            included = (np.arange(self.epoch)[None, None, :] == position[:, :, None]).reshape(n, self.steps)
        else:
            included = np.ones((n, self.steps), dtype=bool)
        return {"updates": g * included + rng.normal(0.0, self.sigma, size=(n, self.steps))}

    def canaries(self) -> dict:
        return {"record in vs out": (1.0, 0.0)}

    def describe_secret(self, secret) -> str:
        return "absent" if float(secret) == 0.0 else f"g = {float(secret):g}"

    def dp_event(self):
        return poisson_gaussian_event(self.q, self.sigma, self.steps)

    def audit_statistics(self, channel: str) -> list:
        """The likelihood ratios of a unit gradient under Poisson and under shuffled batches."""
        q, s2, epoch = self.q, self.sigma**2, self.epoch

        def step_llr(y):  # log N(y; 1, σ²) − log N(y; 0, σ²)
            return (y - 0.5) / s2

        def poisson(y):
            return np.log1p(q * np.expm1(np.minimum(step_llr(y), 700.0))).sum(axis=1)

        tests = [FixedScorer("poisson-llr", poisson)]
        if self.steps % epoch == 0:

            def shuffled(y):
                return (logsumexp(step_llr(y).reshape(len(y), -1, epoch), axis=2) - np.log(epoch)).sum(axis=1)

            tests.append(FixedScorer("shuffle-llr", shuffled))
        return tests


def dp_sgd_system(
    sampling: str = "poisson",
    sampling_rate: float = 0.1,
    noise_multiplier: float = 0.8,
    steps: int = 10,
    delta: float = 1e-5,
    profile: bool = True,
) -> SubsampledGaussianSystem:
    """DP-SGD steps accounted as Poisson subsampling, sampled as ``sampling`` says (``profile``: the claim
    states the accountant's privacy profile, else only its (ε, δ))."""
    return SubsampledGaussianSystem(
        float(sampling_rate), float(noise_multiplier), int(steps), float(delta), sampling, profile
    )


def dp_sgd_shuffle_system(**settings) -> SubsampledGaussianSystem:
    """DP-SGD with shuffled batches, accounted as Poisson subsampling."""
    return dp_sgd_system("shuffle", **settings)
