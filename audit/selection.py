"""Choosing a test on training data: the threshold scan and the statistic selection.

Pure selection machinery used by :mod:`audit.tester` (which certifies the chosen test) and by
statistics that are themselves built from other statistics (:class:`audit.statistics.ChannelSumLikelihoodRatio`).
Everything here sees only training data; its projections use a fast Poisson bound, never the exact
Clopper–Pearson bound of the certification.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import bounds

FP_SHARES = (0.1, 0.25, 0.5, 0.75, 0.9)
MAX_THRESHOLDS = 3000
SELECTION_PESSIMISM = 0.05  # one-sided level of the training-rate upper bounds used to rank tests
# the same with two-sided rate bounds: they already keep a rare complement honest, so they can be milder
# (chosen on Gaussian canaries: 0.25 reaches the oracle test's bound on average, 0.05 stays ~10 % short)
SELECTION_PESSIMISM_TWO_SIDED = 0.25
# two-sided selection also averages the projected bound over this many neighbouring thresholds before
# taking its maximum: the projected curve of a deep-tail test is noisy, and its single highest point is
# mostly noise (winner's curse); the centre of the best plateau certifies higher on fresh samples.
# Only for a statistic with many distinct values: averaging a few atoms would blur a perfect test away.
SMOOTHING_WINDOW = 41


def _threshold_grid(values: np.ndarray) -> np.ndarray:
    u = np.unique(values)
    if u.size <= MAX_THRESHOLDS:
        return u
    m = u.size
    lin = np.linspace(0, m - 1, MAX_THRESHOLDS // 2)
    tail = np.unique(np.round(np.geomspace(1, m / 2, MAX_THRESHOLDS // 4)))
    idx = np.unique(np.concatenate([lin, tail - 1, m - tail]).astype(np.int64).clip(0, m - 1))
    return u[idx]


def approximate_upper(k, n, alpha: float):
    """Fast Poisson upper bound on a rate, k/n (selection only; certification uses exact
    Clopper–Pearson, which this slightly exceeds for small rates): Γ⁻¹(k+1, 1−α)/n."""
    from scipy.special import gammaincinv

    return np.minimum(1.0, gammaincinv(np.asarray(k, np.float64) + 1.0, 1.0 - alpha) / n)


def approximate_lower(k, n, alpha: float):
    """Fast Poisson lower bound on a rate (selection only): Γ⁻¹(k, α)/n, 0 at k = 0."""
    from scipy.special import gammaincinv

    k = np.asarray(k, np.float64)
    return np.where(k > 0, gammaincinv(np.maximum(k, 1e-300), alpha), 0.0) / n


def rate_upper(k, n, alpha: float, two_sided: bool = False):
    """Upper bound on a rate k/n for selection: the Poisson bound of k (:func:`approximate_upper`);
    ``two_sided`` also takes 1 − the Poisson lower bound of the complement n − k, whichever is smaller.
    The Poisson bound of k alone exceeds 1 for rates near 1, so it hides every test whose rare event is
    the complement of a frequent one (a Gaussian's best test: FNR ≈ 0.998, FPR ≈ 0.0006)."""
    upper = approximate_upper(k, n, alpha)
    if not two_sided:
        return upper
    k = np.asarray(k, np.float64)
    return np.minimum(upper, 1.0 - approximate_lower(n - k, n, alpha))


def projected_epsilon(fp, n_neg, fn, n_pos, n_cert: int, alpha: float, delta: float, share: float,
                      two_sided: bool = False):
    """The bound n_cert fresh samples would give, assuming pessimistic (95% upper) training rates.

    Pessimism matters: the threshold scan looks at thousands of tails and the luckiest empty tail
    would otherwise look like a perfect test (winner's curse). ``two_sided``: rate bounds that stay
    below 1 for rates near 1 (:func:`rate_upper`).
    """
    pessimism = SELECTION_PESSIMISM_TWO_SIDED if two_sided else SELECTION_PESSIMISM
    fpr = rate_upper(fp, n_neg, pessimism, two_sided)
    fnr = rate_upper(fn, n_pos, pessimism, two_sided)
    fpr_ub = rate_upper(fpr * n_cert, n_cert, share * alpha, two_sided)
    fnr_ub = rate_upper(fnr * n_cert, n_cert, (1 - share) * alpha, two_sided)
    return bounds.epsilon_from_rates(fpr_ub, fnr_ub, delta)


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """The mean of each value's ``window`` neighbours (fewer at the ends, where the window is cut)."""
    values = np.asarray(values, dtype=np.float64)
    if window <= 1 or values.size == 0:
        return values
    half = window // 2
    sums = np.concatenate([[0.0], np.cumsum(np.where(np.isfinite(values), values, 0.0))])
    index = np.arange(values.size)
    lo, hi = np.maximum(index - half, 0), np.minimum(index + half + 1, values.size)
    return (sums[hi] - sums[lo]) / (hi - lo)


def choose_threshold(s_pos: np.ndarray, s_neg: np.ndarray, n_cert: int, alpha: float,
                     delta: float, two_sided: bool = False) -> tuple[float, float, float]:
    """(threshold, fp_share, projected ε) maximising the projected certified bound; T = [s ≥ t]."""
    grid = _threshold_grid(np.concatenate([s_pos, s_neg]))
    sp, sn = np.sort(s_pos), np.sort(s_neg)
    tp = sp.size - np.searchsorted(sp, grid, side="left")
    fp = sn.size - np.searchsorted(sn, grid, side="left")
    best = (float(grid[0]), 0.5, 0.0)
    for share in FP_SHARES:
        eps = projected_epsilon(fp, sn.size, sp.size - tp, sp.size, n_cert, alpha, delta, share, two_sided)
        if two_sided and grid.size >= 20 * SMOOTHING_WINDOW:  # a continuous statistic's curve, not a few atoms
            eps = moving_average(eps, SMOOTHING_WINDOW)
        i = int(np.argmax(eps))
        if eps[i] > best[2]:
            best = (float(grid[i]), share, float(eps[i]))
    return best


def select_statistic(statistics: Sequence, fit_p: np.ndarray, fit_n: np.ndarray, sel_p: np.ndarray,
                     sel_n: np.ndarray, project: Callable, tie_margin: float = 0.0):
    """Fit each statistic on (fit_p, fit_n) and keep the one whose projection on the selection half
    (``project(s_pos, s_neg)``, a tuple ending in the projected ε) is largest; a later statistic
    replaces an earlier one only if it projects more than (1 + ``tie_margin``) times its ε.

    Returns ``(statistic, scorer, s_pos, s_neg, projection)`` or None when no statistic gives finite
    scores."""
    best = None
    for stat in statistics:
        scorer = stat.fit(fit_p, fit_n)
        if scorer is None:
            continue
        s_pos, s_neg = np.asarray(scorer(sel_p), np.float64), np.asarray(scorer(sel_n), np.float64)
        if not (np.all(np.isfinite(s_pos)) and np.all(np.isfinite(s_neg))):
            continue
        projection = project(s_pos, s_neg)
        if best is None or projection[-1] > best[4][-1] * (1.0 + tie_margin):
            best = (stat, scorer, s_pos, s_neg, projection)
    return best


DELTA_SELECTION_PESSIMISM = 0.25  # one-sided level of the δ test's training hit-rate bound (ranking only)


def projected_delta(hits, false_hits, n_sel: int, n_cert: int, alpha: float, epsilon: float,
                    share: float) -> float:
    """The δ bound n_cert fresh samples would give: hit rate at its 25% lower bound, false-hit rate at
    its 75% upper bound, except that NO false hits project as 0 (a point mass has none, and any
    upper bound on a zero count, ≥ ln(1/p)/n, projected to n_cert would hide leaks of a few per
    thousand at small training splits; the pessimism on non-zero counts keeps the lattice of a
    correct discrete mechanism, whose cells differ by at most e^ε, from being certified in vain).

    Ranking only: the certified bound does not depend on it; an over-optimistic pick only costs
    the certification samples (and at least MIN_DELTA_HITS training hits are required).
    """
    hit_rate = approximate_lower(hits, n_sel, DELTA_SELECTION_PESSIMISM)
    false_rate = approximate_upper(false_hits, n_sel, DELTA_SELECTION_PESSIMISM) if false_hits > 0 else 0.0
    lo = approximate_lower(hit_rate * n_cert, n_cert, (1.0 - share) * alpha)
    hi = approximate_upper(false_rate * n_cert, n_cert, share * alpha)
    return float(lo - bounds.exp_or_inf(epsilon) * hi) if hi > 0 else float(lo)
