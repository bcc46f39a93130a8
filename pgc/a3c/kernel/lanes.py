"""Many lanes at one fixed model each, tick by tick until some episode ends (the clean gradients
that :class:`pgc.a3c.rollout.LaneEngine` hands to the auditor and the attacker)."""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..model import DIM
from .network import REWARD_UNIT, finish_episode, forward, softmax2
from .physics import TRAJ_FIELDS, play_step


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _advance(
    max_ticks,
    uniforms,
    state,
    elapsed,
    theta,
    physics,
    alpha,
    traj,
    active,
    cap,
    gamma,
    lam,
    beta,
    bootstrap_truncated,
    sample_actions,
    reward_kind,
    n_step,
    mean_loss,
    grad_out,
    done,
    terminated,
    actions,
):
    n_lanes = state.shape[0]
    for tick in range(max_ticks):
        any_done = False
        u_explore = uniforms[tick, 0]
        u_action = uniforms[tick, 1]
        for lane in range(n_lanes):
            done[lane] = False
            if not active[lane]:
                continue
            z0, z1, _ = forward(theta, lane, state[lane, 0], state[lane, 1], state[lane, 2], state[lane, 3])
            # action (§4): with probability α uniformly random; otherwise argmax π (Alg. 1; ties -> 0 as
            # numpy's argmax) or, with ``sample_actions``, a draw from π (the usual A3C actor)
            if u_explore[lane] < alpha[lane]:
                a = 0 if u_action[lane] < 0.5 else 1
            elif sample_actions:
                _, logp1, _, _ = softmax2(z0, z1)
                a = 1 if u_action[lane] < math.exp(logp1) else 0
            else:
                a = 0 if z0 >= z1 else 1
            actions[lane] = a
            t = elapsed[lane]
            elapsed[lane] = t + 1
            over, term, x, x_dot, th, th_dot = play_step(lane, a, t, state, physics, traj, cap)
            if over:
                finish_episode(
                    lane,
                    traj,
                    t + 1,
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
                )
                done[lane] = True
                any_done = True
                terminated[lane] = term
        if any_done:
            return tick + 1
    return max_ticks


def advance(
    max_ticks,
    uniforms,
    state,
    elapsed,
    theta,
    physics,
    alpha,
    traj,
    active,
    cap,
    gamma,
    lam,
    beta,
    bootstrap_truncated,
    sample_actions,
    grad_out,
    done,
    terminated,
    actions,
    reward_kind=REWARD_UNIT,
    n_step=0,
    mean_loss=False,
):
    """Advance every active lane tick by tick until some lane's episode ends (or ``max_ticks``).

    ``uniforms[t, 0]`` / ``uniforms[t, 1]`` are the exploration / action draws of tick t for every
    lane. Returns the number of ticks played; finished lanes (``done``) hold their gradient in
    ``grad_out`` and their episode length in ``elapsed``; the caller resets them. Stopping at the
    first finished episode keeps the asynchronous protocol exact: the aggregator acts on every
    submission before any other lane plays its next step.

    The hot loop is one flat compiled function (a helper taking arrays would pay reference
    counting on every lane visit); parallelism comes from processes (``train_batch(processes=)``).
    """
    return _advance(
        max_ticks,
        uniforms,
        state,
        elapsed,
        theta,
        physics,
        alpha,
        traj,
        active,
        cap,
        gamma,
        lam,
        beta,
        bootstrap_truncated,
        sample_actions,
        reward_kind,
        n_step,
        mean_loss,
        grad_out,
        done,
        terminated,
        actions,
    )


def warm_up() -> None:
    """Compile (or load from cache) the kernel on a tiny batch."""
    n = 2
    advance(
        1,
        np.zeros((1, 2, n)),
        np.zeros((n, 4)),
        np.zeros(n, np.int64),
        np.zeros((n, DIM)),
        np.ones((n, 6)),
        np.zeros(n),
        np.zeros((n, 200, TRAJ_FIELDS)),
        np.ones(n, np.bool_),
        200,
        0.99,
        0.5,
        0.01,
        True,
        False,
        np.zeros((n, DIM)),
        np.zeros(n, np.bool_),
        np.zeros(n, np.bool_),
        np.zeros(n, np.int8),
    )
