"""CartPole physics of a lane, compiled: the same operations in the same order as gymnasium's
``CartPoleEnv.step`` (:func:`pgc.a3c.env.cartpole_step` is the numpy copy), with the lane's own physics
row (:data:`pgc.a3c.env.PHYSICS_FIELDS`), and the store of each step's (s_t, a_t) for the backward sweep."""

from __future__ import annotations

import math

import numba as nb

from ..env import THETA_THRESHOLD, X_THRESHOLD

TRAJ_FIELDS = 5  # s_t (4 numbers) and a_t per stored step


@nb.njit(cache=True, inline="always", error_model="numpy")
def physics_step(physics, row, s0, s1, s2, s3, a):
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
        length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass)
    )
    xacc = temp - polemass_length * thetaacc * costheta / total_mass
    x = s0 + tau * s1
    x_dot = s1 + tau * xacc
    th = s2 + tau * s3
    th_dot = s3 + tau * thetaacc
    term = x < -X_THRESHOLD or x > X_THRESHOLD or th < -THETA_THRESHOLD or th > THETA_THRESHOLD
    return x, x_dot, th, th_dot, term


@nb.njit(cache=True, inline="always", error_model="numpy")
def store_step(traj, lane, t, s0, s1, s2, s3, a):
    traj[lane, t, 0] = s0
    traj[lane, t, 1] = s1
    traj[lane, t, 2] = s2
    traj[lane, t, 3] = s3
    traj[lane, t, 4] = a


@nb.njit(cache=True, inline="always", error_model="numpy")
def play_step(lane, a, t, state, physics, traj, cap):
    """Lane plays action a at its step t: store (s_t, a_t) and take the CartPole step.

    Returns (episode over, pole fell, s_{t+1}). The caller runs :func:`finish_episode` when the
    episode is over: called from here, inlined into a hot loop, its array arguments would be
    reference-counted on every step, not once per episode."""
    s0 = state[lane, 0]
    s1 = state[lane, 1]
    s2 = state[lane, 2]
    s3 = state[lane, 3]
    store_step(traj, lane, t, s0, s1, s2, s3, a)
    x, x_dot, th, th_dot, term = physics_step(physics, lane, s0, s1, s2, s3, a)
    state[lane, 0] = x
    state[lane, 1] = x_dot
    state[lane, 2] = th
    state[lane, 3] = th_dot
    return term or t + 1 >= cap, term, x, x_dot, th, th_dot
