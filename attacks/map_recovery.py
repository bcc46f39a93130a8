"""Map recovery from a trained grid agent's behaviour (Pan et al. 2019, as the thesis' §5.6 reproduces it),
against DP-DRL (thesis ch. 5).

The attacker knows the structural constraints (§5.6.1.2: border walls, start and goal, connected free cells,
no 2×2 block of walls) and watches the trained agent run greedily from the start: the cells it stands on are
free, and a move that leaves it in place hit a wall. A genetic algorithm searches maps that satisfy the
constraints and the evidence for the one whose induced optimal policy (shortest paths to the goal) agrees
best with the agent's actions (the fitness of Pan et al.). Recovery is measured as in §5.6.3:

* GRR — the share of all cells whose free/wall state the recovered map gets right;
* NRR — the same share over the cells that prior knowledge does not give (the interior, start and goal
  excluded).

A chance row draws the map from the same generator, knowing the constraints only.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from pgc.dprl.gridworld import MOVES, random_map, start_goal, valid_map
from pgc.errors import UserError


@dataclass(frozen=True)
class GeneticSettings:
    population: int = 60
    generations: int = 60
    tournament: int = 3
    elite: int = 2

    def __post_init__(self) -> None:
        if (
            self.population < 4
            or self.generations < 1
            or self.tournament < 2
            or not (0 <= self.elite < self.population)
        ):
            raise UserError("population >= 4, generations >= 1, tournament >= 2, 0 <= elite < population")


def distances_to_goal(free: np.ndarray) -> np.ndarray:
    """BFS distance of every free cell to the goal (inf where unreachable or a wall)."""
    goal = start_goal(free.shape)[1]
    dist = np.full(free.shape, np.inf)
    dist[goal] = 0
    todo = deque([goal])
    while todo:
        r, c = todo.popleft()
        for dr, dc in MOVES[:4]:
            nxt = (r + dr, c + dc)
            if free[nxt] and dist[nxt] == np.inf:
                dist[nxt] = dist[r, c] + 1
                todo.append(nxt)
    return dist


def agreement(free: np.ndarray, trajectory) -> float:
    """The share of the agent's steps whose action is optimal (moves one step closer to the goal) in ``free``."""
    if not trajectory:
        return 0.0
    dist = distances_to_goal(free)
    good = 0
    for (r, c), action, _ in trajectory:
        dr, dc = MOVES[action]
        nxt = (r + dr, c + dc)
        good += bool(action < 4 and free[nxt] and dist[nxt] == dist[r, c] - 1)
    return good / len(trajectory)


def evidence(shape, trajectory) -> tuple[set, set]:
    """(cells seen free, cells seen to be walls) from the agent's run and the known start and goal."""
    free_cells, walls = set(start_goal(shape)), set()
    for cell, action, nxt in trajectory:
        free_cells.update((cell, nxt))
        if action < 4 and nxt == cell:
            walls.add((cell[0] + MOVES[action][0], cell[1] + MOVES[action][1]))
    return free_cells, walls


def recover_map(shape, trajectory, settings: GeneticSettings, rng: np.random.Generator) -> np.ndarray:
    """The genetic search: the map (True = free) of highest fitness found."""
    free_cells, walls = evidence(shape, trajectory)
    interior = [(r, c) for r in range(1, shape[0] - 1) for c in range(1, shape[1] - 1)]
    fixed = {cell: (cell in free_cells) for cell in interior if cell in free_cells or cell in walls}

    def as_map(genes: np.ndarray) -> np.ndarray:
        m = np.zeros(shape, dtype=bool)
        for cell, g in zip(interior, genes, strict=False):
            m[cell] = fixed.get(cell, bool(g))
        return m

    cache: dict[bytes, float] = {}

    def fitness(genes: np.ndarray) -> float:
        key = genes.tobytes()
        if key not in cache:
            m = as_map(genes)
            cache[key] = agreement(m, trajectory) if valid_map(m) else -1.0
        return cache[key]

    population = [np.array([random_map(shape, rng)[cell] for cell in interior]) for _ in range(settings.population)]
    rate = 1.5 / len(interior)
    for _ in range(settings.generations):
        scores = np.array([fitness(g) for g in population])
        order = np.argsort(-scores)
        nxt = [population[i].copy() for i in order[: settings.elite]]
        while len(nxt) < settings.population:
            a, b = (
                population[
                    max(rng.choice(len(population), settings.tournament, replace=False), key=lambda i: scores[i])
                ]
                for _ in range(2)
            )
            child = np.where(rng.random(len(interior)) < 0.5, a, b)
            child = np.where(rng.random(len(interior)) < rate, ~child, child)
            nxt.append(child)
        population = nxt
    best = max(population, key=fitness)
    return as_map(best)


