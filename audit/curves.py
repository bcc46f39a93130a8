"""Gaussian-DP (f-DP) trade-off curves and certified μ lower bounds.

Dong, Roth & Su, "Gaussian Differential Privacy" (JRSS-B 2022).  A mechanism is
μ-GDP when every test between its releases on neighbouring inputs has
FNR ≥ T_μ(FPR) with T_μ the Gaussian trade-off curve (Def. 2.7).  A Gaussian
mechanism with sensitivity Δ and noise σ is μ = Δ/σ-GDP.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from .bounds import cp_upper


# A row whose claim states a μ-GDP curve runs two tests on the same fresh samples and is flagged when
# either flags: the curve test gets this share of α, the threshold test the rest (fixed before any data;
# the curve test is the stronger one against a Gaussian claim, the threshold test stays as a check of
# the (ε, δ) reading).
CURVE_ALPHA_SHARE = 0.8


def split_alpha(alpha: float) -> tuple[float, float]:
    """(threshold test's α, curve test's α) of a row with a curve claim."""
    return (1.0 - CURVE_ALPHA_SHARE) * alpha, CURVE_ALPHA_SHARE * alpha


def gdp_tradeoff(alpha: float, mu: float) -> float:
    """T_μ(α) = Φ(Φ⁻¹(1−α) − μ) (Def. 2.7)."""
    return float(norm.cdf(norm.isf(alpha) - mu))


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of a μ-GDP mechanism (Cor. 2.13)."""
    if mu <= 0.0:
        return 0.0
    # e^ε·Φ(−ε/μ − μ/2) as exp(ε + log Φ(·)): finite for the large ε of a large μ
    return float(norm.cdf(-epsilon / mu + mu / 2.0)
                 - math.exp(epsilon + float(norm.logcdf(-epsilon / mu - mu / 2.0))))


def gdp_epsilon(delta: float, mu: float) -> float:
    """Smallest ε ≥ 0 with gdp_delta(ε, μ) ≤ δ (inverse of Cor. 2.13)."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if mu <= 0.0 or gdp_delta(0.0, mu) <= delta:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    upper = 1.0
    while gdp_delta(upper, mu) > delta:
        upper *= 2.0
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, upper,
                                 xtol=1e-12, rtol=1e-12))


def gdp_mu_for(epsilon: float, delta: float) -> float:
    """The μ of a μ-GDP mechanism that is exactly (ε, δ)-DP (root of Cor. 2.13)."""
    if epsilon < 0.0 or not 0.0 < delta < 1.0:
        raise ValueError(f"need epsilon >= 0 and delta in (0, 1), got ({epsilon}, {delta})")
    upper = 1.0
    while gdp_delta(epsilon, upper) < delta:
        upper *= 2.0
    return float(optimize.brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-12, upper,
                                 xtol=1e-14, rtol=1e-12))


def mu_from_rates(fpr: float, fnr: float) -> float:
    """μ implied by one (FPR, FNR) point: Φ⁻¹(1−FPR) − Φ⁻¹(FNR), floored at 0."""
    if fpr <= 0.0 or fnr <= 0.0:
        return math.inf
    if fpr >= 1.0 or fnr >= 1.0:
        return 0.0
    return max(0.0, float(norm.isf(fpr) - norm.ppf(fnr)))


def mu_lower_bound(fp: int, fn: int, n_neg: int, n_pos: int, alpha: float) -> float:
    """Certified μ from one threshold test's counts, holding at 1 − alpha.

    The Clopper–Pearson upper bounds ᾱ on FPR and β̄ on FNR each take alpha/2 so
    they hold jointly; any test of a μ-GDP mechanism has FNR ≥ T_μ(FPR) and T_μ
    decreases in μ, so μ ≥ Φ⁻¹(1−ᾱ) − Φ⁻¹(β̄).  Zero when no positive bound.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    fpr_upper = cp_upper(fp, n_neg, alpha / 2.0)
    fnr_upper = cp_upper(fn, n_pos, alpha / 2.0)
    return mu_from_rates(fpr_upper, fnr_upper)


