"""Sampling until decisive: the curve audit grown in stages with α-spending.

Stage k (k = 1, 2, ...) draws n_k = n_first·2^(k−1) fresh releases per side,
selects a threshold on half of them and certifies on the other half at level
α_k = α·2^−k.  Since Σ α_k ≤ α, the chance that any stage flags a true claim is
at most α (union bound).  The audit stops when a stage flags the claim
("violated"), when the stage could have flagged any leak of ε > margin·claim
("consistent"), or when the next stage would exceed the budget ("inconclusive").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from audit.curves import gdp_mu_for, mu_lower_bound, select_curve_threshold
from audit.power import curve_detectable_epsilon

Draw = Callable[[int, np.random.Generator], tuple]


@dataclass(frozen=True)
class Stage:
    n_per_side: int
    alpha: float
    mu_lower_bound: float
    detectable_epsilon: float


@dataclass(frozen=True)
class SequentialResult:
    decision: str  # "violated", "consistent" or "inconclusive"
    stages: tuple


def stage_alpha(alpha: float, k: int) -> float:
    """α_k = α·2^−k for stage k ≥ 1."""
    return alpha * 2.0 ** (-k)


def sequential_curve_audit(draw: Draw, claim_eps: float, delta: float, alpha: float,
                           rng: np.random.Generator, n_first: int = 2000,
                           budget: int = 10**6, margin: float = 1.1) -> SequentialResult:
    """Run stages of draw(n, rng) -> (pos_scores, neg_scores) until a decision."""
    claimed_mu = gdp_mu_for(claim_eps, delta)
    stages, n, k = [], n_first, 1
    while n <= budget:
        pos, neg = (np.asarray(s, dtype=float) for s in draw(2 * n, rng))
        a_k = stage_alpha(alpha, k)
        threshold = select_curve_threshold(pos[:n], neg[:n], n, a_k)
        fp, fn = int((neg[n:] >= threshold).sum()), int((pos[n:] < threshold).sum())
        stage = Stage(n, a_k, mu_lower_bound(fp, fn, n, n, a_k),
                      curve_detectable_epsilon(claimed_mu, delta, n, a_k))
        stages.append(stage)
        if stage.mu_lower_bound > claimed_mu:
            return SequentialResult("violated", tuple(stages))
        if stage.detectable_epsilon <= margin * claim_eps:
            return SequentialResult("consistent", tuple(stages))
        n, k = 2 * n, k + 1
    return SequentialResult("inconclusive", tuple(stages))
