"""Lanes of agents playing episodes, and clean (pre-mechanism) gradients at a given model.

:class:`LaneEngine` owns the per-lane arrays the compiled kernel (:mod:`pgc.a3c.kernel`) works on;
the trainer drives it asynchronously, :func:`simulate_episodes` drives it for the auditor and the
attacker ("what would an agent with physics ψ submit at model θ?").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError

from . import kernel
from .env import PHYSICS_FIELDS, initial_states
from .hyper import A3CHyperparams


def kernel_gradient_rule(hyper: A3CHyperparams) -> tuple[int, int, bool]:
    """(reward kind, n-step horizon, mean loss) of the reading knobs, as the kernel takes them."""
    reward = kernel.REWARD_UNIT if hyper.reward == "unit" else kernel.REWARD_TERMINAL
    return reward, int(hyper.n_step), hyper.loss_reduction == "mean"


class LaneEngine:
    """Per-lane episode state; :meth:`tick` steps all active lanes once (compiled)."""

    def __init__(self, n_lanes: int, hyper: A3CHyperparams):
        if n_lanes < 1:
            raise UserError("need at least one lane")
        self.hyper = hyper
        self.n = n_lanes
        self.state = np.zeros((n_lanes, 4))
        self.elapsed = np.zeros(n_lanes, np.int64)
        self.theta = np.zeros((n_lanes, hyper.dim))
        self.physics = np.ones((n_lanes, len(PHYSICS_FIELDS)))
        self.alpha = np.zeros(n_lanes)
        if n_lanes * hyper.cap * kernel.TRAJ_FIELDS * 8 > 2**31:
            raise UserError(f"{n_lanes} lanes × cap {hyper.cap} need over 2 GiB of trajectory buffers")
        self.traj = np.zeros((n_lanes, hyper.cap, kernel.TRAJ_FIELDS))  # (s_t, a_t) per step
        self.active = np.zeros(n_lanes, np.bool_)
        self.gradients = np.zeros((n_lanes, hyper.dim))
        self.done = np.zeros(n_lanes, np.bool_)
        self.terminated = np.zeros(n_lanes, np.bool_)
        self.actions = np.zeros(n_lanes, np.int8)
        self.last_ticks = 0
        self._block = 1

    def start(
        self,
        lanes: np.ndarray,
        theta: np.ndarray,
        physics: np.ndarray,
        alpha: np.ndarray,
        rng: np.random.Generator,
        states: np.ndarray | None = None,
    ) -> None:
        """Begin a new episode on ``lanes`` (θ' copied at its start, Alg. 1 "Copy parameters θ' ← θ")."""
        k = len(lanes)
        self.state[lanes] = initial_states(rng, k) if states is None else states
        self.elapsed[lanes] = 0
        self.theta[lanes] = kernel.to_kernel_layout(theta)  # θ' as the kernel reads it
        self.physics[lanes] = physics
        self.alpha[lanes] = alpha
        self.active[lanes] = True

    def stop(self, lanes: np.ndarray) -> None:
        self.active[lanes] = False

    def tick(self, rng: np.random.Generator, max_ticks: int = 64) -> np.ndarray:
        """Step every active lane until at least one episode ends (at most ``max_ticks`` steps);
        returns the finished lanes.

        ``self.last_ticks`` tells how many steps were played. The random draws are taken in blocks
        whose size follows the previous call (deterministic); unused draws are discarded.
        """
        block = min(self._block, max_ticks)
        u = rng.random((block, 2, self.n))
        h = self.hyper
        ticks = kernel.advance(
            block,
            u,
            self.state,
            self.elapsed,
            self.theta,
            self.physics,
            self.alpha,
            self.traj,
            self.active,
            h.cap,
            h.gamma,
            h.lam,
            h.beta,
            h.bootstrap_truncated,
            h.action_selection == "sample",
            self.gradients,
            self.done,
            self.terminated,
            self.actions,
            *kernel_gradient_rule(h),
        )
        self.last_ticks = int(ticks)
        # next block: twice the ticks this call needed, within [1, 64]
        self._block = max(1, min(64, 2 * self.last_ticks))
        finished = np.flatnonzero(self.done)
        self.active[finished] = False
        return finished


@dataclass(frozen=True)
class EpisodeBatch:
    """Clean per-episode gradients (before any mechanism) and scores (episode lengths)."""

    gradients: np.ndarray  # (n, d) float64, may hold non-finite values for a diverged model
    scores: np.ndarray  # (n,) int64
    terminated: np.ndarray  # (n,) bool: the pole fell (False: cut by the cap)


def simulate_episodes(
    theta: np.ndarray,
    physics: np.ndarray,
    rng: np.random.Generator,
    *,
    alpha: float | np.ndarray = 0.0,
    hyper: A3CHyperparams | None = None,
    max_lanes: int = 4096,
) -> EpisodeBatch:
    """Play one episode per physics row at model θ and return each episode's clean gradient.

    ``theta`` is one model ``(d,)`` for all episodes or one per episode ``(n, d)``, d = ``hyper.dim``
    (112, or 131 with biases); ``physics``
    is ``(n, 6)`` (see :func:`pgc.a3c.env.physics_array`); ``alpha`` the exploration probability.
    Episodes are fed through at most ``max_lanes`` lanes, refilled as soon as one finishes.
    """
    hyper = hyper or A3CHyperparams()
    physics = np.asarray(physics, dtype=np.float64)
    if physics.ndim != 2 or physics.shape[1] != len(PHYSICS_FIELDS):
        raise UserError(f"physics must have shape (n, {len(PHYSICS_FIELDS)}), got {physics.shape}")
    n = physics.shape[0]
    theta = np.asarray(theta, dtype=np.float64)
    d = hyper.dim
    if theta.shape not in ((d,), (n, d)):
        raise UserError(
            f"theta must have shape ({d},) or ({n}, {d}) for a model "
            f"{'with' if hyper.biases else 'without'} "
            f"biases (A3CHyperparams.biases={bool(hyper.biases)}), got {theta.shape}"
        )
    thetas = np.broadcast_to(theta, (n, d)) if theta.ndim == 1 else theta
    alphas = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (n,))
    grads = np.empty((n, d))
    scores = np.empty(n, np.int64)
    terminated = np.empty(n, np.bool_)
    if n == 0:
        return EpisodeBatch(grads, scores, terminated)
    lanes = min(n, max_lanes)
    engine = LaneEngine(lanes, hyper)
    episode_of_lane = np.arange(lanes)
    engine.start(np.arange(lanes), thetas[:lanes], physics[:lanes], alphas[:lanes], rng)
    next_episode = lanes
    remaining = n
    while remaining:
        finished = engine.tick(rng)
        if finished.size == 0:
            continue
        ep = episode_of_lane[finished]
        grads[ep] = engine.gradients[finished]
        scores[ep] = engine.elapsed[finished]
        terminated[ep] = engine.terminated[finished]
        remaining -= finished.size
        refill = finished[: max(0, min(finished.size, n - next_episode))]
        if refill.size:
            new = np.arange(next_episode, next_episode + refill.size)
            episode_of_lane[refill] = new
            engine.start(refill, thetas[new], physics[new], alphas[new], rng)
            next_episode += refill.size
    return EpisodeBatch(grads, scores, terminated)
