"""Ch. 5's grid world (§5.6.1) and the agent that DP-DRL protects (Algorithm 11), for the map-recovery attack.

* A map is a boolean array (True = free) with walls on the border; start (1, 1) and goal (H-2, W-2) are free
  and known (§5.6.1.2). Structural constraints: the free cells are connected, and no 2×2 window is all walls.
  :func:`random_map` draws maps under the constraints (obstacles added in a random order while they hold).
* The agent sees the 8 neighbouring cells (§5.6.1.3; order up, down, left, right, up-left, up-right,
  down-left, down-right); actions up, down, left, right, stay; reward 1 at the goal, -0.1 for a collision or
  a stay, 0 for a move (§5.6.2.2).
* :func:`train_agent`: Algorithm 11 with a table over the 256 observations in place of the DQN: the
  network's input is the same 8 cells (§5.6.2.2), and a table over 256 inputs can hold any function a DQN
  could; what it lacks is generalisation to observations never met, which keep their initial values.
  (``sees_cell=True`` indexes the table by the agent's cell as well.) Each step the observation goes through
  DP-DRL (Algorithm 10 with :mod:`pgc.dprl.dpdrl`'s score function on the table) when a defence is set, and the
  agent acts and learns on the obfuscated observation (lines 5-18).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError

from .dpdrl import probabilities_from_distances

MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1), (0, 0))  # up, down, left, right, stay
NEIGHBOURS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
BITS = 1 << np.arange(8)


def start_goal(shape) -> tuple[tuple[int, int], tuple[int, int]]:
    return (1, 1), (shape[0] - 2, shape[1] - 2)


def connected(free: np.ndarray) -> bool:
    cells = list(zip(*np.nonzero(free), strict=True))
    if not cells:
        return False
    seen, todo = {cells[0]}, deque([cells[0]])
    while todo:
        r, c = todo.popleft()
        for dr, dc in MOVES[:4]:
            nxt = (r + dr, c + dc)
            if free[nxt] and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return len(seen) == len(cells)


def thick_walls(free: np.ndarray) -> bool:
    """True when some 2×2 window holds four walls (§5.6.1.2 forbids it)."""
    wall = ~free
    return bool(np.any(wall[:-1, :-1] & wall[1:, :-1] & wall[:-1, 1:] & wall[1:, 1:]))


def valid_map(free: np.ndarray) -> bool:
    start, goal = start_goal(free.shape)
    border = np.concatenate([free[0], free[-1], free[:, 0], free[:, -1]])
    return bool(free[start] and free[goal] and not border.any() and connected(free) and not thick_walls(free))


def random_map(shape, rng: np.random.Generator, density: float = 0.35) -> np.ndarray:
    """A map under the constraints: interior free, then each interior cell (random order) made an obstacle
    with probability ``density`` when the constraints still hold."""
    free = np.zeros(shape, dtype=bool)
    free[1:-1, 1:-1] = True
    start, goal = start_goal(shape)
    for flat in rng.permutation(free.size):
        cell = np.unravel_index(flat, shape)
        if not free[cell] or cell in (start, goal) or rng.random() >= density:
            continue
        free[cell] = False
        if not (connected(free) and not thick_walls(free)):
            free[cell] = True
    return free


def observation_index(free: np.ndarray, cell) -> int:
    r, c = cell
    return int(sum(int(free[r + dr, c + dc]) << i for i, (dr, dc) in enumerate(NEIGHBOURS)))


def step(free: np.ndarray, cell, action: int):
    """(next cell, reward, done)."""
    dr, dc = MOVES[action]
    nxt = (cell[0] + dr, cell[1] + dc)
    if action == 4 or not free[nxt]:
        return cell, -0.1, False
    done = nxt == start_goal(free.shape)[1]
    return nxt, (1.0 if done else 0.0), done


@dataclass(frozen=True)
class TrainingSettings:
    episodes: int = 2_000
    max_steps: int = 100
    alpha: float = 0.1
    gamma: float = 0.95
    greedy: float = 0.9  # ε_g of Algorithm 11 line 7: act greedily with this probability
    big_n: float = 10.0  # N of Algorithm 9
    sees_cell: bool = False  # index the table by the agent's cell as well as its observation
    learner: str = "table"  # "table": tabular Q-learning; "dqn": a small deep Q-network (pgc.dprl.dqn)

    def __post_init__(self) -> None:
        if self.episodes < 1 or self.max_steps < 1 or not (0 < self.alpha <= 1) or not (0 <= self.gamma < 1):
            raise UserError("episodes, max_steps >= 1; alpha in (0, 1]; gamma in [0, 1)")
        if self.learner not in ("table", "dqn"):
            raise UserError(f"learner must be 'table' or 'dqn', got {self.learner!r}")


def obfuscate_index(q: np.ndarray, index: int, epsilon: float | None, big_n: float, rng: np.random.Generator) -> int:
    """Algorithm 10 on observation ``index`` with ``q`` (256 × 5: the table's row for the agent's cell) as
    the Q function: the index of the observation with one element flipped."""
    flipped = index ^ BITS  # O'_(i) for i = 0..7
    p = probabilities_from_distances(np.linalg.norm(q[flipped] - q[index], axis=1), epsilon, big_n)
    chosen = int(np.searchsorted(np.cumsum(p), rng.random() * (1 - 1e-12)))
    return int(flipped[min(chosen, 7)])


def train_agent(
    free: np.ndarray, settings: TrainingSettings, defence: float | str | None, rng: np.random.Generator
) -> tuple[np.ndarray, dict]:
    """Algorithm 11 (tabular): the Q table (256 × 5) and the utility of training (Table 5.3's measures).
    ``defence``: None (no defence), a fixed ε, or "dynamic". (:func:`pgc.dprl.training.train_agent` picks this
    or the DQN by ``settings.learner``.)"""
    if settings.learner != "table":
        raise UserError(
            f"pgc.dprl.gridworld trains the table; the {settings.learner!r} learner: pgc.dprl.training.train_agent"
        )
    q = np.zeros((free.size if settings.sees_cell else 1, 256, 5))
    eps = None if defence == "dynamic" else defence
    start, goal = start_goal(free.shape)
    rewards, steps_taken = [], []
    for _ in range(settings.episodes):
        cell, total, steps = start, 0.0, settings.max_steps
        state = (row_of(free, cell, settings), observe(free, cell, q, defence, eps, settings, rng))
        for t in range(settings.max_steps):
            # act (lines 6-11), move and learn (lines 12-18) on the obfuscated observations
            action = int(rng.integers(5)) if rng.random() > settings.greedy else greedy_action(q[state], rng)
            cell, reward, done = step(free, cell, action)
            total += reward
            nxt = (row_of(free, cell, settings), observe(free, cell, q, defence, eps, settings, rng))
            target = reward if done else reward + settings.gamma * q[nxt].max()
            q[state + (action,)] += settings.alpha * (target - q[state + (action,)])
            state = nxt
            if done:
                steps = t + 1
                break
        rewards.append(total)
        steps_taken.append(steps)
    return q, training_utility(rewards, steps_taken, settings)


def training_utility(rewards: list[float], steps_taken: list[int], settings: TrainingSettings) -> dict:
    """Table 5.3's measures over the last tenth of the episodes: mean reward, mean steps, share that reached
    the goal."""
    last = max(1, settings.episodes // 10)
    return {
        "final_mean_reward": float(np.mean(rewards[-last:])),
        "final_mean_steps": float(np.mean(steps_taken[-last:])),
        "final_success": float(np.mean(np.array(steps_taken[-last:]) < settings.max_steps)),
        "final_episodes": last,
    }


def greedy_action(values: np.ndarray, rng: np.random.Generator) -> int:
    """argmax, ties broken at random (an untrained row is all ties)."""
    best = np.flatnonzero(values == values.max())
    return int(best[0] if best.size == 1 else best[rng.integers(best.size)])


def row_of(free: np.ndarray, cell, settings: TrainingSettings) -> int:
    """The table's row: the cell's index when the agent sees its cell, else 0."""
    return int(cell[0] * free.shape[1] + cell[1]) if settings.sees_cell else 0


def observe(free, cell, q, defence, eps, settings: TrainingSettings, rng) -> int:
    index = observation_index(free, cell)
    return (
        index if defence is None else obfuscate_index(q[row_of(free, cell, settings)], index, eps, settings.big_n, rng)
    )


def greedy_trajectory(
    free: np.ndarray, q: np.ndarray, defence, settings: TrainingSettings, rng, max_steps: int | None = None
) -> list[tuple[tuple[int, int], int, tuple[int, int]]]:
    """What an observer of the trained agent sees: (cell, action, next cell) along a greedy run from the start
    (acting on obfuscated observations when the agent is defended, as it was trained)."""
    eps = None if defence == "dynamic" else defence
    cell, out = start_goal(free.shape)[0], []
    for _ in range(max_steps or settings.max_steps):
        obs = observe(free, cell, q, defence, eps, settings, rng)
        action = greedy_action(q[row_of(free, cell, settings), obs], rng)
        nxt, _, done = step(free, cell, action)
        out.append((cell, action, nxt))
        cell = nxt
        if done:
            break
    return out
