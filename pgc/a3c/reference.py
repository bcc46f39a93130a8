"""Plain torch reference of the A3C loss (eqs. 15–18) and one-agent reference loops.

Used to check the compiled kernel (tests) and as the baselines of ``pgc bench train``:

* :func:`naive_steps_per_second` — the naive reference of the speed target: the textbook A3C
  worker (as in ikostrikov/pytorch-a3c): one gymnasium agent, a forward pass per step that keeps
  its autograd graph, the loss terms of eqs. 16–18 summed step by step, one backward per episode.
* :func:`batched_loss_steps_per_second` — a tuned torch loop for context: forward under
  ``no_grad`` per step, one batched loss (:func:`episode_loss`) and backward per episode.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import torch

from .env import CartPoleParams
from .model import ActorCritic
from .rollout import A3CHyperparams


def episode_loss(
    model: ActorCritic, states: torch.Tensor, actions: torch.Tensor, terminated: bool, hyper: A3CHyperparams
) -> torch.Tensor:
    """L̂_n = L̂(p) + λ L̂(v) (eq. 15) of one episode.

    ``states`` holds s_0..s_T (T+1 rows), ``actions`` a_0..a_{T-1}. The advantage (eq. 12) and the
    value target V̂ (eq. 18) are constants (stop-gradient), as in A3C.
    """
    logits, values = model(states)
    steps = actions.shape[0]
    if terminated or not hyper.bootstrap_truncated:
        v_boot = torch.zeros((), dtype=values.dtype)
    else:
        v_boot = values[steps].detach()
    if hyper.reward == "unit":
        rewards = [1.0] * steps
    else:  # 0 per step; the last step −1 on a fall, +1 at the cap
        rewards = [0.0] * (steps - 1) + [-1.0 if terminated else 1.0]
    boot = torch.cat([values[:steps].detach(), v_boot.reshape(1)])  # V(s_0..s_{T-1}), then V_T
    horizon = steps if hyper.n_step == 0 else hyper.n_step
    targets = torch.empty(steps, dtype=values.dtype)
    for t in range(steps):  # eq. 18 (n = T): V̂_t = Σ_{k<m} γ^k r_{t+k} + γ^m V(s_{t+m}), m = min(n, T − t)
        m = min(horizon, steps - t)
        targets[t] = sum(hyper.gamma**k * rewards[t + k] for k in range(m)) + hyper.gamma**m * boot[t + m]
    advantage = (targets - values[:steps]).detach()  # eq. 12
    log_probs = torch.log_softmax(logits[:steps], dim=-1)
    entropy = -(log_probs.exp() * log_probs).sum(dim=-1)  # eq. 13
    chosen = log_probs.gather(1, actions.long().unsqueeze(1)).squeeze(1)
    policy_loss = -(chosen * advantage).sum() - hyper.beta * entropy.sum()  # eq. 16
    value_loss = ((targets - values[:steps]) ** 2).sum()  # eq. 17
    loss = policy_loss + hyper.lam * value_loss
    return loss / steps if hyper.loss_reduction == "mean" else loss


def episode_gradient(
    theta: np.ndarray, states: np.ndarray, actions: np.ndarray, terminated: bool, hyper: A3CHyperparams
) -> np.ndarray:
    """∂L̂/∂θ' by autograd, as a canonical flat vector."""
    model = ActorCritic.from_flat(theta)
    loss = episode_loss(
        model, torch.as_tensor(states, dtype=torch.float64), torch.as_tensor(actions), terminated, hyper
    )
    loss.backward()
    return np.concatenate([p.grad.reshape(-1).numpy() for p in model._ordered()])


def _timed_episodes(env, rng: np.random.Generator, seconds: float):
    """Consecutive episodes of one agent until ``seconds`` have passed: yields (first observation, α)
    with §4's exploration α = max{0, 0.5 − n/1800} for the n-th episode, as the trainer's agents."""
    seed = int(rng.integers(2**31))
    start = time.perf_counter()
    episode = 0
    while time.perf_counter() - start < seconds:
        obs, _ = env.reset(seed=seed + episode)
        yield obs, max(0.0, 0.5 - episode / 1800)
        episode += 1


