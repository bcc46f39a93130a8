"""Compiled core: CartPole physics + policy + online A3C gradient, and whole trials of Algorithm 1.

A lane is one agent playing one episode with its own parameter copy θ' (d = 112 floats, or 131 with
biases; in the kernel
layout :data:`KERNEL_ORDER`) and its own physics row (:mod:`pgc.env`). Two drivers share the same
inlined pieces (forward pass, physics step, backward sweep):

* :func:`advance` — many lanes at one fixed model each, tick by tick until some episode ends
  (:class:`pgc.rollout.LaneEngine`: clean gradients for the auditor and the attacker);
* :func:`run_trial` — one whole trial: W workers, the built-in mechanisms (:func:`privatize_row`,
  the compiled twin of :mod:`pgc.mechanisms` on one row), the buffer and eq. 22, the transcript.

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
0 to terminal states, §2.2). ``tests/test_gradient.py`` checks g against torch autograd on eqs. 15–18.

Biases (the reading knob ``A3CHyperparams.biases``) are told by θ's width: a lane's θ' of 131
entries adds b(c), b(p), b(v) to the three layers (:mod:`pgc.model`), and its gradient has 131 entries.

The compiled entry points release the GIL (``nogil=True``): a trial runs for seconds in one call, and
the threads beside it (a tuning worker's heartbeat, which tells the study that its trial is alive)
must keep running meanwhile.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .env import THETA_THRESHOLD, X_THRESHOLD
from .mechanism_codes import (MECH_EXTERNAL, MECH_GAUSSIAN, MECH_LAPLACE, MECH_LAPLACE_SECURE,  # noqa: F401
                              MECH_NONE, MECH_PRS, SNAP_BOUND_SCALES)
from .model import DIM, DIM_BIASED

TRAJ_FIELDS = 5  # s_t (4 numbers) and a_t per stored step

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
def _forward(theta, row, s0, s1, s2, s3):
    """Returns (z0, z1, v): policy logits and value of state s at θ[row] (kernel layout)."""
    z0 = 0.0
    z1 = 0.0
    v = 0.0
    if theta.shape[1] == DIM_BIASED:  # Dense layers with biases (θ[112:131], canonical places)
        for j in range(16):
            p = theta[row, j] * s0 + theta[row, 16 + j] * s1 + theta[row, 32 + j] * s2 + theta[row, 48 + j] * s3 \
                + theta[row, 112 + j]
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
def _softmax2(z0, z1):
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
def _reward(reward_kind, t, steps, term):
    """r_t of an episode of ``steps`` steps that ended by a fall (``term``) or by the cap."""
    if reward_kind == REWARD_UNIT:
        return 1.0
    if t < steps - 1:
        return 0.0
    return -1.0 if term else 1.0


@nb.njit(cache=True, nogil=True, error_model="numpy")  # once per episode: a call, kept out of the hot step
def _episode_gradient(lane, traj, steps, term, v_boot, theta, gamma, lam, beta, reward_kind, n_step, mean_loss,
                      grad_out):
    """Backward sweep over one stored episode: writes g of eqs. 15–18 into grad_out[lane].

    θ' is read in the kernel layout (:data:`KERNEL_ORDER`); g is written in the canonical one.
    Reading knobs (:class:`pgc.rollout.A3CHyperparams`): ``reward_kind`` (:data:`REWARD_UNIT`: r_t = 1,
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
            target = _reward(reward_kind, t, steps, term) + gamma * target  # eq. 18
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
                target = _reward(reward_kind, t + k, steps, term) + gamma * target
        logp0, logp1, p0, p1 = _softmax2(z0, z1)
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
def _physics_step(physics, row, s0, s1, s2, s3, a):
    """CartPole Euler step, same operations and order as gymnasium's ``CartPoleEnv.step``.

    Returns the next state and whether the pole fell / the cart left the track."""
    gravity = physics[row, 0]
    masscart = physics[row, 1]
    masspole = physics[row, 2]
    length = physics[row, 3]
    force_mag = physics[row, 4]
    tau = physics[row, 5]
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
    term = x < -X_THRESHOLD or x > X_THRESHOLD or th < -THETA_THRESHOLD or th > THETA_THRESHOLD
    return x, x_dot, th, th_dot, term


@nb.njit(cache=True, inline="always", error_model="numpy")
def _store_step(traj, lane, t, s0, s1, s2, s3, a):
    traj[lane, t, 0] = s0
    traj[lane, t, 1] = s1
    traj[lane, t, 2] = s2
    traj[lane, t, 3] = s3
    traj[lane, t, 4] = a


@nb.njit(cache=True, inline="always", error_model="numpy")
def _finish_episode(lane, traj, steps, term, x, x_dot, th, th_dot, theta, gamma, lam, beta,
                    bootstrap_truncated, reward_kind, n_step, mean_loss, grad_out):
    """Episode over: bootstrap value V_T (eq. 18) and the backward sweep into grad_out[lane]."""
    v_boot = 0.0
    if (not term) and bootstrap_truncated:
        _, _, v_boot = _forward(theta, lane, x, x_dot, th, th_dot)
    _episode_gradient(lane, traj, steps, term, v_boot, theta, gamma, lam, beta, reward_kind, n_step, mean_loss,
                      grad_out)


@nb.njit(cache=True, inline="always", error_model="numpy")
def _play(lane, a, t, state, physics, traj, cap):
    """Lane plays action a at its step t: store (s_t, a_t) and take the CartPole step.

    Returns (episode over, pole fell, s_{t+1}). The caller runs :func:`_finish_episode` when the
    episode is over: called from here, inlined into a hot loop, its array arguments would be
    reference-counted on every step, not once per episode."""
    s0 = state[lane, 0]
    s1 = state[lane, 1]
    s2 = state[lane, 2]
    s3 = state[lane, 3]
    _store_step(traj, lane, t, s0, s1, s2, s3, a)
    x, x_dot, th, th_dot, term = _physics_step(physics, lane, s0, s1, s2, s3, a)
    state[lane, 0] = x
    state[lane, 1] = x_dot
    state[lane, 2] = th
    state[lane, 3] = th_dot
    return term or t + 1 >= cap, term, x, x_dot, th, th_dot


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _advance(max_ticks, uniforms, state, elapsed, theta, physics, alpha, traj, active,
             cap, gamma, lam, beta, bootstrap_truncated, sample_actions, reward_kind, n_step, mean_loss,
             grad_out, done, terminated, actions):
    n_lanes = state.shape[0]
    for tick in range(max_ticks):
        any_done = False
        u_explore = uniforms[tick, 0]
        u_action = uniforms[tick, 1]
        for lane in range(n_lanes):
            done[lane] = False
            if not active[lane]:
                continue
            z0, z1, _ = _forward(theta, lane, state[lane, 0], state[lane, 1], state[lane, 2], state[lane, 3])
            # action (§4): with probability α uniformly random; otherwise argmax π (Alg. 1; ties -> 0 as
            # numpy's argmax) or, with ``sample_actions``, a draw from π (the usual A3C actor)
            if u_explore[lane] < alpha[lane]:
                a = 0 if u_action[lane] < 0.5 else 1
            elif sample_actions:
                _, logp1, _, _ = _softmax2(z0, z1)
                a = 1 if u_action[lane] < math.exp(logp1) else 0
            else:
                a = 0 if z0 >= z1 else 1
            actions[lane] = a
            t = elapsed[lane]
            elapsed[lane] = t + 1
            over, term, x, x_dot, th, th_dot = _play(lane, a, t, state, physics, traj, cap)
            if over:
                _finish_episode(lane, traj, t + 1, term, x, x_dot, th, th_dot, theta, gamma, lam, beta,
                                bootstrap_truncated, reward_kind, n_step, mean_loss, grad_out)
                done[lane] = True
                any_done = True
                terminated[lane] = term
        if any_done:
            return tick + 1
    return max_ticks


def advance(max_ticks, uniforms, state, elapsed, theta, physics, alpha, traj, active,
            cap, gamma, lam, beta, bootstrap_truncated, sample_actions, grad_out, done, terminated, actions,
            reward_kind=REWARD_UNIT, n_step=0, mean_loss=False):
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
                    cap, gamma, lam, beta, bootstrap_truncated, sample_actions, reward_kind, n_step, mean_loss,
                    grad_out, done, terminated, actions)


