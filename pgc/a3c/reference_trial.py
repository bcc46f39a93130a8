"""One trial of PGC-A3C (Algorithm 1 with eq. 22) in plain Python: the reading the compiled trainer
(:func:`pgc.a3c.kernel.run_trial`) is checked against.

One straight loop, top to bottom: W workers each play one environment step per tick; an agent copies
θ' ← θ when its episode starts; when the episode ends its gradient (eqs. 12–18) is privatized by the
mechanism Q and sent; the aggregator appends it to the buffer B and, when |B| reaches MAX_BUF, applies
eq. 22, θ ← θ − η·mean(B). It draws from the same generators in the same order as the trainer, so a
trial here equals the trainer's trial with the same :class:`~pgc.a3c.config.TrainConfig` (to rounding:
the network uses numpy's matrix products; ``tests/pgc/a3c/test_reference_trial.py``).

It reads the paper's settings only: one round per agent, greedy actions with §4's exploration, r_t = 1,
whole-episode returns, SGD, no mitigations, no biases. Slow (Python per step): for small trials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pgc.errors import UserError

from .config import TrainConfig
from .env import INIT_HIGH, THETA_THRESHOLD, X_THRESHOLD
from .model import DIM, glorot_uniform_theta


@dataclass(frozen=True)
class ReferenceResult:
    theta: np.ndarray  # θ after the last submission
    scores: np.ndarray  # ζ (episode length) per submission, in arrival order
    gradients: np.ndarray  # the privatized gradient of each submission, in arrival order
    updates: int  # eq. 22 updates applied
    agent_steps: int


@dataclass
class Agent:
    """Agent n's local process (Alg. 1): its copy θ', gravity ψ_n, exploration probability α, current
    state s_{n,t} and history H_n (the states and actions so far)."""

    n: int
    theta: np.ndarray
    gravity: float
    alpha: float
    state: np.ndarray
    states: list = field(default_factory=list)
    actions: list = field(default_factory=list)


def begin_agent(n: int, theta: np.ndarray, psi: np.ndarray, c: TrainConfig, env_rng: np.random.Generator) -> Agent:
    """Agent n begins its local process: copy θ' ← θ, t ← 0, get s_{n,0} ~ U(-0.05, 0.05)^4."""
    alpha = max(0.0, c.exploration_start - n / c.exploration_decay)  # §4: α = max{0, 0.5 − n/1800}
    return Agent(n, theta.copy(), float(psi[n]), alpha, env_rng.uniform(-INIT_HIGH, INIT_HIGH, size=4))


def network(theta: np.ndarray, s: np.ndarray):
    """Policy logits z, value V(s) and hidden pre-activations of the actor-critic (§4, d = 112)."""
    w_c = theta[:64].reshape(16, 4)  # θ(c)
    w_p = theta[64:96].reshape(2, 16)  # θ(p)
    w_v = theta[96:112]  # θ(v)
    pre = w_c @ s
    h = np.maximum(pre, 0.0)  # ReLU
    return w_p @ h, w_v @ h, pre


def episode_gradient(theta: np.ndarray, states: list, actions: list, v_last: float, hyper) -> np.ndarray:
    """g = ∂L̂/∂θ' of one episode (eqs. 15–18), A_t and V̂_t held constant (semi-gradient)."""
    w_p = theta[64:96].reshape(2, 16)
    w_v = theta[96:112]
    g_c, g_p, g_v = np.zeros((16, 4)), np.zeros((2, 16)), np.zeros(16)
    target = v_last  # V̂_T: V(s_T) if cut by the cap (bootstrap), 0 if the pole fell
    for t in reversed(range(len(actions))):
        s, a = states[t], actions[t]
        target = 1.0 + hyper.gamma * target  # eq. 18 with r_t = 1
        z, v, pre = network(theta, s)
        h = np.maximum(pre, 0.0)
        log_pi = z - (z.max() + math.log(np.exp(z - z.max()).sum()))  # log softmax
        pi = np.exp(log_pi)
        entropy = -(pi * log_pi).sum()  # eq. 13
        advantage = target - v  # eq. 12
        # L̂ = −A log π(a|s) − β H(π) + λ (V̂ − V)²  (eqs. 15–17); its derivative in z and in V:
        dz = advantage * (pi - np.eye(2)[a]) + hyper.beta * pi * (log_pi + entropy)
        dv = -2.0 * hyper.lam * advantage
        g_p += np.outer(dz, h)
        g_v += dv * h
        dh = (w_p.T @ dz + w_v * dv) * (pre > 0.0)
        g_c += np.outer(dh, s)
    return np.concatenate([g_c.ravel(), g_p.ravel(), g_v])


