"""Fused, compiled step of many agent lanes: CartPole physics + policy + online A3C gradient.

Each lane is one agent playing one episode with its own parameter copy θ' (112 floats, layout in
:mod:`pgc.model`) and its own physics row (:mod:`pgc.env`). One call of :func:`advance` moves every
active lane by one environment step.

Gradient of eqs. 15–18
----------------------
With rewards r_t = 1 (CartPole, terminal step included), episode length T and bootstrap value V_T,

    V̂_t = Σ_{j=t}^{T-1} γ^{j-t} r_j + γ^{T-t} V_T      (eq. 18 with eq. 12's γ^{T-t})
    A_t  = V̂_t − V(s_t; θ')                               (eq. 12)

the semi-gradient of eq. 15 (A_t and V̂_t treated as constants, the A3C convention) is

    g = Σ_t [ −A_t ∇log π(a_t|s_t) − β ∇H(π(·|s_t)) − 2λ A_t ∇V(s_t) ].

While an episode runs, a lane stores only (s_t, a_t) — 5 numbers a step — in its own trajectory
buffer; when it ends, one backward sweep (t = T−1..0) computes V̂_t recursively, recomputes the tiny
forward pass and accumulates g into a single 112-vector. Every lane loops over its own length, so
nothing is padded, and the sweep's working set stays in L1 cache.

The sums run over the T steps at which an action was taken (t = 0..T−1); the terminal state has no
action, so eq. 16's term at t = T_n is empty. V_T is V(s_T; θ') if the episode was cut by the 200-step
cap (``bootstrap_truncated=True``), and 0 if the pole fell (a terminal state's value is 0 as R gives
0 to terminal states, §2.2). ``tests/test_gradient.py`` checks g against torch autograd on eqs. 15–18.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .env import THETA_THRESHOLD, X_THRESHOLD
from .model import DIM

TRAJ_FIELDS = 5  # s_t (4 numbers) and a_t per stored step


@nb.njit(cache=True, inline="always", error_model="numpy")
def _forward(theta, row, s0, s1, s2, s3):
    """Returns (z0, z1, v): policy logits and value of state s at θ[row]."""
    z0 = 0.0
    z1 = 0.0
    v = 0.0
    for j in range(16):
        p = theta[row, 4 * j] * s0 + theta[row, 4 * j + 1] * s1 + theta[row, 4 * j + 2] * s2 + theta[row, 4 * j + 3] * s3
        if p > 0.0:
            z0 += theta[row, 64 + j] * p
            z1 += theta[row, 80 + j] * p
            v += theta[row, 96 + j] * p
    return z0, z1, v


@nb.njit(cache=True, inline="always", error_model="numpy")
def _log_softmax2(z0, z1):
    zmax = z0 if z0 > z1 else z1
    lse = zmax + math.log(math.exp(z0 - zmax) + math.exp(z1 - zmax))
    return z0 - lse, z1 - lse


@nb.njit(cache=True, error_model="numpy")  # once per episode: a call, kept out of the hot step
def _episode_gradient(lane, traj, steps, v_boot, theta, gamma, lam, beta, grad_out):
    """Backward sweep over one stored episode: writes g of eqs. 15–18 into grad_out[lane]."""
    for k in range(grad_out.shape[1]):
        grad_out[lane, k] = 0.0
    target = v_boot
    for t in range(steps - 1, -1, -1):
        target = 1.0 + gamma * target  # eq. 18, r_t = 1
        s0 = traj[lane, t, 0]
        s1 = traj[lane, t, 1]
        s2 = traj[lane, t, 2]
        s3 = traj[lane, t, 3]
        a = int(traj[lane, t, 4])
        z0 = 0.0
        z1 = 0.0
        v = 0.0
        for j in range(16):  # forward pass, written out: no array-passing call per step
            p = theta[lane, 4 * j] * s0 + theta[lane, 4 * j + 1] * s1 + theta[lane, 4 * j + 2] * s2 + theta[lane, 4 * j + 3] * s3
            if p > 0.0:
                z0 += theta[lane, 64 + j] * p
                z1 += theta[lane, 80 + j] * p
                v += theta[lane, 96 + j] * p
        logp0, logp1 = _log_softmax2(z0, z1)
        p0 = math.exp(logp0)
        p1 = math.exp(logp1)
        entropy = -(p0 * logp0 + p1 * logp1)  # eq. 13
        adv = target - v  # eq. 12 (a constant for the gradient)
        # upstream gradient on the logits and the value
        dz0 = adv * (p0 - (1.0 if a == 0 else 0.0)) + beta * p0 * (logp0 + entropy)
        dz1 = adv * (p1 - (1.0 if a == 1 else 0.0)) + beta * p1 * (logp1 + entropy)
        dv = -2.0 * lam * adv
        for j in range(16):
            p = theta[lane, 4 * j] * s0 + theta[lane, 4 * j + 1] * s1 + theta[lane, 4 * j + 2] * s2 + theta[lane, 4 * j + 3] * s3
            if p > 0.0:
                grad_out[lane, 64 + j] += dz0 * p
                grad_out[lane, 80 + j] += dz1 * p
                grad_out[lane, 96 + j] += dv * p
                dh = theta[lane, 64 + j] * dz0 + theta[lane, 80 + j] * dz1 + theta[lane, 96 + j] * dv
                grad_out[lane, 4 * j] += dh * s0
                grad_out[lane, 4 * j + 1] += dh * s1
                grad_out[lane, 4 * j + 2] += dh * s2
                grad_out[lane, 4 * j + 3] += dh * s3


@nb.njit(cache=True, error_model="numpy")
def _advance(max_ticks, uniforms, state, elapsed, theta, physics, alpha, traj, active,
             cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions):
    n_lanes = state.shape[0]
    for tick in range(max_ticks):
        any_done = False
        u_explore = uniforms[tick, 0]
        u_action = uniforms[tick, 1]
        for lane in range(n_lanes):
            done[lane] = False
            if not active[lane]:
                continue
            s0 = state[lane, 0]
            s1 = state[lane, 1]
            s2 = state[lane, 2]
            s3 = state[lane, 3]
            z0 = 0.0
            z1 = 0.0
            v = 0.0
            for j in range(16):  # forward pass, written out: no array-passing call per step
                p = theta[lane, 4 * j] * s0 + theta[lane, 4 * j + 1] * s1 + theta[lane, 4 * j + 2] * s2 + theta[lane, 4 * j + 3] * s3
                if p > 0.0:
                    z0 += theta[lane, 64 + j] * p
                    z1 += theta[lane, 80 + j] * p
                    v += theta[lane, 96 + j] * p
            # action (§4): with probability α uniformly random; otherwise argmax π (Alg. 1; ties -> 0 as
            # numpy's argmax) or, with ``sample_actions``, a draw from π (the usual A3C actor)
            if u_explore[lane] < alpha[lane]:
                a = 0 if u_action[lane] < 0.5 else 1
            elif sample_actions:
                _, logp1 = _log_softmax2(z0, z1)
                a = 1 if u_action[lane] < math.exp(logp1) else 0
            else:
                a = 0 if z0 >= z1 else 1
            actions[lane] = a
            t = elapsed[lane]
            traj[lane, t, 0] = s0
            traj[lane, t, 1] = s1
            traj[lane, t, 2] = s2
            traj[lane, t, 3] = s3
            traj[lane, t, 4] = a
            # CartPole physics, same operations and order as gymnasium's CartPoleEnv.step (Euler)
            gravity = physics[lane, 0]
            masscart = physics[lane, 1]
            masspole = physics[lane, 2]
            length = physics[lane, 3]
            force_mag = physics[lane, 4]
            tau = physics[lane, 5]
            total_mass = masspole + masscart
            polemass_length = masspole * length
            force = force_mag if a == 1 else -force_mag
            costheta = math.cos(s2)
            sintheta = math.sin(s2)
            temp = (force + polemass_length * (s3 * s3) * sintheta) / total_mass
            thetaacc = (gravity * sintheta - costheta * temp) / (
                length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass))
            xacc = temp - polemass_length * thetaacc * costheta / total_mass
            x = s0 + tau * s1
            x_dot = s1 + tau * xacc
            th = s2 + tau * s3
            th_dot = s3 + tau * thetaacc
            state[lane, 0] = x
            state[lane, 1] = x_dot
            state[lane, 2] = th
            state[lane, 3] = th_dot
            elapsed[lane] = t + 1
            term = x < -X_THRESHOLD or x > X_THRESHOLD or th < -THETA_THRESHOLD or th > THETA_THRESHOLD
            if term or t + 1 >= cap:
                done[lane] = True
                any_done = True
                terminated[lane] = term
                v_boot = 0.0
                if (not term) and bootstrap_truncated:
                    _, _, v_boot = _forward(theta, lane, x, x_dot, th, th_dot)
                _episode_gradient(lane, traj, t + 1, v_boot, theta, gamma, lam, beta, grad_out)
        if any_done:
            return tick + 1
    return max_ticks


def advance(max_ticks, uniforms, state, elapsed, theta, physics, alpha, traj, active,
            cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions):
    """Advance every active lane tick by tick until some lane's episode ends (or ``max_ticks``).

    ``uniforms[t, 0]`` / ``uniforms[t, 1]`` are the exploration / action draws of tick t for every
    lane. Returns the number of ticks played; finished lanes (``done``) hold their gradient in
    ``grad_out`` and their episode length in ``elapsed``; the caller resets them. Stopping at the
    first finished episode keeps the asynchronous protocol exact: the aggregator acts on every
    submission before any other lane plays its next step.

    The hot loop is one flat compiled function (a helper taking arrays would pay reference
    counting on every lane visit); parallelism comes from processes (``train_batch(processes=)``).
    """
    return _advance(max_ticks, uniforms, state, elapsed, theta, physics, alpha, traj, active,
                    cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions)


def warm_up() -> None:
    """Compile (or load from cache) the kernel on a tiny batch."""
    n = 2
    advance(1, np.zeros((1, 2, n)), np.zeros((n, 4)), np.zeros(n, np.int64), np.zeros((n, DIM)), np.ones((n, 6)),
            np.zeros(n), np.zeros((n, 200, TRAJ_FIELDS)), np.ones(n, np.bool_), 200, 0.99, 0.5,
            0.01, True, False, np.zeros((n, DIM)), np.zeros(n, np.bool_), np.zeros(n, np.bool_), np.zeros(n, np.int8))
