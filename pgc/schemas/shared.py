"""Pure helpers every result kind shares, each written once: the paper's table, the ε-LDP accuracy
ceiling, binomial intervals and Holm's correction (statsmodels)."""

from __future__ import annotations

import math
from collections.abc import Sequence

# Paper §4 numbers (Tables 1-3; 20 trials, cap 90,000 submissions), keyed by (mechanism, ε).
PAPER = {
    ("laplace", 1.0): {"fst_median": 18377, "success_ratio": 0.80, "relative_auc": 0.673},
    ("laplace", 2.0): {"fst_median": 20238.5, "success_ratio": 0.90, "relative_auc": 0.711},
    ("laplace", 5.0): {"fst_median": 5714.5, "success_ratio": 1.00, "relative_auc": 0.909},
    ("laplace", 10.0): {"fst_median": 4055, "success_ratio": 1.00, "relative_auc": 0.965},
    ("none", math.inf): {"fst_median": 1769, "success_ratio": 1.00, "relative_auc": 1.0},
    ("prs", 1.0): {"fst_median": 25226.5, "success_ratio": 0.85, "relative_auc": 0.660},
    ("prs", 2.0): {"fst_median": 7549, "success_ratio": 0.95, "relative_auc": 0.862},
    ("prs", 5.0): {"fst_median": 2656.5, "success_ratio": 0.90, "relative_auc": 0.835},
    ("prs", 10.0): {"fst_median": 11217.5, "success_ratio": 0.90, "relative_auc": 0.771},
}
PAPER_HORIZON = 90_000
PAPER_TRIALS = 20


def ldp_ceiling(epsilon: float, k: int, candidates: int) -> float:
    """ε-LDP accuracy ceiling for k linked submissions, uniform prior over ``candidates`` values:
    e^{kε}/(e^{kε} + |Ψ| − 1)."""
    if math.isinf(epsilon):
        return 1.0
    return 1.0 / (1.0 + (candidates - 1) * math.exp(-k * epsilon))


def binomial_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) two-sided interval of a proportion: statsmodels
    ``proportion_confint(method="beta")``."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(successes, trials, alpha=1 - confidence, method="beta")
    return float(lo), float(hi)


def holm(pvalues: Sequence[float], alpha: float = 0.05) -> tuple[list[bool], list[float]]:
    """Holm's step-down correction (statsmodels ``multipletests``): (rejected, adjusted p-values).

    statsmodels runs a full garbage collection (``gc.collect``) after every Holm correction: 0.1-0.3 s
    in a process that holds torch, numba and an audit's arrays, 10 % of an environment audit. The
    objects alive before the call are frozen for its duration (``gc.freeze``), so that collection scans
    only what the call allocated; they are unfrozen after, unchanged."""
    if not pvalues:
        return [], []
    import gc

    from statsmodels.stats.multitest import multipletests

    gc.freeze()
    try:
        reject, adjusted, _, _ = multipletests(list(pvalues), alpha=alpha, method="holm")
    finally:
        gc.unfreeze()
    return [bool(r) for r in reject], [float(p) for p in adjusted]
