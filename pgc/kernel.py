"""Fused, compiled step of many agent lanes: CartPole physics + policy + online A3C gradient.

Each lane is one agent playing one episode with its own parameter copy θ' (112 floats, layout in
:mod:`pgc.model`) and its own physics row (:mod:`pgc.env`). One call of :func:`advance` moves every
active lane by one environment step.

Gradient of eqs. 15–18, accumulated online
------------------------------------------
With rewards r_t = 1 (CartPole, terminal step included), episode length T, bootstrap value V_T
(eq. 18: V(s_T; θ') — taken as 0 when the pole fell, see below), discount γ and

    V̂_t = Σ_{j=t}^{T-1} γ^{j-t} r_j + γ^{T-t} V_T      (eq. 18 with eq. 12's γ^{T-t})
    A_t  = V̂_t − V(s_t; θ')                               (eq. 12)

the semi-gradient of eq. 15 (A_t and V̂_t treated as constants, the A3C convention) is

    g = Σ_t A_t u_t + Σ_t w_t,
    u_t = −∇ log π(a_t|s_t) − 2λ ∇V(s_t),   w_t = −β ∇H(π(·|s_t)).

Since Σ_{j≥t} γ^{j-t} = (1 − γ^{T−t})/(1 − γ), A_t is affine in γ^{−t} with coefficients known only at
the end, so three 112-vectors per lane suffice — no trajectory storage, no padding:

    S0 = Σ u_t,   S1 = Σ γ^{−t} u_t,   S2 = Σ (w_t − V(s_t) u_t)
    g  = S0/(1−γ) + γ^T (V_T − 1/(1−γ)) S1 + S2.

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

ACC_TERMS = 3  # S0, S1, S2 above


@nb.njit(cache=True, inline="always")
def _forward(theta, row, s0, s1, s2, s3, pre, h):
    """Writes pre-activations and hidden units; returns (z0, z1, v)."""
    z0 = 0.0
    z1 = 0.0
    v = 0.0
    for j in range(16):
        p = theta[row, 4 * j] * s0 + theta[row, 4 * j + 1] * s1 + theta[row, 4 * j + 2] * s2 + theta[row, 4 * j + 3] * s3
        pre[j] = p
        hj = p if p > 0.0 else 0.0
        h[j] = hj
        z0 += theta[row, 64 + j] * hj
        z1 += theta[row, 80 + j] * hj
        v += theta[row, 96 + j] * hj
    return z0, z1, v


@nb.njit(cache=True, inline="always")
def _step_lane(lane, state, elapsed, theta, physics, alpha, u_explore, u_action, acc, active,
               cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions):
    """One environment step of one lane (see :func:`advance`)."""
    done[lane] = False
    if not active[lane]:
        return
    pre = np.empty(16)
    h = np.empty(16)
    s0 = state[lane, 0]
    s1 = state[lane, 1]
    s2 = state[lane, 2]
    s3 = state[lane, 3]
    z0, z1, v = _forward(theta, lane, s0, s1, s2, s3, pre, h)
    # log-softmax of two logits, computed stably
    zmax = z0 if z0 > z1 else z1
    lse = zmax + math.log(math.exp(z0 - zmax) + math.exp(z1 - zmax))
    logp0 = z0 - lse
    logp1 = z1 - lse
    p0 = math.exp(logp0)
    p1 = math.exp(logp1)
    entropy = -(p0 * logp0 + p1 * logp1)  # eq. 13
    # action (§4): with probability α uniformly random; otherwise argmax π (Alg. 1; ties -> 0 as
    # numpy's argmax) or, with ``sample_actions``, a draw from π (the usual A3C actor)
    if u_explore[lane] < alpha[lane]:
        a = 0 if u_action[lane] < 0.5 else 1
    elif sample_actions:
        a = 1 if u_action[lane] < p1 else 0
    else:
        a = 0 if z0 >= z1 else 1
    actions[lane] = a
    # upstream gradients on (logits, value) of the three accumulated terms
    az0 = p0 - (1.0 if a == 0 else 0.0)  # ∂(−log π_a)/∂z
    az1 = p1 - (1.0 if a == 1 else 0.0)
    bz0 = beta * p0 * (logp0 + entropy)  # ∂(−βH)/∂z
    bz1 = beta * p1 * (logp1 + entropy)
    t = elapsed[lane]
    disc_inv = gamma ** (-t)
    dz0_0 = az0
    dz1_0 = az1
    dv_0 = -2.0 * lam
    dz0_1 = disc_inv * az0
    dz1_1 = disc_inv * az1
    dv_1 = disc_inv * dv_0
    dz0_2 = bz0 - v * az0
    dz1_2 = bz1 - v * az1
    dv_2 = 2.0 * lam * v
    for j in range(16):
        hj = h[j]
        acc[lane, 0, 64 + j] += dz0_0 * hj
        acc[lane, 0, 80 + j] += dz1_0 * hj
        acc[lane, 0, 96 + j] += dv_0 * hj
        acc[lane, 1, 64 + j] += dz0_1 * hj
        acc[lane, 1, 80 + j] += dz1_1 * hj
        acc[lane, 1, 96 + j] += dv_1 * hj
        acc[lane, 2, 64 + j] += dz0_2 * hj
        acc[lane, 2, 80 + j] += dz1_2 * hj
        acc[lane, 2, 96 + j] += dv_2 * hj
        if pre[j] > 0.0:
            wp0 = theta[lane, 64 + j]
            wp1 = theta[lane, 80 + j]
            wv = theta[lane, 96 + j]
            dh0 = wp0 * dz0_0 + wp1 * dz1_0 + wv * dv_0
            dh1 = wp0 * dz0_1 + wp1 * dz1_1 + wv * dv_1
            dh2 = wp0 * dz0_2 + wp1 * dz1_2 + wv * dv_2
            b = 4 * j
            acc[lane, 0, b] += dh0 * s0
            acc[lane, 0, b + 1] += dh0 * s1
            acc[lane, 0, b + 2] += dh0 * s2
            acc[lane, 0, b + 3] += dh0 * s3
            acc[lane, 1, b] += dh1 * s0
            acc[lane, 1, b + 1] += dh1 * s1
            acc[lane, 1, b + 2] += dh1 * s2
            acc[lane, 1, b + 3] += dh1 * s3
            acc[lane, 2, b] += dh2 * s0
            acc[lane, 2, b + 1] += dh2 * s1
            acc[lane, 2, b + 2] += dh2 * s2
            acc[lane, 2, b + 3] += dh2 * s3
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
        terminated[lane] = term
        v_boot = 0.0
        if (not term) and bootstrap_truncated:
            _, _, v_boot = _forward(theta, lane, x, x_dot, th, th_dot, pre, h)
        big_t = t + 1
        inv = 1.0 / (1.0 - gamma)
        c1 = gamma ** big_t * (v_boot - inv)
        for k in range(DIM):
            grad_out[lane, k] = acc[lane, 0, k] * inv + c1 * acc[lane, 1, k] + acc[lane, 2, k]


SERIAL_MAX_LANES = 256  # below this, a parallel region per tick costs more than it saves


@nb.njit(cache=True)
def _advance_serial(state, elapsed, theta, physics, alpha, u_explore, u_action, acc, active,
                    cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions):
    for lane in range(state.shape[0]):
        _step_lane(lane, state, elapsed, theta, physics, alpha, u_explore, u_action, acc, active,
                   cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions)


@nb.njit(parallel=True, cache=True)
def _advance_parallel(state, elapsed, theta, physics, alpha, u_explore, u_action, acc, active,
                      cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions):
    for lane in nb.prange(state.shape[0]):
        _step_lane(lane, state, elapsed, theta, physics, alpha, u_explore, u_action, acc, active,
                   cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions)


def advance(state, elapsed, theta, physics, alpha, u_explore, u_action, acc, active,
            cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions):
    """Advance every active lane one step (all arrays per lane, see :class:`pgc.rollout.LaneEngine`).

    Finished lanes get ``done``, their gradient in ``grad_out`` and their episode length in
    ``elapsed``; the caller resets them. Lanes are independent, so the parallel and the serial
    versions give identical results.
    """
    fn = _advance_parallel if state.shape[0] > SERIAL_MAX_LANES else _advance_serial
    fn(state, elapsed, theta, physics, alpha, u_explore, u_action, acc, active,
       cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions)


def warm_up() -> None:
    """Compile (or load from cache) the kernel on a tiny batch."""
    n = 2
    advance(np.zeros((n, 4)), np.zeros(n, np.int64), np.zeros((n, DIM)), np.ones((n, 6)), np.zeros(n),
            np.zeros(n), np.zeros(n), np.zeros((n, ACC_TERMS, DIM)), np.ones(n, np.bool_), 200, 0.99, 0.5,
            0.01, True, False, np.zeros((n, DIM)), np.zeros(n, np.bool_), np.zeros(n, np.bool_), np.zeros(n, np.int8))