def recovery_rates(recovered: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(GRR, NRR) of §5.6.3."""
    right = recovered == truth
    inner = np.zeros(truth.shape, dtype=bool)
    inner[1:-1, 1:-1] = True
    for cell in start_goal(truth.shape):
        inner[cell] = False
    return float(right.mean()), float(right[inner].mean())


def chance_rates(truth: np.ndarray, rng: np.random.Generator, draws: int = 20) -> tuple[float, float]:
    """GRR and NRR of maps drawn from the generator (the constraints known, nothing observed), averaged."""
    rates = np.array([recovery_rates(random_map(truth.shape, rng), truth) for _ in range(draws)])
    return float(rates[:, 0].mean()), float(rates[:, 1].mean())


TABLE_5_1 = {  # (GRR, NRR) in % by map size and defence (thesis Table 5.1)
    (7, 7): {
        "none": (94.26, 88.74),
        1.0: (92.92, 86.12),
        0.7: (89.39, 79.20),
        0.4: (87.29, 75.09),
        0.1: (84.82, 70.25),
        "dynamic": (85.19, 70.97),
    },
    (12, 11): {
        "none": (84.17, 76.78),
        1.0: (82.89, 74.91),
        0.7: (79.92, 70.55),
        0.4: (76.88, 66.09),
        0.1: (76.19, 65.07),
        "dynamic": (76.63, 65.72),
    },
}
TABLE_5_3 = {
    "none": (0.98, 20.52),
    1.0: (0.97, 22.84),
    0.7: (0.95, 24.92),
    0.4: (0.94, 26.16),
    0.1: (0.92, 28.28),
    "dynamic": (0.96, 23.13),
}  # 12×11, last 1,000 epochs: average reward, average steps


def mean_interval(values, confidence: float = 0.95) -> tuple[float, list[float]]:
    """The mean and its Student-t interval over independent maps."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v.mean()), [float(v.mean())] * 2
    half = stats.t.ppf(0.5 + confidence / 2.0, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return float(v.mean()), [float(v.mean() - half), float(v.mean() + half)]


def run_map_recovery(
    shape, maps: int, defences, training, genetic: GeneticSettings, seed: int, progress=lambda text: None
) -> dict:
    """Per map (drawn under the constraints) and defence: train (Algorithm 11), watch one greedy run, recover the
    map; GRR, NRR and utility with intervals over maps, beside the thesis' tables and the chance row."""
    from pgc.dprl.gridworld import greedy_trajectory
    from pgc.dprl.training import train_agent

    per = {str(d): {"grr": [], "nrr": [], "reward": [], "steps": [], "success": []} for d in ["none", *defences]}
    chance = {"grr": [], "nrr": []}
    for i, seq in enumerate(np.random.SeedSequence(seed).spawn(maps)):
        map_seq, chance_seq, *setting_seqs = seq.spawn(2 + 1 + len(defences))
        truth = random_map(shape, np.random.Generator(np.random.PCG64(map_seq)))
        grr, nrr = chance_rates(truth, np.random.Generator(np.random.PCG64(chance_seq)))
        chance["grr"].append(grr)
        chance["nrr"].append(nrr)
        for defence, s in zip([None, *defences], setting_seqs, strict=True):
            train_rng, run_rng, attack_rng = (np.random.Generator(np.random.PCG64(x)) for x in s.spawn(3))
            q, utility = train_agent(truth, training, defence, train_rng)
            trajectory = greedy_trajectory(truth, q, defence, training, run_rng)
            grr, nrr = recovery_rates(recover_map(shape, trajectory, genetic, attack_rng), truth)
            row = per["none" if defence is None else str(defence)]
            for key, value in (
                ("grr", grr),
                ("nrr", nrr),
                ("reward", utility["final_mean_reward"]),
                ("steps", utility["final_mean_steps"]),
                ("success", utility["final_success"]),
            ):
                row[key].append(value)
        progress(f"map {i + 1}/{maps}: " + ", ".join(f"{k} GRR {v['grr'][-1]:.3f}" for k, v in per.items()))
    thesis = TABLE_5_1.get(tuple(shape), {})
    rows = []
    for key, v in per.items():
        label = key if key in ("none", "dynamic") else float(key)
        rows.append(
            {
                "defence": key,
                **{m: dict(zip(("mean", "ci"), mean_interval(v[m]), strict=True)) for m in v},
                "thesis_grr_nrr": thesis.get(label),
                "thesis_table_5_3": TABLE_5_3.get(label),
            }
        )
    rows.append(
        {
            "defence": "chance (constraints only)",
            "grr": dict(zip(("mean", "ci"), mean_interval(chance["grr"]), strict=True)),
            "nrr": dict(zip(("mean", "ci"), mean_interval(chance["nrr"]), strict=True)),
        }
    )
    return {"shape": list(shape), "maps": maps, "rows": rows}
