"""Shadow simulation: what an agent with physics ψ would submit at model θ, simulated by the attacker.

A *context* is one (θ', α) pair at which attacked submissions were computed (one for fresh
submissions at a checkpoint; up to one per submission for a trained run's transcript). For every
context and every candidate ψ the attacker plays ``budget`` episodes with
:func:`pgc.a3c.rollout.simulate_episodes` and keeps the clean gradient and the score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attacks.a3c.threat import AttackView, ThreatModel
from pgc.a3c.env import physics_array
from pgc.a3c.rollout import simulate_episodes
from pgc.errors import UserError
from pgc.mechanisms import sanitize


@dataclass(frozen=True)
class Contexts:
    """Distinct (θ', α) rows of a view and, for each submission, the index of its context."""

    thetas: np.ndarray  # (m, 112)
    alphas: np.ndarray  # (m,)
    of_row: np.ndarray  # (n,) context index of each submission

    @classmethod
    def of(cls, view: AttackView) -> Contexts:
        key = np.concatenate([view.thetas, view.alphas[:, None]], axis=1)
        uniq, inverse = np.unique(key, axis=0, return_inverse=True)
        return cls(uniq[:, :-1].copy(), uniq[:, -1].copy(), inverse.reshape(-1))

    def __len__(self) -> int:
        return len(self.thetas)


@dataclass(frozen=True)
class ShadowBank:
    """Shadow episodes: ``gradients[c, p, j]`` is episode j of candidate ψ_p at context c."""

    psis: np.ndarray  # (P,)
    gradients: np.ndarray  # (m, P, J, d) clean, sanitized (non-finite rows → 0, as the mechanisms do)
    scores: np.ndarray  # (m, P, J)

    @property
    def budget(self) -> int:
        return self.gradients.shape[2]


def simulate_bank(
    threat: ThreatModel,
    contexts: Contexts,
    psis: np.ndarray,
    budget: int,
    rng: np.random.Generator,
    *,
    max_episodes: int = 2_000_000,
) -> ShadowBank:
    """Play ``budget`` episodes per (context, ψ); one vectorised call to the compiled engine."""
    psis = np.asarray(psis, dtype=np.float64)
    m, p, j = len(contexts), len(psis), int(budget)
    total = m * p * j
    if total > max_episodes:
        raise UserError(
            f"shadow simulation of {m} contexts x {p} candidates x {j} episodes = {total:,} "
            f"episodes exceeds {max_episodes:,}; lower the budget or the number of targets"
        )
    ctx = np.repeat(np.arange(m), p * j)
    psi = np.tile(np.repeat(psis, j), m)
    physics = physics_array(total, base=threat.physics, gravity=psi)
    batch = simulate_episodes(contexts.thetas[ctx], physics, rng, alpha=contexts.alphas[ctx], hyper=threat.hyper)
    grads = sanitize(batch.gradients).reshape(m, p, j, -1)
    return ShadowBank(psis, grads, batch.scores.reshape(m, p, j).astype(np.float64))


def candidate_grid(threat: ThreatModel, points: int = 21) -> np.ndarray:
    """Ψ itself, or an evenly spaced grid over the range for regression."""
    if threat.candidates is not None:
        return np.asarray(threat.candidates, dtype=np.float64)
    lo, hi = threat.psi_range
    return np.linspace(lo, hi, points)