def curve_epsilon(mu_lb: float, delta: float) -> float:
    """ε certified at δ if the privacy curve is Gaussian: gdp_epsilon(δ, μ_LB)."""
    return gdp_epsilon(delta, mu_lb)


def curve_violation_pvalue(fp: int, fn: int, n_neg: int, n_pos: int, claimed_mu: float) -> float:
    """p-value of "the claimed μ-GDP curve holds" from one test's counts (for Holm).

    The smallest alpha at which mu_lower_bound exceeds claimed_mu, found by bisection
    on the monotone map alpha ↦ mu_lower_bound.
    """
    if mu_lower_bound(fp, fn, n_neg, n_pos, 1.0 - 1e-12) <= claimed_mu:
        return 1.0
    low, high = 1e-300, 1.0 - 1e-12
    if mu_lower_bound(fp, fn, n_neg, n_pos, low) > claimed_mu:
        return low
    for _ in range(200):
        mid = math.exp(0.5 * (math.log(low) + math.log(high))) if high < 1e-3 else 0.5 * (low + high)
        if mu_lower_bound(fp, fn, n_neg, n_pos, mid) > claimed_mu:
            high = mid
        else:
            low = mid
        if high - low < 1e-12 * high:
            break
    return float(high)


def select_curve_threshold(train_pos_scores, train_neg_scores, n_cert: int,
                           alpha: float) -> float:
    """Threshold maximizing the projected μ lower bound on the training split.

    A test flags a release as "positive" when its score ≥ threshold. Each candidate's training rates are
    taken at a pessimistic upper bound (:func:`audit.selection.rate_upper`, two-sided), projected as
    counts on n_cert fresh samples per side and scored with the bound of :func:`mu_lower_bound`; the
    projected curve is averaged over neighbouring thresholds before its maximum is taken, so that a
    lucky tail of the training split (winner's curse) does not win over the stable centre.
    """
    from .selection import SELECTION_PESSIMISM_TWO_SIDED, SMOOTHING_WINDOW, moving_average, rate_upper

    pos = np.sort(np.asarray(train_pos_scores, dtype=float))
    neg = np.sort(np.asarray(train_neg_scores, dtype=float))
    candidates = np.unique(np.quantile(np.concatenate([pos, neg]), np.linspace(0.0, 1.0, 1601)))
    fp_train = neg.size - np.searchsorted(neg, candidates, side="left")
    fn_train = np.searchsorted(pos, candidates, side="left")
    fpr = rate_upper(fp_train, neg.size, SELECTION_PESSIMISM_TWO_SIDED, True)
    fnr = rate_upper(fn_train, pos.size, SELECTION_PESSIMISM_TWO_SIDED, True)
    fp = np.minimum(np.rint(fpr * n_cert), n_cert)
    fn = np.minimum(np.rint(fnr * n_cert), n_cert)
    fpr_upper = np.where(fp >= n_cert, 1.0,
                         beta_dist.ppf(1.0 - alpha / 2.0, fp + 1, np.maximum(n_cert - fp, 1)))
    fnr_upper = np.where(fn >= n_cert, 1.0,
                         beta_dist.ppf(1.0 - alpha / 2.0, fn + 1, np.maximum(n_cert - fn, 1)))
    with np.errstate(invalid="ignore"):
        projected = norm.isf(fpr_upper) - norm.ppf(fnr_upper)  # same bound as mu_lower_bound
    projected = np.where(np.isfinite(projected), projected, -np.inf)
    if candidates.size >= 20 * SMOOTHING_WINDOW:
        projected = moving_average(np.maximum(projected, -10.0), SMOOTHING_WINDOW)
    return float(candidates[int(np.argmax(projected))])
