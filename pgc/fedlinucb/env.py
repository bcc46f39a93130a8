"""Bandit environments, batched over (runs, silos).

An environment hands out, each round t, the arm features X of shape (R, M, K, d) (‖x‖ ≤ 1) and
their mean rewards μ = Xθ* of shape (R, M, K), and answers the chosen arms with rewards clipped to
[−1, 1] (clipping bounds ‖x y‖ ≤ 1, the sensitivity the privacy analysis assumes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError


class SyntheticFamily:
    """The synthetic family of the public reimplementation of Zhou & Chowdhury's experiments (after
    Vaswani et al. 2020): arm features are a uniform direction on the unit sphere of R^{d−1} with a
    bias coordinate 1 appended, normalized to ‖x‖ = 1; θ* is a direction of norm 1/√2 in the first
    d − 1 coordinates with 1/√2 on the bias coordinate (‖θ*‖ = 1, so |xᵀθ*| ≤ 1).

    Each run draws its own θ* and a pool of ``pool_size`` contexts (K arms each); every round every
    silo's user is a uniform draw from the pool (i.i.d. users from a finite context distribution:
    the pool keeps the round cost a gather instead of K·d fresh normals per silo).
    """

    def __init__(
        self,
        runs: int,
        n_silos: int,
        n_arms: int,
        dim: int,
        noise_std: float,
        rng: np.random.Generator,
        pool_size: int = 256,
    ):
        self.runs, self.n_silos, self.n_arms, self.dim = runs, n_silos, n_arms, dim
        self.noise_std = float(noise_std)
        self._rng = rng
        direction = rng.standard_normal((runs, dim - 1))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        self.theta = np.concatenate([direction, np.ones((runs, 1))], axis=1) / np.sqrt(2.0)
        raw = rng.standard_normal((runs, pool_size, n_arms, dim - 1))
        raw /= np.linalg.norm(raw, axis=-1, keepdims=True)
        pool = np.concatenate([raw, np.ones((runs, pool_size, n_arms, 1))], axis=-1) / np.sqrt(2.0)
        self.pool = pool.astype(np.float32)  # features are stored in float32 (the UCB scores' precision)
        self.pool_means = np.einsum("rpkd,rd->rpk", self.pool.astype(np.float64), self.theta)
        self._run_index = np.arange(runs)[:, None]

    def contexts(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        idx = self._rng.integers(0, self.pool.shape[1], size=(self.runs, self.n_silos))
        return self.pool[self._run_index, idx], self.pool_means[self._run_index, idx]

    def rewards(self, t: int, chosen: np.ndarray, means_chosen: np.ndarray) -> np.ndarray:
        noise = self._rng.standard_normal(means_chosen.shape) * self.noise_std
        return np.clip(means_chosen + noise, -1.0, 1.0)


@dataclass(frozen=True)
class UserStream:
    """One silo's users for T rounds, fixed in advance: ``contexts`` (T, K, d) with ‖x‖ ≤ 1 and
    ``rewards`` (T, K) in [−1, 1], the reward each user would give for every arm (the realised noise
    is part of the user). A user whose K arms are identical leaves the algorithm no choice: her
    realised (x_t, y_t) is fixed."""

    contexts: np.ndarray
    rewards: np.ndarray

    def __post_init__(self) -> None:
        c, r = np.asarray(self.contexts, dtype=float), np.asarray(self.rewards, dtype=float)
        if c.ndim != 3 or r.shape != c.shape[:2]:
            raise UserError(f"contexts must be (T, K, d) and rewards (T, K); got {c.shape} and {r.shape}")
        if np.any(np.linalg.norm(c, axis=-1) > 1 + 1e-9):
            raise UserError("every feature vector must have norm <= 1")
        if np.any(np.abs(r) > 1 + 1e-12):
            raise UserError("rewards must lie in [-1, 1]")
        object.__setattr__(self, "contexts", c)
        object.__setattr__(self, "rewards", r)

    @property
    def horizon(self) -> int:
        return self.contexts.shape[0]


class StreamEnvironment:
    """``runs`` copies of one silo (M = 1) serving a fixed :class:`UserStream`; all randomness of a
    run comes from the algorithm (its privacy noise)."""

    def __init__(self, stream: UserStream, runs: int):
        self.stream, self.runs, self.n_silos = stream, runs, 1
        self.n_arms, self.dim = stream.contexts.shape[1:]

    def contexts(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        x = np.broadcast_to(self.stream.contexts[t], (self.runs, 1, self.n_arms, self.dim))
        mu = np.broadcast_to(self.stream.rewards[t], (self.runs, 1, self.n_arms))
        return x, mu

    def rewards(self, t: int, chosen: np.ndarray, means_chosen: np.ndarray) -> np.ndarray:
        return self.stream.rewards[t][chosen]
