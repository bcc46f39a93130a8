"""Pure math of attack evaluation (tested against hand-computed numbers).

* :func:`ldp_ceiling` — the best success probability of ANY attacker guessing ψ among |Ψ| candidates
  under a uniform prior from k submissions that are each ε-LDP: the k-fold release is kε-LDP, so for
  any output o, p(o|ψ) ≤ e^{kε} p(o|ψ'), hence the MAP posterior is at most
  e^{kε} / (e^{kε} + |Ψ| − 1) (0.576 at ε = 1, k = 1, |Ψ| = 3).
* :func:`clopper_pearson` — exact binomial interval (:func:`pgc.schemas.shared.binomial_interval`).
* :func:`normalized_advantage` — NRR-like (thesis ch. 5: recovery beyond what prior knowledge alone
  gives): (acc − prior_acc) / (1 − prior_acc).
* :func:`regression_baseline` — MAE/RMSE of the prior-only guess (the midpoint) for ψ ~ U(lo, hi).
"""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError
from pgc.schemas.shared import binomial_interval
from pgc.schemas.shared import ldp_ceiling as _ldp_ceiling


def ldp_ceiling(epsilon: float, k: int, n_candidates: int) -> float:
    """e^{kε} / (e^{kε} + |Ψ| − 1); 1.0 for ε = ∞ (:func:`pgc.schemas.shared.ldp_ceiling` after checking the
    arguments)."""
    if not (isinstance(n_candidates, (int, np.integer)) and n_candidates >= 2):
        raise UserError(f"n_candidates must be an integer >= 2, got {n_candidates!r}")
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise UserError(f"k must be an integer >= 1, got {k!r}")
    if math.isnan(epsilon) or epsilon < 0:
        raise UserError(f"epsilon must be >= 0, got {epsilon!r}")
    return _ldp_ceiling(epsilon, k, n_candidates)


def chance_level(n_candidates: int) -> float:
    """Success of a uniform-prior guess without data: 1/|Ψ|."""
    if n_candidates < 1:
        raise UserError("n_candidates must be >= 1")
    return 1.0 / n_candidates


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) two-sided interval for a binomial proportion."""
    if trials < 1 or not 0 <= successes <= trials:
        raise UserError(f"need 0 <= successes <= trials, trials >= 1 (got {successes}/{trials})")
    if not 0 < confidence < 1:
        raise UserError("confidence must lie in (0, 1)")
    return binomial_interval(successes, trials, confidence)


def normalized_advantage(accuracy: float, prior_accuracy: float) -> float:
    """(acc − prior_acc) / (1 − prior_acc): 0 = no better than the best prior-only guess, 1 = perfect."""
    if not 0 <= prior_accuracy < 1:
        raise UserError("prior_accuracy must lie in [0, 1)")
    return (accuracy - prior_accuracy) / (1.0 - prior_accuracy)


def regression_baseline(lo: float, hi: float) -> dict[str, float]:
    """Prior-only guess (lo+hi)/2 for ψ ~ U(lo, hi): MAE = (hi−lo)/4, RMSE = (hi−lo)/√12."""
    if not lo < hi:
        raise UserError("need lo < hi")
    return {"mae": (hi - lo) / 4.0, "rmse": (hi - lo) / math.sqrt(12.0)}
