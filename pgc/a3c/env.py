"""CartPole environment family, parametrised per agent by its physics (gravity ψ and friends).

The physics is gymnasium's ``classic_control/cartpole.py`` (Euler integrator), the episode cap is
the paper's CartPole-v0 setting: 200 steps, target score Θ = 195 (§4).

Two views of the same physics:

* :func:`cartpole_step` — pure numpy, vectorised over lanes, each lane with its own parameters.
  :class:`VectorCartPole` wraps it with reset / auto-reset bookkeeping for users.
* :mod:`pgc.a3c.kernel.physics` — a compiled (numba) copy of the same arithmetic, fused with the policy and the
  gradient; ``tests/pgc/a3c/test_env.py`` checks both, step for step, against gymnasium's scalar
  ``CartPoleEnv``.

A lane's physics is a row of a ``(n, 6)`` float array in the order of :data:`PHYSICS_FIELDS`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from pgc.errors import UserError

PHYSICS_FIELDS = ("gravity", "masscart", "masspole", "length", "force_mag", "tau")
X_THRESHOLD = 2.4
THETA_THRESHOLD = 12 * 2 * math.pi / 360  # radians, as gymnasium
INIT_HIGH = 0.05  # initial state ~ U(-0.05, 0.05)^4, as gymnasium
EPISODE_CAP = 200  # paper §4: maximum score 200 (CartPole-v0)
TARGET_SCORE = 195.0  # paper §4: Θ
PAPER_GRAVITIES = (9.7, 9.8, 9.9)  # paper §4: Ψ


@dataclass(frozen=True)
class CartPoleParams:
    """Physical parameters of one CartPole environment; gymnasium's defaults."""

    gravity: float = 9.8
    masscart: float = 1.0
    masspole: float = 0.1
    length: float = 0.5  # half the pole's length, as gymnasium
    force_mag: float = 10.0
    tau: float = 0.02

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UserError(f"CartPoleParams.{f.name} must be a finite number, got {value!r}")
        for name in ("masscart", "masspole", "length", "tau"):
            if getattr(self, name) <= 0:
                raise UserError(f"CartPoleParams.{name} must be > 0, got {getattr(self, name)}")

    def replace(self, **changes: float) -> CartPoleParams:
        return CartPoleParams(**{**asdict(self), **changes})

    def as_row(self) -> np.ndarray:
        return np.array([getattr(self, f) for f in PHYSICS_FIELDS], dtype=np.float64)


def physics_array(n: int, base: CartPoleParams | None = None, **per_lane: object) -> np.ndarray:
    """A ``(n, 6)`` physics array: ``base`` for every lane, with any field overridden per lane.

    ``physics_array(3, gravity=[9.7, 9.8, 9.9])`` gives three lanes differing in gravity only.
    """
    base = base or CartPoleParams()
    out = np.tile(base.as_row(), (n, 1))
    for name, values in per_lane.items():
        if name not in PHYSICS_FIELDS:
            raise UserError(f"unknown physics field {name!r}; expected one of {PHYSICS_FIELDS}")
        arr = np.broadcast_to(np.asarray(values, dtype=np.float64), (n,))
        if not np.all(np.isfinite(arr)):
            raise UserError(f"physics field {name!r} must be finite")
        out[:, PHYSICS_FIELDS.index(name)] = arr
    if np.any(out[:, 1:] <= 0):
        raise UserError("masses, length, force magnitude and tau must be > 0")
    return out


def initial_states(rng: np.random.Generator, n: int) -> np.ndarray:
    """Initial states U(-0.05, 0.05)^4 as gymnasium's ``reset``."""
    return rng.uniform(-INIT_HIGH, INIT_HIGH, size=(n, 4))


def cartpole_step(state: np.ndarray, action: np.ndarray, physics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One Euler step of every lane; returns ``(next_state, terminated)``.

    Same operations in the same order as gymnasium's ``CartPoleEnv.step`` so results agree exactly.
    """
    x, x_dot, theta, theta_dot = state.T
    gravity, masscart, masspole, length, force_mag, tau = physics.T
    total_mass = masspole + masscart
    polemass_length = masspole * length
    force = np.where(action == 1, force_mag, -force_mag)
    costheta = np.cos(theta)
    sintheta = np.sin(theta)
    temp = (force + polemass_length * np.square(theta_dot) * sintheta) / total_mass
    thetaacc = (gravity * sintheta - costheta * temp) / (
        length * (4.0 / 3.0 - masspole * np.square(costheta) / total_mass)
    )
    xacc = temp - polemass_length * thetaacc * costheta / total_mass
    x = x + tau * x_dot
    x_dot = x_dot + tau * xacc
    theta = theta + tau * theta_dot
    theta_dot = theta_dot + tau * thetaacc
    next_state = np.stack([x, x_dot, theta, theta_dot], axis=1)
    terminated = (x < -X_THRESHOLD) | (x > X_THRESHOLD) | (theta < -THETA_THRESHOLD) | (theta > THETA_THRESHOLD)
    return next_state, terminated


class VectorCartPole:
    """n CartPole lanes with per-lane physics, a step cap and auto-reset (numpy, no policy).

    ``step`` returns ``(obs, reward, terminated, truncated)``; a lane that ended is reset in the same
    call (the returned obs is then the new episode's first state), like gymnasium's vector envs in
    "same-step" autoreset mode.
    """

    def __init__(self, physics: np.ndarray, rng: np.random.Generator, cap: int = EPISODE_CAP):
        physics = np.asarray(physics, dtype=np.float64)
        if physics.ndim != 2 or physics.shape[1] != len(PHYSICS_FIELDS):
            raise UserError(f"physics must have shape (n, {len(PHYSICS_FIELDS)}), got {physics.shape}")
        if cap < 1:
            raise UserError("cap must be >= 1")
        self.physics = physics
        self.rng = rng
        self.cap = int(cap)
        self.num_envs = physics.shape[0]
        self.state = initial_states(rng, self.num_envs)
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)

    def step(self, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        action = np.asarray(action)
        if action.shape != (self.num_envs,) or not np.all((action == 0) | (action == 1)):
            raise UserError(f"action must be a 0/1 array of shape ({self.num_envs},)")
        self.state, terminated = cartpole_step(self.state, action, self.physics)
        self.elapsed += 1
        truncated = (self.elapsed >= self.cap) & ~terminated
        done = terminated | truncated
        if done.any():
            self.state[done] = initial_states(self.rng, int(done.sum()))
            self.elapsed[done] = 0
        return self.state.copy(), np.ones(self.num_envs), terminated, truncated
