"""The Pendulum participant as a System (the structural contract of ``pgc.contracts.System``).

Secret: the participant's gravity g. One release: one episode of Pendulum-v1 at g with the broadcast
policy weights w (default: the zero policy, actions pure exploration noise), its REINFORCE gradient
(:mod:`pgc.gympg.policy`) privatized by the Gaussian mechanism (L2 clip to C/2, so Δ₂ = C; σ calibrated to
the (ε, δ) claim, :class:`pgc.mechanisms.Gaussian`), and the episode's return, which the participant
reports in the clear (as PGC-A3C's agents report their score).

Channels: ``gradient`` (covered by the claim) and ``return`` (not covered: an unprotected side channel).
An adversarial aggregator chooses w; ``broadcast_space`` is the box it searches.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError
from pgc.mechanisms import Gaussian
from pgc.mechanisms.accounting import mechanism_event, mechanism_gdp_mu
from pgc.schemas.channels import ChannelFamily, ChannelKind

from .pendulum import PendulumParams, rollout
from .policy import POLICY_DIM, POLICY_STD, gaussian_policy, reinforce_gradients

DEFAULT_CLIP = 100.0  # C: gradients are L2-clipped to C/2
BROADCAST_BOUND = 5.0  # the aggregator's weights lie in [−5, 5]⁴
CANARIES = {"g 9 vs 11": (9.0, 11.0), "g 5 vs 15": (5.0, 15.0), "Earth vs Moon": (9.81, 1.62)}


class PendulumGaussianSystem:
    """An (ε, δ)-LDP policy-gradient participant on Pendulum (see the module docstring)."""

    name = "pendulum-gaussian-pg"
    channels = ("gradient", "return")
    channel_kinds = {"gradient": ChannelKind.single(ChannelFamily.GRADIENT, "gradient")}  # "return": of no family

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        *,
        clip: float = DEFAULT_CLIP,
        analytic: bool = True,
        weights: np.ndarray | None = None,
        params: PendulumParams | None = None,
        policy_std: float = POLICY_STD,
    ):
        self.mechanism = Gaussian(epsilon=epsilon, delta=delta, clip=clip, analytic=analytic)
        self.params = params or PendulumParams()
        if not (math.isfinite(policy_std) and policy_std > 0):
            raise UserError(f"policy_std must be a positive number, got {policy_std!r}")
        self.policy_std = float(policy_std)
        self.weights = self._check_weights(np.zeros(POLICY_DIM) if weights is None else weights)
        self.claim = PrivacyClaim(
            self.mechanism.epsilon, self.mechanism.delta, ("gradient",), gdp_mu=mechanism_gdp_mu(self.mechanism)
        )
        self.broadcast_space = (np.full(POLICY_DIM, -BROADCAST_BOUND), np.full(POLICY_DIM, BROADCAST_BOUND))

    def release(self, secret: float, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        g = _check_gravity(secret)
        w = self.weights if broadcast is None else self._check_weights(broadcast)
        ep = rollout(gaussian_policy(w, self.policy_std), g, n, rng, self.params)
        gradients = reinforce_gradients(w, ep.observations, ep.actions, ep.rewards, self.policy_std)
        return {"gradient": self.mechanism(gradients, rng), "return": ep.rewards.sum(axis=0)[:, None]}

    def canaries(self) -> dict[str, tuple[float, float]]:
        return dict(CANARIES)

    def dp_event(self):
        return mechanism_event(self.mechanism)

    def describe_secret(self, secret: float) -> str:
        return f"g={float(secret):g}"

    def _check_weights(self, w) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (POLICY_DIM,) or not np.all(np.isfinite(w)):
            raise UserError(f"a Pendulum broadcast is {POLICY_DIM} finite policy weights, got shape {w.shape}")
        return w


def _check_gravity(secret) -> float:
    try:
        g = float(secret)
    except (TypeError, ValueError):
        raise UserError(f"a Pendulum secret is a gravity g (a number), got {secret!r}") from None
    if not math.isfinite(g):
        raise UserError(f"a Pendulum secret is a finite gravity g, got {secret!r}")
    return g


def pendulum_system(epsilon: float = 1.0, delta: float = 1e-5) -> PendulumGaussianSystem:
    """The factory ``pgc audit --system pgc.gympg.system:pendulum_system`` calls: ε = 1, δ = 1e-5."""
    return PendulumGaussianSystem(epsilon, delta)
