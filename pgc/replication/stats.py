"""The replication's statistics (pure functions): the median FST with its order-statistic interval, the
success ratio's Clopper–Pearson interval, the relative AUC with its bootstrap interval, the comparison with
a zero-information control and Holm's correction."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from pgc.a3c.metrics import success_ratio_auc
from pgc.errors import UserError
from pgc.schemas.shared import holm as holm_test

LEVEL = 0.95


def median_fst(fsts: Sequence[float]) -> float:
    """The sample median of FSTs (average of the two middle values for even K; ∞ sorts last)."""
    x = np.sort(np.asarray(fsts, dtype=np.float64))
    if x.size == 0:
        raise UserError("need at least one trial")
    n = x.size
    if n % 2:
        return float(x[n // 2])
    lo, hi = x[n // 2 - 1], x[n // 2]
    return float(hi) if math.isinf(hi) else float((lo + hi) / 2)


def median_order_statistic_ranks(n: int, level: float = LEVEL) -> tuple[int, int, float]:
    """1-based ranks (j, k) of the shortest symmetric order-statistic interval [X_(j), X_(k)] for the
    median with coverage P(j ≤ Bin(n, ½) < k) ≥ level; returns (j, k, coverage). For n too small to
    reach ``level``, the widest interval (1, n) is returned with its (lower) coverage."""
    if n < 1:
        raise UserError("need at least one trial")
    if not 0 < level < 1:
        raise UserError("level must lie in (0, 1)")
    best = (1, n, float(stats.binom.cdf(n - 1, n, 0.5) - stats.binom.cdf(0, n, 0.5)) if n > 1 else 0.0)
    for j in range(n // 2, 0, -1):
        k = n + 1 - j
        coverage = float(stats.binom.cdf(k - 1, n, 0.5) - stats.binom.cdf(j - 1, n, 0.5))
        if coverage >= level:
            return j, k, coverage
    return best


def median_interval(fsts: Sequence[float], level: float = LEVEL) -> tuple[float, float, float]:
    """Order-statistic interval for the median FST: (lower, upper, coverage); ∞ bounds are censored."""
    x = np.sort(np.asarray(fsts, dtype=np.float64))
    j, k, coverage = median_order_statistic_ranks(x.size, level)
    return float(x[j - 1]), float(x[k - 1]), coverage


def success_interval(successes: int, trials: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact Clopper–Pearson interval for a success ratio."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(successes, trials, alpha=1 - level, method="beta")
    return float(lo), float(hi)


def relative_auc_value(fsts: Sequence[float], reference_fsts: Sequence[float], horizon: int) -> float:
    ref = success_ratio_auc(np.asarray(reference_fsts, float), horizon)
    return math.nan if ref == 0 else success_ratio_auc(np.asarray(fsts, float), horizon) / ref


def relative_auc_interval(
    fsts: Sequence[float],
    reference_fsts: Sequence[float],
    horizon: int,
    rng: np.random.Generator,
    resamples: int = 4000,
    level: float = LEVEL,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the relative AUC, resampling both sets of trials."""
    f = np.asarray(fsts, float)
    r = np.asarray(reference_fsts, float)

    def contrib(x):  # per-trial AUC contribution (see pgc.a3c.metrics.success_ratio_auc)
        return np.where(x <= horizon, horizon - np.minimum(x, horizon) + 1, 0.0)

    cf, cr = contrib(f), contrib(r)
    a = cf[rng.integers(0, f.size, (resamples, f.size))].mean(axis=1)
    b = cr[rng.integers(0, r.size, (resamples, r.size))].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)
    ratio = ratio[np.isfinite(ratio)]
    if ratio.size == 0:
        return math.nan, math.nan
    q = (1 - level) / 2
    return float(np.quantile(ratio, q)), float(np.quantile(ratio, 1 - q))


def compare_to_control(
    fsts: Sequence[float],
    control_fsts: Sequence[float],
    cap: int,
    best_mu: Sequence[float] | None = None,
    control_best_mu: Sequence[float] | None = None,
) -> dict:
    """One-sided tests that a setting learns faster / more often than its zero-information control.

    Mann–Whitney U on FST (censored trials replaced by cap + 1, i.e. tied at the top rank) with
    alternative "setting's FST is stochastically smaller"; Fisher's exact test on success counts with
    alternative "setting succeeds more often". With ``best_mu`` (each trial's highest μ), also a
    one-sided Mann–Whitney U that the setting's best μ is larger: a graded signal below the success
    threshold, reported beside the verdict but not used by it."""
    f = np.asarray(fsts, float)
    c = np.asarray(control_fsts, float)
    fc = np.where(np.isfinite(f), f, cap + 1.0)
    cc = np.where(np.isfinite(c), c, cap + 1.0)
    if np.all(fc == fc[0]) and np.all(cc == fc[0]):
        p_mwu = 1.0  # all tied (e.g. nobody succeeded): no evidence either way
    else:
        p_mwu = float(stats.mannwhitneyu(fc, cc, alternative="less").pvalue)
    s, sc = int(np.isfinite(f).sum()), int(np.isfinite(c).sum())
    p_fisher = float(stats.fisher_exact([[s, f.size - s], [sc, c.size - sc]], alternative="greater")[1])
    out = {
        "successes": s,
        "control_successes": sc,
        "median_fst": median_fst(f),
        "control_median_fst": median_fst(c),
        "p_mwu": p_mwu,
        "p_fisher": p_fisher,
    }
    if best_mu is not None and control_best_mu is not None:
        b, bc = np.asarray(best_mu, float), np.asarray(control_best_mu, float)
        out["best_mu_median"] = float(np.median(b))
        out["control_best_mu_median"] = float(np.median(bc))
        out["p_best_mu"] = float(stats.mannwhitneyu(b, bc, alternative="greater").pvalue)
    return out


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (:func:`pgc.schemas.shared.holm`)."""
    return holm_test(list(pvalues))[1]
