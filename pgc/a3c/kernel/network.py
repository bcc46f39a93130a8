"""The actor-critic of a lane and its gradient (eqs. 12–18), compiled.

Forward pass: θ(c) 16×4 with ReLU, then θ(p) 2×16 (policy logits) and θ(v) 1×16 (value), no biases
(d = 112); with the biases knob (θ of 131 entries) b(c), b(p), b(v) are added to the three layers
(:mod:`pgc.a3c.model`), and the gradient has 131 entries.

Gradient of eqs. 15–18
----------------------
With rewards r_t = 1 (CartPole, terminal step included), episode length T and bootstrap value V_T,

    V̂_t = Σ_{j=t}^{T-1} γ^{j-t} r_j + γ^{T-t} V_T      (eq. 18 with eq. 12's γ^{T-t})
    A_t  = V̂_t − V(s_t; θ')                               (eq. 12)

the semi-gradient of eq. 15 (A_t and V̂_t treated as constants, the A3C convention) is

    g = Σ_t [ −A_t ∇log π(a_t|s_t) − β ∇H(π(·|s_t)) − 2λ A_t ∇V(s_t) ].

While an episode runs, a lane stores only (s_t, a_t) — 5 numbers a step — in its own trajectory
buffer; when it ends, one backward sweep (t = T−1..0) computes V̂_t recursively, recomputes the tiny
forward pass and accumulates g into a single d-vector. Every lane loops over its own length, so
nothing is padded, and the sweep's working set stays in L1 cache.

The sums run over the T steps at which an action was taken (t = 0..T−1); the terminal state has no
action, so eq. 16's term at t = T_n is empty. V_T is V(s_T; θ') if the episode was cut by the 200-step
cap (``bootstrap_truncated=True``), and 0 if the pole fell (a terminal state's value is 0 as R gives
0 to terminal states, §2.2). ``tests/pgc/a3c/test_gradient.py`` checks g against torch autograd on eqs. 15–18.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..model import DIM, DIM_BIASED

# Kernel layout of a lane's θ': position k holds canonical entry KERNEL_ORDER[k]. θ(c) is stored
# column by column (input i's 16 weights contiguous) so that the hidden layer is four contiguous
# multiply-adds over j, which the compiler vectorises; θ(p) and θ(v) keep their canonical places.
# Biases (θ of 131 entries) keep their canonical places after the weights.
KERNEL_ORDER = np.concatenate([np.arange(64).reshape(16, 4).T.ravel(), np.arange(64, DIM)])
KERNEL_ORDER_BIASED = np.concatenate([KERNEL_ORDER, np.arange(DIM, DIM_BIASED)])


def to_kernel_layout(theta: np.ndarray) -> np.ndarray:
    """θ (…, 112 or 131) in the canonical layout → the kernel layout."""
    theta = np.asarray(theta)
    return theta[..., KERNEL_ORDER_BIASED if theta.shape[-1] == DIM_BIASED else KERNEL_ORDER]


@nb.njit(cache=True, inline="always", error_model="numpy")
def forward(theta, row, s0, s1, s2, s3):
    """Returns (z0, z1, v): policy logits and value of state s at θ[row] (kernel layout)."""
    z0 = 0.0
    z1 = 0.0
    v = 0.0
    if theta.shape[1] == DIM_BIASED:  # Dense layers with biases (θ[112:131], canonical places)
        for j in range(16):
            p = (
                theta[row, j] * s0
                + theta[row, 16 + j] * s1
                + theta[row, 32 + j] * s2
                + theta[row, 48 + j] * s3
                + theta[row, 112 + j]
            )
            h = p if p > 0.0 else 0.0
            z0 += theta[row, 64 + j] * h
            z1 += theta[row, 80 + j] * h
            v += theta[row, 96 + j] * h
        return z0 + theta[row, 128], z1 + theta[row, 129], v + theta[row, 130]
    for j in range(16):
        p = theta[row, j] * s0 + theta[row, 16 + j] * s1 + theta[row, 32 + j] * s2 + theta[row, 48 + j] * s3
        h = p if p > 0.0 else 0.0  # ReLU as a select, not a branch (half of them would mispredict)
        z0 += theta[row, 64 + j] * h
        z1 += theta[row, 80 + j] * h
        v += theta[row, 96 + j] * h
    return z0, z1, v


@nb.njit(cache=True, inline="always", error_model="numpy")
def softmax2(z0, z1):
    """(log π(0), log π(1), π(0), π(1)) for logits (z0, z1): one exp and one log, stable for any gap."""
    gap = z1 - z0
    e = math.exp(-abs(gap))
    lse = math.log(1.0 + e)  # log(1 + e^-|gap|); absolute error < 2.3e-16 against log1p, at half the cost
    p_big = 1.0 / (1.0 + e)
    p_small = e * p_big
    if gap > 0.0:
        return -gap - lse, -lse, p_small, p_big
    return -lse, gap - lse, p_big, p_small


REWARD_UNIT = 0  # r_t = 1 on every step, the terminal one included (CartPole; the paper)
REWARD_TERMINAL = 1  # r_t = 0, and on the last step −1 if the pole fell, +1 if the cap was reached


@nb.njit(cache=True, inline="always", error_model="numpy")
def step_reward(reward_kind, t, steps, term):
    """r_t of an episode of ``steps`` steps that ended by a fall (``term``) or by the cap."""
    if reward_kind == REWARD_UNIT:
        return 1.0
    if t < steps - 1:
        return 0.0
    return -1.0 if term else 1.0


@nb.njit(cache=True, nogil=True, error_model="numpy")  # once per episode: a call, kept out of the hot step
def episode_gradient(
    lane, traj, steps, term, v_boot, theta, gamma, lam, beta, reward_kind, n_step, mean_loss, grad_out
):
    """Backward sweep over one stored episode: writes g of eqs. 15–18 into grad_out[lane].

    θ' is read in the kernel layout (:data:`KERNEL_ORDER`); g is written in the canonical one.
    Reading knobs (:class:`pgc.a3c.hyper.A3CHyperparams`): ``reward_kind`` (:data:`REWARD_UNIT`: r_t = 1,
    the paper; :data:`REWARD_TERMINAL`: 0 per step and ±1 on the last one), ``n_step`` (0: the whole
    episode, eq. 18; n: n-step returns bootstrapped with V(s_{t+n})), ``mean_loss`` (g / T)."""
    dim = theta.shape[1]
    biased = dim == DIM_BIASED
    w = np.zeros(DIM_BIASED)  # θ' and g as fresh local arrays: no aliasing, so the loops over j vectorise
    g = np.zeros(DIM_BIASED)  # bias entries accumulate always and are read out only with biases
    hidden = np.empty(16)
    values = np.empty(steps) if n_step > 0 else np.empty(0)  # V(s_t), read by the n-step targets
    for k in range(dim):
        w[k] = theta[lane, k]
    target = v_boot
    for t in range(steps - 1, -1, -1):
        if n_step == 0:
            target = step_reward(reward_kind, t, steps, term) + gamma * target  # eq. 18
        s0 = traj[lane, t, 0]
        s1 = traj[lane, t, 1]
        s2 = traj[lane, t, 2]
        s3 = traj[lane, t, 3]
        a = int(traj[lane, t, 4])
        if biased:
            for j in range(16):  # forward pass again (5 numbers a step stored, not 16 activations)
                hidden[j] = w[j] * s0 + w[16 + j] * s1 + w[32 + j] * s2 + w[48 + j] * s3 + w[112 + j]
        else:
            for j in range(16):
                hidden[j] = w[j] * s0 + w[16 + j] * s1 + w[32 + j] * s2 + w[48 + j] * s3
        z0 = 0.0
        z1 = 0.0
        v = 0.0
        for j in range(16):
            h = hidden[j] if hidden[j] > 0.0 else 0.0
            z0 += w[64 + j] * h
            z1 += w[80 + j] * h
            v += w[96 + j] * h
        if biased:
            z0 += w[128]
            z1 += w[129]
            v += w[130]
        if n_step > 0:  # n-step return: Σ_{k<m} γ^k r_{t+k} + γ^m V(s_{t+m}), m = min(n, T − t)
            values[t] = v
            m = min(n_step, steps - t)
            target = v_boot if t + m >= steps else values[t + m]
            for k in range(m - 1, -1, -1):
                target = step_reward(reward_kind, t + k, steps, term) + gamma * target
        logp0, logp1, p0, p1 = softmax2(z0, z1)
        entropy = -(p0 * logp0 + p1 * logp1)  # eq. 13
        adv = target - v  # eq. 12 (a constant for the gradient)
        # upstream gradient on the logits and the value
        dz0 = adv * (p0 - (1.0 if a == 0 else 0.0)) + beta * p0 * (logp0 + entropy)
        dz1 = adv * (p1 - (1.0 if a == 1 else 0.0)) + beta * p1 * (logp1 + entropy)
        dv = -2.0 * lam * adv
        for j in range(16):
            p = hidden[j]
            h = p if p > 0.0 else 0.0
            g[64 + j] += dz0 * h
            g[80 + j] += dz1 * h
            g[96 + j] += dv * h
            dh = (w[64 + j] * dz0 + w[80 + j] * dz1 + w[96 + j] * dv) if p > 0.0 else 0.0
            g[j] += dh * s0
            g[16 + j] += dh * s1
            g[32 + j] += dh * s2
            g[48 + j] += dh * s3
            g[112 + j] += dh  # b(c) (read out only with biases)
        g[128] += dz0
        g[129] += dz1
        g[130] += dv
    norm = 1.0 / steps if mean_loss else 1.0  # loss averaged over the episode's steps instead of summed
    for j in range(16):  # back to the canonical layout: θ(c)[j, i] at 4j + i
        for i in range(4):
            grad_out[lane, 4 * j + i] = g[16 * i + j] * norm
    for k in range(64, dim):
        grad_out[lane, k] = g[k] * norm


@nb.njit(cache=True, inline="always", error_model="numpy")
def finish_episode(
    lane,
    traj,
    steps,
    term,
    x,
    x_dot,
    th,
    th_dot,
    theta,
    gamma,
    lam,
    beta,
    bootstrap_truncated,
    reward_kind,
    n_step,
    mean_loss,
    grad_out,
):
    """Episode over: bootstrap value V_T (eq. 18) and the backward sweep into grad_out[lane]."""
    v_boot = 0.0
    if (not term) and bootstrap_truncated:
        _, _, v_boot = forward(theta, lane, x, x_dot, th, th_dot)
    episode_gradient(lane, traj, steps, term, v_boot, theta, gamma, lam, beta, reward_kind, n_step, mean_loss, grad_out)
