"""A linear Gaussian policy on Pendulum and its REINFORCE gradient (Williams 1992).

Policy: a ~ N(μ(s), σ_π²), μ(s) = w·φ(s), φ(s) = (cos θ, sin θ, θ̇, 1), so w ∈ R⁴ (``POLICY_DIM``).
Gradient of the objective J(w) = E[Σ_t γ^t r_t] per episode (REINFORCE with rewards-to-go):

    ĝ = (1/T) Σ_t ∇_w log π(a_t | s_t) · G_t,   ∇_w log π(a | s) = (a − μ(s))/σ_π² · φ(s),
    G_t = Σ_{t' ≥ t} γ^{t'−t} r_{t'}.
"""

from __future__ import annotations

import numpy as np

POLICY_DIM = 4
POLICY_STD = 0.5
DISCOUNT = 0.99


def features(obs: np.ndarray) -> np.ndarray:
    """φ(s) = (cos θ, sin θ, θ̇, 1) for observations (..., 3)."""
    return np.concatenate([obs, np.ones(obs.shape[:-1] + (1,))], axis=-1)


def gaussian_policy(w: np.ndarray, std: float = POLICY_STD):
    w = np.asarray(w, dtype=np.float64)

    def act(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return features(obs) @ w + std * rng.standard_normal(len(obs))

    return act


def rewards_to_go(rewards: np.ndarray, discount: float = DISCOUNT) -> np.ndarray:
    """G_t per step (T, n)."""
    out = np.empty_like(rewards)
    running = np.zeros(rewards.shape[1])
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + discount * running
        out[t] = running
    return out


def reinforce_gradients(
    w: np.ndarray,
    observations: np.ndarray,
    actions: np.ndarray,
    rewards: np.ndarray,
    std: float = POLICY_STD,
    discount: float = DISCOUNT,
) -> np.ndarray:
    """(n, 4) per-episode REINFORCE gradients (module docstring) from (T, n, ·) episode arrays."""
    phi = features(observations)  # (T, n, 4)
    mu = phi @ np.asarray(w, dtype=np.float64)  # (T, n)
    score = ((actions - mu) / std**2)[..., None] * phi  # ∇_w log π, (T, n, 4)
    returns = rewards_to_go(rewards, discount)
    return (score * returns[..., None]).mean(axis=0)
