"""Pendulum-v1 (gymnasium) vectorized over n episodes: each lane its own gravity g.

The step is gymnasium's, operation for operation (``PendulumEnv.step``): u clipped to ±max_torque,
cost = angle_normalize(θ)² + 0.1·θ̇² + 0.001·u², θ̇ ← clip(θ̇ + (3g/(2l)·sin θ + 3/(m l²)·u)·dt, ±max_speed),
θ ← θ + θ̇·dt; reward = −cost; observation (cos θ, sin θ, θ̇); reset θ ~ U(−π, π), θ̇ ~ U(−1, 1);
episodes end at the time limit (200 steps in ``gymnasium.make("Pendulum-v1")``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError


@dataclass(frozen=True)
class PendulumParams:
    """Pendulum-v1's constants (gymnasium's defaults); g is the per-lane secret, given to :func:`rollout`."""

    max_speed: float = 8.0
    max_torque: float = 2.0
    dt: float = 0.05
    m: float = 1.0
    l: float = 1.0  # noqa: E741 gymnasium's name for the pole length, a public field
    horizon: int = 200

    def __post_init__(self) -> None:
        for name in ("max_speed", "max_torque", "dt", "m", "l"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise UserError(f"{name} must be a positive finite number, got {value!r}")
        if not (isinstance(self.horizon, int) and 1 <= self.horizon <= 10_000):
            raise UserError(f"horizon must be an integer in [1, 10000], got {self.horizon!r}")


def angle_normalize(x: np.ndarray) -> np.ndarray:
    return ((x + np.pi) % (2 * np.pi)) - np.pi


def observe(th: np.ndarray, thdot: np.ndarray) -> np.ndarray:
    """(n, 3) observations (cos θ, sin θ, θ̇)."""
    return np.stack([np.cos(th), np.sin(th), thdot], axis=1)


def step(th: np.ndarray, thdot: np.ndarray, u: np.ndarray, g: np.ndarray, p: PendulumParams):
    """One step of every lane: (θ, θ̇, reward). ``u`` is the unclipped action."""
    u = np.clip(u, -p.max_torque, p.max_torque)
    costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * (u**2)
    newthdot = thdot + (3 * g / (2 * p.l) * np.sin(th) + 3.0 / (p.m * p.l**2) * u) * p.dt
    newthdot = np.clip(newthdot, -p.max_speed, p.max_speed)
    newth = th + newthdot * p.dt
    return newth, newthdot, -costs


@dataclass(frozen=True)
class Episodes:
    observations: np.ndarray  # (T, n, 3)
    actions: np.ndarray  # (T, n): the policy's unclipped actions
    rewards: np.ndarray  # (T, n)


def rollout(policy, g, n: int, rng: np.random.Generator, params: PendulumParams | None = None) -> Episodes:
    """n episodes of ``params.horizon`` steps; ``policy(obs (n, 3), rng) -> actions (n,)``; ``g`` a number
    or one per lane."""
    p = params or PendulumParams()
    g = np.broadcast_to(np.asarray(g, dtype=np.float64), (n,))
    th = rng.uniform(-np.pi, np.pi, size=n)
    thdot = rng.uniform(-1.0, 1.0, size=n)
    obs = np.empty((p.horizon, n, 3))
    actions = np.empty((p.horizon, n))
    rewards = np.empty((p.horizon, n))
    for t in range(p.horizon):
        obs[t] = observe(th, thdot)
        actions[t] = policy(obs[t], rng)
        th, thdot, rewards[t] = step(th, thdot, actions[t], g, p)
    return Episodes(obs, actions, rewards)