# ---------------------------------------------------------------------------------------------
# Built-in mechanisms, one submission at a time (the trainer's compiled fast path)
# ---------------------------------------------------------------------------------------------
# Same arithmetic and the same draws, in the same order, as the numpy implementations in
# :mod:`pgc.mechanisms` applied to a single row; ``tests/test_trainer.py`` checks that a trial run
# with the fast path equals the same trial run through the public Protocol.



@nb.njit(cache=True, inline="always", error_model="numpy")
def _l1_norm(g):
    """||g||_1 summed in the order of numpy's pairwise ``np.abs(g).sum()`` for d ≤ 128 (eight
    running sums, combined as a tree, then the d mod 8 tail), so the clip is bit for bit numpy's."""
    d = g.shape[0]
    if d < 8 or d > 128:
        total = 0.0
        for j in range(d):
            total += abs(g[j])
        return total
    r0 = abs(g[0])
    r1 = abs(g[1])
    r2 = abs(g[2])
    r3 = abs(g[3])
    r4 = abs(g[4])
    r5 = abs(g[5])
    r6 = abs(g[6])
    r7 = abs(g[7])
    full = d - d % 8
    for i in range(8, full, 8):
        r0 += abs(g[i])
        r1 += abs(g[i + 1])
        r2 += abs(g[i + 2])
        r3 += abs(g[i + 3])
        r4 += abs(g[i + 4])
        r5 += abs(g[i + 5])
        r6 += abs(g[i + 6])
        r7 += abs(g[i + 7])
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(full, d):
        total += abs(g[j])
    return total