def cartpole_step(s: np.ndarray, a: int, gravity: float, p) -> tuple[np.ndarray, bool]:
    """gymnasium's CartPole Euler step with gravity ψ_n; returns s_{t+1} and whether the pole fell."""
    x, x_dot, th, th_dot = s
    total_mass = p.masspole + p.masscart
    polemass_length = p.masspole * p.length
    force = p.force_mag if a == 1 else -p.force_mag
    costheta, sintheta = math.cos(th), math.sin(th)
    temp = (force + polemass_length * (th_dot * th_dot) * sintheta) / total_mass
    thetaacc = (gravity * sintheta - costheta * temp) / (
        p.length * (4.0 / 3.0 - p.masspole * (costheta * costheta) / total_mass)
    )
    xacc = temp - polemass_length * thetaacc * costheta / total_mass
    x, x_dot = x + p.tau * x_dot, x_dot + p.tau * xacc
    th, th_dot = th + p.tau * th_dot, th_dot + p.tau * thetaacc
    fell = x < -X_THRESHOLD or x > X_THRESHOLD or th < -THETA_THRESHOLD or th > THETA_THRESHOLD
    return np.array([x, x_dot, th, th_dot]), fell


def check_scope(c: TrainConfig) -> None:
    """Refuse settings this reading does not cover."""
    h = c.hyper
    outside = {
        "rounds": c.rounds != 1,
        "protect": bool(c.protect),
        "optimizer": c.optimizer != "sgd",
        "exploration_clock": c.exploration_clock != "agents",
        "stop_at_success": c.stop_at_success,
        "zero_information": c.zero_information,
        "hyper.biases": h.biases,
        "hyper.reward": h.reward != "unit",
        "hyper.n_step": h.n_step != 0,
        "hyper.loss_reduction": h.loss_reduction != "sum",
        "hyper.action_selection": h.action_selection != "greedy",
    }
    if any(outside.values()):
        raise UserError(
            f"the reference trial reads the paper's settings only; not: {', '.join(k for k, v in outside.items() if v)}"
        )


def run_reference_trial(config: TrainConfig) -> ReferenceResult:
    """Algorithm 1 with eq. 22 for one :class:`TrainConfig`, step by step in Python."""
    c, hyper = config, config.hyper
    check_scope(c)
    n_workers, cap, max_buf, eta = c.workers, hyper.cap, c.buffer_size, c.learning_rate

    # ---- randomness, as pgc.a3c.trainer: θ₀ and ψ_n from the seed, environment and mechanism noise
    # from two of its spawned children
    trial_rng = np.random.default_rng(np.random.SeedSequence(c.seed))
    theta = glorot_uniform_theta(trial_rng)  # "Initialize global parameters θ"
    psi = trial_rng.choice(np.asarray(c.gravities), size=c.submissions + c.workers)  # ψ_n ~ U(Ψ)
    env_rng, mech_rng, _, _ = (np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(c.seed).spawn(4))
    mechanism = c.build_mechanism()  # Q
    assert theta.shape == (DIM,)

    buffer: list[np.ndarray] = []  # "Initialize buffer B ← {}"
    scores: list[int] = []
    sent: list[np.ndarray] = []
    updates = agent_steps = 0
    workers = [begin_agent(n, theta, psi, c, env_rng) for n in range(n_workers)]  # agents 0..W−1
    next_agent = n_workers

    while True:
        # ---- every worker plays one step of its episode (Alg. 1's inner loop, one pass per tick) ----
        finished = []  # (worker, gradient g_n, score) of the episodes that end in this tick
        for w, agent in enumerate(workers):
            s = agent.state
            z, _, _ = network(agent.theta, s)
            if agent.alpha > 0.0 and env_rng.random() < agent.alpha:  # explore with probability α
                a = 0 if env_rng.random() < 0.5 else 1
            else:
                a = 0 if z[0] >= z[1] else 1  # a = argmax_a π(a|s; θ') (ties: the first)
            agent.states.append(s)
            agent.actions.append(a)
            agent.state, fell = cartpole_step(s, a, agent.gravity, c.physics)  # r = 1 and s_{n,t+1}
            agent_steps += 1
            steps = len(agent.actions)
            if fell or steps >= cap:  # a terminal state, or the 200-step cap
                v_last = 0.0
                if not fell and hyper.bootstrap_truncated:
                    v_last = float(network(agent.theta, agent.state)[1])
                g = episode_gradient(agent.theta, agent.states, agent.actions, v_last, hyper)  # g_n
                finished.append((w, g, steps))

        # ---- the aggregator receives this tick's submissions, in worker order ----
        for _, g, score in finished:
            if not np.all(np.isfinite(g)):  # the non-finite rule: a zero row instead
                g = np.zeros_like(g)
            g_noisy = mechanism(g[None, :], mech_rng)[0]  # g̃_n ← Q(g_n; ε, d, d̂, C)
            buffer.append(g_noisy)  # B ← B ∪ {g̃_n}
            if len(buffer) >= max_buf:
                theta = theta - eta * np.mean(buffer, axis=0)  # eq. 22: θ ← θ − η·(1/|B|) Σ g̃
                buffer = []  # clear buffer
                updates += 1
            scores.append(score)
            sent.append(g_noisy)
            if len(scores) == c.submissions:  # "until N submissions received"
                return ReferenceResult(theta, np.array(scores), np.array(sent), updates, agent_steps)

        # ---- the finished workers' next agents begin, with the θ after this tick's updates ----
        for w, _, _ in finished:
            workers[w] = begin_agent(next_agent, theta, psi, c, env_rng)
            next_agent += 1
