"""The one CMA-ES ask/tell loop (Hansen's CMA-ES through the ``cmaes`` package): maximise an objective
over a box, one generation at a time, so that a caller can hand every generation its own common random
numbers."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pgc.errors import UserError


@dataclass(frozen=True)
class CMAESResult:
    best_x: np.ndarray  # the best point evaluated
    best_value: float  # its objective value
    evaluations: int
    history: list[float] = field(default_factory=list)  # best value so far after each generation


def cmaes_maximize(
    objective: Callable[[np.ndarray, int], float],
    x0: np.ndarray,
    sigma: float,
    *,
    generations: int,
    population: int,
    seed: int,
    bounds: np.ndarray | None = None,
    stop_early: bool = False,
    on_generation: Callable[[int, float], None] | None = None,
) -> CMAESResult:
    """Maximise ``objective(x, generation)`` from mean ``x0`` with step size ``sigma``: ``generations``
    generations of ``population`` points (``bounds``: a (d, 2) box), the optimiser seeded with ``seed``.
    ``stop_early``: stop when CMA-ES says it has converged. ``on_generation(generation, best value)``
    after each generation (progress)."""
    from cmaes import CMA

    if generations < 1 or population < 2:
        raise UserError(f"need generations >= 1 and population >= 2, got {generations}, {population}")
    opt = CMA(
        mean=np.asarray(x0, dtype=np.float64),
        sigma=float(sigma),
        population_size=int(population),
        seed=int(seed),
        bounds=bounds,
    )
    best_x, best_value, evaluations, history = np.array(x0, dtype=np.float64), -math.inf, 0, []
    for generation in range(generations):
        told = []
        for _ in range(opt.population_size):
            x = opt.ask()
            value = float(objective(x, generation))
            evaluations += 1
            told.append((x, -value))
            if value > best_value:
                best_x, best_value = x.copy(), value
        opt.tell(told)
        history.append(best_value)
        if on_generation is not None:
            on_generation(generation, best_value)
        if stop_early and opt.should_stop():
            break
    return CMAESResult(best_x, best_value, evaluations, history)