@nb.njit(cache=True, inline="always", error_model="numpy")
def _sum_squares_block(g, start, stop):
    """Σ g[j]² over [start, stop) (at most 128 entries) in the order of numpy's pairwise sum: eight
    running sums combined as a tree, then the tail."""
    n = stop - start
    if n < 8:
        total = 0.0
        for j in range(start, stop):
            total += g[j] * g[j]
        return total
    r0 = g[start] * g[start]
    r1 = g[start + 1] * g[start + 1]
    r2 = g[start + 2] * g[start + 2]
    r3 = g[start + 3] * g[start + 3]
    r4 = g[start + 4] * g[start + 4]
    r5 = g[start + 5] * g[start + 5]
    r6 = g[start + 6] * g[start + 6]
    r7 = g[start + 7] * g[start + 7]
    full = start + n - n % 8
    for i in range(start + 8, full, 8):
        r0 += g[i] * g[i]
        r1 += g[i + 1] * g[i + 1]
        r2 += g[i + 2] * g[i + 2]
        r3 += g[i + 3] * g[i + 3]
        r4 += g[i + 4] * g[i + 4]
        r5 += g[i + 5] * g[i + 5]
        r6 += g[i + 6] * g[i + 6]
        r7 += g[i + 7] * g[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(full, stop):
        total += g[j] * g[j]
    return total


@nb.njit(cache=True, inline="always", error_model="numpy")
def _l2_norm(g):
    """||g||_2 with the squares summed in the order of numpy's pairwise ``np.square(g).sum()`` for
    d ≤ 256 (blocks of at most 128; above 128 numpy splits at a multiple of 8 below d/2)."""
    d = g.shape[0]
    if d <= 128:
        return math.sqrt(_sum_squares_block(g, 0, d))
    if d <= 256:
        half = d // 2
        half -= half % 8
        return math.sqrt(_sum_squares_block(g, 0, half) + _sum_squares_block(g, half, d))
    total = 0.0
    for j in range(d):
        total += g[j] * g[j]
    return math.sqrt(total)


@nb.njit(cache=True, inline="always", error_model="numpy")
def _l2_clip_row(g, out, bound):
    """The Gaussian mechanism's clip: g / max{1, ||g||_2 / bound}."""
    scale = max(1.0, _l2_norm(g) / bound)
    for j in range(g.shape[0]):
        out[j] = g[j] / scale


@nb.njit(cache=True, inline="always", error_model="numpy")
def _l1_clip_row(g, out, bound):
    """Eq. 19: g / max{1, ||g||_1 / bound}."""
    scale = max(1.0, _l1_norm(g) / bound)
    for j in range(g.shape[0]):
        out[j] = g[j] / scale


@nb.njit(cache=True, inline="always", error_model="numpy")
def _laplace_row(gen, scale, d):
    """d draws of Lap(0, scale), bit for bit numpy's ``Generator.laplace`` (same uniforms, same
    formula: U ≥ ½ → −scale·log(2 − U − U), else scale·log(U + U), U = 0 redrawn) but with the
    branch turned into selects: half of the branches would mispredict."""
    u = np.empty(d)
    for j in range(d):
        x = gen.random()
        while x == 0.0:
            x = gen.random()
        u[j] = x
    for j in range(d):
        x = u[j]
        upper = x >= 0.5
        u[j] = (-scale if upper else scale) * math.log((2.0 - x - x) if upper else (x + x))
    return u


@nb.njit(cache=True, nogil=True, error_model="numpy")
def privatize_row(kind, g, out, gen, epsilon, clip, reduced_dim, scale_param, matrix):
    """Write mechanism(g) into ``out``; g is already sanitized (the non-finite rule).

    kind: MECH_NONE (clip = inf: unclipped), MECH_LAPLACE (Alg. 2), MECH_LAPLACE_SECURE (snapping
    to the grid ``scale_param``), MECH_PRS (Alg. 3 with d̂ = ``reduced_dim``; ``matrix`` is (d̂, d)
    scratch), MECH_GAUSSIAN (L2 clip to C/2, then N(0, σ²) per coordinate, σ = ``scale_param``).
    """
    d = g.shape[0]
    if kind == MECH_NONE:
        if math.isinf(clip):
            for j in range(d):
                out[j] = g[j]
        else:
            _l1_clip_row(g, out, clip / 2.0)
    elif kind == MECH_LAPLACE or kind == MECH_LAPLACE_SECURE:
        _l1_clip_row(g, out, clip / 2.0)  # eq. 19, sensitivity C (eq. 20)
        scale = clip / epsilon  # eq. 21
        noise = _laplace_row(gen, scale, d)
        if kind == MECH_LAPLACE:
            for j in range(d):
                out[j] = out[j] + noise[j]
        else:  # Mironov's snapping: clamp, add noise, round to the grid, clamp
            bound = clip / 2.0 + SNAP_BOUND_SCALES * scale
            for j in range(d):
                x = min(max(out[j], -bound), bound) + noise[j]
                out[j] = min(max(np.rint(x / scale_param) * scale_param, -bound), bound)
    elif kind == MECH_GAUSSIAN:
        _l2_clip_row(g, out, clip / 2.0)
        for j in range(d):  # numpy's normal(0, σ): 0 + σ·z, z by the ziggurat, in coordinate order
            out[j] = out[j] + gen.normal(0.0, scale_param)
    else:  # MECH_PRS
        sqrt3 = math.sqrt(3.0)
        for r in range(reduced_dim):  # eq. 5: fresh Achlioptas matrix
            for j in range(d):
                u = gen.random()
                matrix[r, j] = -sqrt3 if u < 1.0 / 6.0 else (sqrt3 if u < 1.0 / 3.0 else 0.0)
        e = epsilon / reduced_dim
        low = 1.0 / (1.0 + math.exp(e))  # expit(-ε')
        slope = math.tanh(e / 2.0)
        for j in range(d):
            out[j] = 0.0
        signs = np.empty(reduced_dim)
        for r in range(reduced_dim):
            ur = 0.0
            for j in range(d):
                ur += matrix[r, j] * g[j]
            ur = min(max(ur, -clip), clip)  # eq. 23
            signs[r] = low + (ur + clip) / (2.0 * clip) * slope  # eq. 24: P(ũ_r = +C)
        for r in range(reduced_dim):
            sign = clip if gen.random() < signs[r] else -clip
            for j in range(d):
                out[j] += matrix[r, j] * sign  # Mᵀũ


# ---------------------------------------------------------------------------------------------
# One whole trial of Algorithm 1 (W workers, buffer, eq. 22) in compiled code
# ---------------------------------------------------------------------------------------------

# trial counters (int64 array ``ctr``)
C_TICK, C_SUBMITTED, C_VERSION, C_BUF_COUNT, C_AGENTS, C_STEPS, C_NONFINITE, C_KEPT, C_FIN_POS, C_N_FIN, \
    C_DONE, C_STARTED, C_TICK_VERSION, C_PREPARED, C_PENDING_BAD = range(15)
N_COUNTERS = 15
# integer settings (``icfg``)
I_WORKERS, I_SUBMISSIONS, I_ROUNDS, I_BUFFER, I_WINDOW, I_STOP_AT_SUCCESS, I_ZERO_INFO, I_MECH, I_REDUCED_DIM, \
    I_CAP, I_BOOTSTRAP, I_SAMPLE, I_RECORD, I_PROTECT_SCORE, I_PROTECT_TIMING, I_PROTECT_ORDER, \
    I_REWARD, I_N_STEP, I_MEAN_LOSS, I_OPTIMIZER, I_ALPHA_CLOCK = range(21)
N_ICFG = 21
# float settings (``fcfg``)
F_LR, F_EXPLORE_START, F_EXPLORE_DECAY, F_TARGET, F_EPSILON, F_CLIP, F_MECH_SCALE, F_GAMMA, F_LAM, F_BETA, \
    F_SCORE_SCALE, F_RMS_DECAY, F_RMS_EPS = range(13)
N_FCFG = 13
OPTIMIZER_SGD = 0  # eq. 22: θ ← θ − η·mean(B)
OPTIMIZER_RMSPROP = 1  # s ← ρs + (1−ρ)·mean(B)², θ ← θ − η·mean(B)/(√s + eps) (Keras RMSprop)
ALPHA_PER_AGENT = 0  # §4: α = max{0, 0.5 − n/1800}, n the agent's index in start order
ALPHA_PER_STEP = 1  # the same line with n the global environment-step count (updated every step)
# per-lane integers (``lane_i`` columns)
L_ELAPSED, L_AGENT, L_ROUND, L_VERSION, L_START, L_ACTIVE, L_TERMINATED, L_WAITING = range(8)
N_LANE_I = 8  # L_WAITING: fixed schedule (``timing``): the episode is over, the lane waits for start + cap
# recorded integers per submission (``rec_i`` columns)
R_AGENT, R_ROUND, R_WORKER, R_VERSION, R_START, R_ARRIVAL, R_TERMINATED, R_NONFINITE = range(8)
N_REC_I = 8

STATUS_DONE = 0
STATUS_NEED_MECHANISM = 1  # ``pending`` holds the sanitized clean gradient; pass the noisy one back
STATUS_PAUSED = 2


@nb.njit(cache=True, inline="always", error_model="numpy")
def _start_episode(w, new_agent, icfg, fcfg, ctr, agent_psi, base_physics, theta, lane_i, lane_state,
                   lane_phys, lane_alpha, lane_theta, env_gen):
    """Alg. 1: worker w starts an episode; its agent copies θ' ← θ now."""
    if new_agent:
        lane_i[w, L_AGENT] = ctr[C_AGENTS]  # agents are numbered in start order
        ctr[C_AGENTS] += 1
        lane_i[w, L_ROUND] = 0
    else:  # §3.2.1: the same agent's next round
        lane_i[w, L_ROUND] += 1
    agent = lane_i[w, L_AGENT]
    for f in range(base_physics.shape[0]):
        lane_phys[w, f] = base_physics[f]
    lane_phys[w, 0] = agent_psi[agent]  # ψ_n
    lane_alpha[w] = max(0.0, fcfg[F_EXPLORE_START] - agent / fcfg[F_EXPLORE_DECAY])  # §4: α = max{0, 0.5 − n/1800}
    lane_i[w, L_VERSION] = ctr[C_VERSION]
    lane_i[w, L_START] = ctr[C_TICK]
    lane_i[w, L_ELAPSED] = 0
    lane_i[w, L_ACTIVE] = 1
    for j in range(4):  # gymnasium's reset: U(-0.05, 0.05)^4
        lane_state[w, j] = env_gen.uniform(-0.05, 0.05)
    for j in range(16):  # θ' in the kernel layout (KERNEL_ORDER)
        for i in range(4):
            lane_theta[w, 16 * i + j] = theta[4 * j + i]
    for k in range(64, theta.shape[0]):
        lane_theta[w, k] = theta[k]


@nb.njit(cache=True, inline="always", error_model="numpy")
def _laplace_scalar(gen, scale):
    """One draw of Lap(0, scale), numpy's ``Generator.laplace`` formula (U = 0 redrawn)."""
    x = gen.random()
    while x == 0.0:
        x = gen.random()
    if x >= 0.5:
        return -scale * math.log(2.0 - x - x)
    return scale * math.log(x + x)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def run_trial(env_gen, mech_gen, score_gen, order_gen, icfg, fcfg, agent_psi, base_physics, theta, buf_sum, opt_state,
              ctr,
              lane_i, lane_state, lane_phys, lane_alpha, lane_theta, traj, lane_grad, fin,
              pending, noisy, prs_matrix, pause_after,
              scores, reported, rec_i, rec_psi, rec_grad, kept_versions, kept_thetas):
    """Run (or resume) one trial of Algorithm 1 until it ends, needs a mechanism, or pauses.

    Asynchrony: the environment-step clock. Each tick every worker plays one step; the submissions
    arriving in one tick are aggregated in worker order; then every finished worker copies the
    resulting θ for its next agent. Each submission: non-finite rule, (zero-information control),
    the mechanism, the buffer; when it holds MAX_BUF submissions, eq. 22: θ ← θ − η·mean(B).

    All state lives in the arrays passed in, so a call can return in the middle of a tick and the
    next call resumes there: with ``icfg[I_MECH] == MECH_EXTERNAL`` it returns STATUS_NEED_MECHANISM
    for every submission (``pending`` = clean row; the caller writes the noisy row into ``noisy``);
    with ``pause_after > 0`` it returns STATUS_PAUSED after about that many submissions.

    Mitigations (:mod:`pgc.protect`; all off by default, and then none of their generators is drawn
    from): ``I_PROTECT_SCORE`` — the reported score is clip(ζ, 0, cap) + Lap(``F_SCORE_SCALE``)
    from ``score_gen`` (written to ``reported``; ``scores`` keeps the true ζ), and the stopping rule
    reads the reported scores; ``I_PROTECT_TIMING`` — fixed schedule: a lane whose episode ends
    before the cap waits (plays no steps) and submits in the tick at which start + cap is reached;
    ``I_PROTECT_ORDER`` — shuffler: the tick's arrivals are permuted uniformly with ``order_gen``
    (the restarts follow the same order) and the recorded worker is −1.
    """
    n_workers = icfg[I_WORKERS]
    n_submissions = icfg[I_SUBMISSIONS]
    buffer_size = icfg[I_BUFFER]
    kind = icfg[I_MECH]
    record = icfg[I_RECORD] != 0
    cap = icfg[I_CAP]
    sample_actions = icfg[I_SAMPLE] != 0
    bootstrap = icfg[I_BOOTSTRAP] != 0
    protect_score = icfg[I_PROTECT_SCORE] != 0
    protect_timing = icfg[I_PROTECT_TIMING] != 0
    protect_order = icfg[I_PROTECT_ORDER] != 0
    reward_kind = icfg[I_REWARD]
    n_step = icfg[I_N_STEP]
    mean_loss = icfg[I_MEAN_LOSS] != 0
    rmsprop = icfg[I_OPTIMIZER] == OPTIMIZER_RMSPROP
    alpha_per_step = icfg[I_ALPHA_CLOCK] == ALPHA_PER_STEP
    gamma = fcfg[F_GAMMA]
    lam = fcfg[F_LAM]
    beta = fcfg[F_BETA]
    d = theta.shape[0]
    if ctr[C_STARTED] == 0:
        ctr[C_STARTED] = 1
        for w in range(n_workers):
            _start_episode(w, True, icfg, fcfg, ctr, agent_psi, base_physics, theta, lane_i, lane_state,
                           lane_phys, lane_alpha, lane_theta, env_gen)
        if record:
            kept_versions[0] = 0
            for j in range(d):
                kept_thetas[0, j] = theta[j]
            ctr[C_KEPT] = 1
    submitted_this_call = 0
    while ctr[C_DONE] == 0:
        # ---- every worker plays one step -------------------------------------------------
        if ctr[C_FIN_POS] >= ctr[C_N_FIN]:
            n_fin = 0
            for w in range(n_workers):
                if lane_i[w, L_ACTIVE] == 0:
                    # fixed schedule: a waiting lane submits in the tick that reaches start + cap
                    if lane_i[w, L_WAITING] != 0 and ctr[C_TICK] + 1 >= lane_i[w, L_START] + cap:
                        lane_i[w, L_WAITING] = 0
                        fin[n_fin] = w
                        n_fin += 1
                    continue
                z0, z1, _ = _forward(lane_theta, w, lane_state[w, 0], lane_state[w, 1], lane_state[w, 2],
                                     lane_state[w, 3])
                if alpha_per_step:
                    lane_alpha[w] = max(0.0, fcfg[F_EXPLORE_START] - ctr[C_STEPS] / fcfg[F_EXPLORE_DECAY])
                # §4: with probability α a uniformly random action; otherwise argmax π (Alg. 1,
                # ties -> 0) or, with sample_actions, a draw from π
                if lane_alpha[w] > 0.0 and env_gen.random() < lane_alpha[w]:
                    a = 0 if env_gen.random() < 0.5 else 1
                elif sample_actions:
                    _, logp1, _, _ = _softmax2(z0, z1)
                    a = 1 if env_gen.random() < math.exp(logp1) else 0
                else:
                    a = 0 if z0 >= z1 else 1
                t = lane_i[w, L_ELAPSED]
                lane_i[w, L_ELAPSED] = t + 1
                ctr[C_STEPS] += 1
                over, term, x, x_dot, th, th_dot = _play(w, a, t, lane_state, lane_phys, traj, cap)
                if over:
                    _finish_episode(w, traj, t + 1, term, x, x_dot, th, th_dot, lane_theta, gamma, lam, beta,
                                    bootstrap, reward_kind, n_step, mean_loss, lane_grad)
                    lane_i[w, L_ACTIVE] = 0
                    lane_i[w, L_TERMINATED] = 1 if term else 0
                    if protect_timing and ctr[C_TICK] + 1 < lane_i[w, L_START] + cap:
                        lane_i[w, L_WAITING] = 1  # ended early: wait for the fixed submission tick
                    else:
                        fin[n_fin] = w
                        n_fin += 1
            ctr[C_TICK] += 1
            if protect_order:  # shuffler: a uniformly random order of this tick's arrivals
                for i in range(n_fin - 1, 0, -1):
                    k = min(int(order_gen.random() * (i + 1)), i)
                    tmp = fin[i]
                    fin[i] = fin[k]
                    fin[k] = tmp
            ctr[C_FIN_POS] = 0
            ctr[C_N_FIN] = n_fin
            ctr[C_TICK_VERSION] = ctr[C_VERSION]
            if n_fin == 0:
                continue
        # ---- the tick's submissions, in worker order ----------------------------------------
        while ctr[C_FIN_POS] < ctr[C_N_FIN] and ctr[C_DONE] == 0:
            w = fin[ctr[C_FIN_POS]]
            if ctr[C_PREPARED] == 0:  # non-finite rule, then the zero-information control
                bad = False
                for j in range(d):
                    pending[j] = lane_grad[w, j]
                    if not math.isfinite(pending[j]):
                        bad = True
                if bad or icfg[I_ZERO_INFO] != 0:
                    for j in range(d):
                        pending[j] = 0.0
                if bad:
                    ctr[C_NONFINITE] += 1
                ctr[C_PENDING_BAD] = 1 if bad else 0
                ctr[C_PREPARED] = 1
                if kind == MECH_EXTERNAL:
                    return STATUS_NEED_MECHANISM
            if kind != MECH_EXTERNAL:  # Alg. 2 / Alg. 3
                privatize_row(kind, pending, noisy, mech_gen, fcfg[F_EPSILON], fcfg[F_CLIP], icfg[I_REDUCED_DIM],
                              fcfg[F_MECH_SCALE], prs_matrix)
            ctr[C_PREPARED] = 0
            # aggregator: buffer, then eq. 22
            for j in range(d):
                buf_sum[j] += noisy[j]
            ctr[C_BUF_COUNT] += 1
            if ctr[C_BUF_COUNT] == buffer_size:
                if rmsprop:  # the aggregator's RMSprop on mean(B) (a reading knob; eq. 22 is SGD)
                    rho = fcfg[F_RMS_DECAY]
                    for j in range(d):
                        mean_g = buf_sum[j] / buffer_size
                        opt_state[j] = rho * opt_state[j] + (1.0 - rho) * mean_g * mean_g
                        theta[j] -= fcfg[F_LR] * mean_g / (math.sqrt(opt_state[j]) + fcfg[F_RMS_EPS])
                        buf_sum[j] = 0.0
                else:
                    step = fcfg[F_LR] / buffer_size
                    for j in range(d):
                        theta[j] -= step * buf_sum[j]  # eq. 22: θ ← θ − η·mean(B)
                        buf_sum[j] = 0.0
                ctr[C_BUF_COUNT] = 0
                ctr[C_VERSION] += 1
            n = ctr[C_SUBMITTED]
            scores[n] = lane_i[w, L_ELAPSED]
            if protect_score:  # the score's own ε-LDP mechanism, before it leaves the agent
                reported[n] = min(max(float(lane_i[w, L_ELAPSED]), 0.0), float(cap)) + \
                    _laplace_scalar(score_gen, fcfg[F_SCORE_SCALE])
            if record:
                rec_i[n, R_AGENT] = lane_i[w, L_AGENT]
                rec_i[n, R_ROUND] = lane_i[w, L_ROUND]
                rec_i[n, R_WORKER] = -1 if protect_order else w
                rec_i[n, R_VERSION] = lane_i[w, L_VERSION]
                rec_i[n, R_START] = lane_i[w, L_START]
                rec_i[n, R_ARRIVAL] = ctr[C_TICK]
                rec_i[n, R_TERMINATED] = lane_i[w, L_TERMINATED]
                rec_i[n, R_NONFINITE] = ctr[C_PENDING_BAD]
                rec_psi[n] = lane_phys[w, 0]
                for j in range(d):
                    rec_grad[n, j] = noisy[j]
            n += 1
            ctr[C_SUBMITTED] = n
            ctr[C_FIN_POS] += 1
            submitted_this_call += 1
            # the trial ends after its N-th submission, or with stop_at_success right at its first
            # success (eq. 26): later arrivals of the same tick are not applied
            if n >= n_submissions:
                ctr[C_DONE] = 1
            elif icfg[I_STOP_AT_SUCCESS] != 0 and n >= icfg[I_WINDOW]:
                m = icfg[I_WINDOW]
                total = 0.0
                if protect_score:
                    for i in range(n - m, n):
                        total += reported[i]
                else:
                    for i in range(n - m, n):
                        total += scores[i]
                if total / m >= fcfg[F_TARGET]:
                    ctr[C_DONE] = 1
        # ---- end of the tick: keep θ, finished workers start new agents --------------------
        if record and ctr[C_VERSION] != ctr[C_TICK_VERSION]:
            kept_versions[ctr[C_KEPT]] = ctr[C_VERSION]
            for j in range(d):
                kept_thetas[ctr[C_KEPT], j] = theta[j]
            ctr[C_KEPT] += 1
        if ctr[C_DONE] == 0:
            for i in range(ctr[C_N_FIN]):
                w = fin[i]
                new_agent = lane_i[w, L_ROUND] + 1 >= icfg[I_ROUNDS]
                _start_episode(w, new_agent, icfg, fcfg, ctr, agent_psi, base_physics, theta, lane_i, lane_state,
                               lane_phys, lane_alpha, lane_theta, env_gen)
        ctr[C_FIN_POS] = 0
        ctr[C_N_FIN] = 0
        if pause_after > 0 and submitted_this_call >= pause_after and ctr[C_DONE] == 0:
            return STATUS_PAUSED
    return STATUS_DONE


def warm_up() -> None:
    """Compile (or load from cache) the kernel on a tiny batch."""
    n = 2
    advance(1, np.zeros((1, 2, n)), np.zeros((n, 4)), np.zeros(n, np.int64), np.zeros((n, DIM)), np.ones((n, 6)),
            np.zeros(n), np.zeros((n, 200, TRAJ_FIELDS)), np.ones(n, np.bool_), 200, 0.99, 0.5,
            0.01, True, False, np.zeros((n, DIM)), np.zeros(n, np.bool_), np.zeros(n, np.bool_), np.zeros(n, np.int8))