def naive_steps_per_second(
    theta: np.ndarray,
    seconds: float,
    rng: np.random.Generator,
    physics: CartPoleParams | None = None,
    hyper: A3CHyperparams | None = None,
) -> tuple[float, int, int]:
    """The naive reference: the textbook A3C worker loop on one gymnasium CartPole agent.

    Per step: a forward pass that keeps its graph, log π, π, the entropy (eq. 13), argmax action,
    ``env.step``. Per episode: V̂ (eq. 18) and the losses of eqs. 16–17 accumulated step by step
    backwards, one ``backward()``, one SGD step on the agent's own copy. Returns (agent-steps/s, steps, episodes).
    """
    hyper = hyper or A3CHyperparams()
    physics = physics or CartPoleParams()
    env = gym.make("CartPole-v1", max_episode_steps=hyper.cap)  # TimeLimit wrapper: the 200-step cap
    env.unwrapped.gravity = physics.gravity
    model = ActorCritic.from_flat(theta)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    steps = episodes = 0
    start = time.perf_counter()
    for obs, alpha in _timed_episodes(env, rng, seconds):
        episodes += 1
        values, chosen_log_probs, entropies = [], [], []
        terminated = truncated = False
        while not (terminated or truncated):
            logits, value = model(torch.as_tensor(obs, dtype=torch.float64).unsqueeze(0))
            log_prob = torch.log_softmax(logits, dim=-1)
            prob = log_prob.exp()
            entropy = -(log_prob * prob).sum(dim=-1)  # eq. 13
            action = int(rng.integers(2)) if rng.random() < alpha else int(prob.argmax(dim=-1))
            obs, _, terminated, truncated, _ = env.step(action)
            values.append(value[0])
            chosen_log_probs.append(log_prob[0, action])
            entropies.append(entropy[0])
            steps += 1
        running = torch.zeros((), dtype=torch.float64)
        if truncated and not terminated and hyper.bootstrap_truncated:
            running = model(torch.as_tensor(obs, dtype=torch.float64).unsqueeze(0))[1][0].detach()
        policy_loss = value_loss = torch.zeros((), dtype=torch.float64)
        for t in reversed(range(len(values))):
            running = 1.0 + hyper.gamma * running  # eq. 18, r_t = 1
            advantage = running - values[t]  # eq. 12
            value_loss = value_loss + advantage**2  # eq. 17
            policy_loss = policy_loss - chosen_log_probs[t] * advantage.detach() - hyper.beta * entropies[t]  # eq. 16
        optimizer.zero_grad()
        (policy_loss + hyper.lam * value_loss).backward()  # eq. 15
        optimizer.step()
    return steps / (time.perf_counter() - start), steps, episodes


def batched_loss_steps_per_second(
    theta: np.ndarray,
    seconds: float,
    rng: np.random.Generator,
    physics: CartPoleParams | None = None,
    hyper: A3CHyperparams | None = None,
) -> tuple[float, int, int]:
    """A tuned one-agent torch loop (context for the naive reference): forward under ``no_grad``
    per step, one batched loss and backward per episode, SGD on its own copy."""
    hyper = hyper or A3CHyperparams()
    physics = physics or CartPoleParams()
    env = gym.make("CartPole-v1").unwrapped  # cap handled below (200 steps)
    env.gravity = physics.gravity
    model = ActorCritic.from_flat(theta)
    steps = episodes = 0
    start = time.perf_counter()
    for obs, alpha in _timed_episodes(env, rng, seconds):
        episodes += 1
        states, actions = [obs], []
        terminated = False
        for _ in range(hyper.cap):
            with torch.no_grad():
                logits, _ = model(torch.as_tensor(obs, dtype=torch.float64).unsqueeze(0))
            action = int(rng.integers(2)) if rng.random() < alpha else int(torch.argmax(logits[0]))
            obs, _, terminated, _, _ = env.step(action)
            states.append(obs)
            actions.append(action)
            steps += 1
            if terminated:
                break
        model.zero_grad()
        loss = episode_loss(
            model, torch.as_tensor(np.array(states), dtype=torch.float64), torch.as_tensor(actions), terminated, hyper
        )
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 1e-3 * p.grad
    return steps / (time.perf_counter() - start), steps, episodes
