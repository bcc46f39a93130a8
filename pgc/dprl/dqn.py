"""Algorithm 11 with a small deep Q-network in place of the table (thesis §5.4.3 trains a DQN; the tabular
agent of :mod:`pgc.dprl.gridworld` is the default, and this module is how the two are compared).

The network reads the 8 observation bits (and, with ``sees_cell``, the agent's cell one-hot) and returns
5 Q-values. Algorithm 10's obfuscation needs Q of the 8 flipped observations at every step; it reads them
from the network's table over all 256 observations, refreshed whenever the target network is synced (so the
obfuscation uses the same slowly moving Q function as the learning targets). The trained agent is returned
as that table, so everything downstream (greedy runs, the map-recovery attack) treats both agents alike.

All torch randomness comes from one ``torch.Generator`` seeded from the caller's numpy generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pgc.errors import UserError
from pgc.optim.networks import seeded_mlp

from .gridworld import TrainingSettings, greedy_action, observe, row_of, start_goal, step, training_utility

BIT_WEIGHTS = 1 << np.arange(8)


@dataclass(frozen=True)
class DQNSettings:
    hidden: int = 64
    learning_rate: float = 1e-3
    batch: int = 64
    buffer: int = 20_000
    warmup: int = 500  # environment steps before the first gradient step
    train_every: int = 4  # environment steps per gradient step (as Mnih et al. 2015)
    sync_every: int = 250  # gradient steps between target-network syncs (and Q-table refreshes)

    def __post_init__(self) -> None:
        if min(self.hidden, self.batch, self.buffer, self.train_every, self.sync_every) < 1 or self.learning_rate <= 0:
            raise UserError("DQN sizes must be positive integers and the learning rate positive")


def inputs(rows: np.ndarray, observations: np.ndarray, n_rows: int) -> torch.Tensor:
    """Network inputs: the observation's 8 bits, then the row one-hot when the agent sees its cell."""
    bits = ((observations[:, None] & BIT_WEIGHTS) > 0).astype(np.float32)
    if n_rows > 1:
        bits = np.concatenate([bits, np.eye(n_rows, dtype=np.float32)[rows]], axis=1)
    return torch.from_numpy(bits)


def q_table(net: nn.Module, n_rows: int) -> np.ndarray:
    """The network's Q-values over every (row, observation): (n_rows, 256, 5)."""
    rows = np.repeat(np.arange(n_rows), 256)
    obs = np.tile(np.arange(256), n_rows)
    with torch.no_grad():
        return net(inputs(rows, obs, n_rows)).numpy().astype(np.float64).reshape(n_rows, 256, 5)


def train_dqn_agent(
    free: np.ndarray,
    settings: TrainingSettings,
    defence: float | str | None,
    rng: np.random.Generator,
    dqn: DQNSettings = DQNSettings(),
) -> tuple[np.ndarray, dict]:
    """Algorithm 11 with a DQN: the Q table of the trained network (n_rows × 256 × 5) and the utility of
    training, as :func:`pgc.dprl.gridworld.train_agent` returns them. Runs on one torch thread (a network this
    small gains nothing from more, and two trainings side by side would fight over the cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(free, settings, defence, rng, dqn)
    finally:
        torch.set_num_threads(threads)


def _train(
    free: np.ndarray,
    settings: TrainingSettings,
    defence: float | str | None,
    rng: np.random.Generator,
    dqn: DQNSettings,
) -> tuple[np.ndarray, dict]:
    gen = torch.Generator().manual_seed(int(rng.integers(2**63)))
    n_rows = free.size if settings.sees_cell else 1
    n_in = 8 + (n_rows if n_rows > 1 else 0)  # the bits of inputs(): observation, then the row one-hot
    online, target = seeded_mlp(n_in, dqn.hidden, 5, gen), seeded_mlp(n_in, dqn.hidden, 5, gen)
    target.load_state_dict(online.state_dict())
    optimiser = torch.optim.Adam(online.parameters(), lr=dqn.learning_rate)
    table = q_table(target, n_rows)
    eps = None if defence == "dynamic" else defence
    memory = np.zeros((dqn.buffer, 6), dtype=np.float64)  # row, obs, action, reward, next row, next obs
    done_flags = np.zeros(dqn.buffer, dtype=bool)
    stored = env_steps = grad_steps = 0
    start = start_goal(free.shape)[0]
    rewards, steps_taken = [], []

    def state_of(cell) -> tuple[int, int]:  # (row, observation obfuscated with the current table)
        return row_of(free, cell, settings), observe(free, cell, table, defence, eps, settings, rng)

    for _ in range(settings.episodes):
        cell, total, steps = start, 0.0, settings.max_steps
        state = state_of(cell)
        for t in range(settings.max_steps):
            # act (lines 6-11) on the obfuscated observation, with the table of the current network
            action = int(rng.integers(5)) if rng.random() > settings.greedy else greedy_action(table[state], rng)
            cell, reward, done = step(free, cell, action)
            total += reward
            nxt = state_of(cell)
            # remember the transition (line 16), learn from a replayed minibatch (lines 17-18)
            memory[stored % dqn.buffer] = (*state, action, reward, *nxt)
            done_flags[stored % dqn.buffer] = done
            stored, env_steps, state = stored + 1, env_steps + 1, nxt
            if env_steps >= dqn.warmup and env_steps % dqn.train_every == 0:
                _gradient_step(
                    online,
                    target,
                    optimiser,
                    memory,
                    done_flags,
                    min(stored, dqn.buffer),
                    n_rows,
                    settings.gamma,
                    dqn.batch,
                    rng,
                )
                grad_steps += 1
                if grad_steps % dqn.sync_every == 0:
                    target.load_state_dict(online.state_dict())
                    table = q_table(target, n_rows)
            if done:
                steps = t + 1
                break
        rewards.append(total)
        steps_taken.append(steps)
    return q_table(online, n_rows), training_utility(rewards, steps_taken, settings)


def _gradient_step(online, target, optimiser, memory, done_flags, filled, n_rows, gamma, batch, rng) -> None:
    """One Huber-loss step towards r + γ·max Q_target(s′) on a minibatch drawn with ``rng``."""
    pick = rng.integers(filled, size=batch)
    m = memory[pick]
    rows, obs, actions = m[:, 0].astype(int), m[:, 1].astype(int), torch.from_numpy(m[:, 2].astype(np.int64))
    with torch.no_grad():
        best_next = target(inputs(m[:, 4].astype(int), m[:, 5].astype(int), n_rows)).max(dim=1).values
    goal = torch.from_numpy(m[:, 3].astype(np.float32)) + gamma * best_next * torch.from_numpy(~done_flags[pick])
    q = online(inputs(rows, obs, n_rows)).gather(1, actions[:, None]).squeeze(1)
    loss = nn.functional.smooth_l1_loss(q, goal)
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
