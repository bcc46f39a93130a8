"""Plain torch reference of the A3C loss (eqs. 15–18) and a naive one-agent loop.

Used to check the compiled kernel (tests) and as the naive baseline of ``pgc bench train``.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import torch

from .env import CartPoleParams
from .model import ActorCritic
from .rollout import A3CHyperparams


def episode_loss(model: ActorCritic, states: torch.Tensor, actions: torch.Tensor, terminated: bool,
                 hyper: A3CHyperparams) -> torch.Tensor:
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
    targets = torch.empty(steps, dtype=values.dtype)
    running = v_boot
    for t in range(steps - 1, -1, -1):  # eq. 18: V̂_t = Σ γ^{j-t} r_j + γ^{T-t} V(s_T), r_j = 1
        running = 1.0 + hyper.gamma * running
        targets[t] = running
    advantage = (targets - values[:steps]).detach()  # eq. 12
    log_probs = torch.log_softmax(logits[:steps], dim=-1)
    entropy = -(log_probs.exp() * log_probs).sum(dim=-1)  # eq. 13
    chosen = log_probs.gather(1, actions.long().unsqueeze(1)).squeeze(1)
    policy_loss = -(chosen * advantage).sum() - hyper.beta * entropy.sum()  # eq. 16
    value_loss = ((targets - values[:steps]) ** 2).sum()  # eq. 17
    return policy_loss + hyper.lam * value_loss


def episode_gradient(theta: np.ndarray, states: np.ndarray, actions: np.ndarray, terminated: bool,
                     hyper: A3CHyperparams) -> np.ndarray:
    """∂L̂/∂θ' by autograd, as a canonical flat vector."""
    model = ActorCritic.from_flat(theta)
    loss = episode_loss(model, torch.as_tensor(states, dtype=torch.float64), torch.as_tensor(actions),
                        terminated, hyper)
    loss.backward()
    return np.concatenate([p.grad.reshape(-1).numpy() for p in model._ordered()])


def naive_steps_per_second(theta: np.ndarray, seconds: float, rng: np.random.Generator,
                           physics: CartPoleParams | None = None,
                           hyper: A3CHyperparams | None = None) -> tuple[float, int]:
    """The naive reference: one gymnasium CartPole agent, a torch forward per step, an autograd
    backward per episode, SGD on its own copy. Returns (agent-steps/s, steps)."""
    hyper = hyper or A3CHyperparams()
    physics = physics or CartPoleParams()
    env = gym.make("CartPole-v0").unwrapped  # cap handled below (200 steps)
    env.gravity = physics.gravity
    model = ActorCritic.from_flat(theta)
    seed = int(rng.integers(2**31))
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        obs, _ = env.reset(seed=seed)
        seed += 1
        states, actions = [obs], []
        terminated = False
        for _ in range(hyper.cap):
            with torch.no_grad():
                logits, _ = model(torch.as_tensor(obs, dtype=torch.float64).unsqueeze(0))
            action = int(torch.argmax(logits[0]))
            obs, _, terminated, _, _ = env.step(action)
            states.append(obs)
            actions.append(action)
            steps += 1
            if terminated:
                break
        model.zero_grad()
        loss = episode_loss(model, torch.as_tensor(np.array(states), dtype=torch.float64),
                            torch.as_tensor(actions), terminated, hyper)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 1e-3 * p.grad
    return steps / (time.perf_counter() - start), steps
