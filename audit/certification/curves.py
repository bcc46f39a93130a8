"""Trade-off curves of claims and their certified tests: Gaussian-DP (μ) and privacy profiles.

Dong, Roth & Su, "Gaussian Differential Privacy" (JRSS-B 2022).  A mechanism is
μ-GDP when every test between its releases on neighbouring inputs has
FNR ≥ T_μ(FPR) with T_μ the Gaussian trade-off curve (Def. 2.7).  A Gaussian
mechanism with sensitivity Δ and noise σ is μ = Δ/σ-GDP.

A privacy profile ((ε_i, δ_i), ...) (a privacy-loss distribution's δ(ε), for composed and subsampled
mechanisms) promises (ε_i, δ_i)-DP at every point, so every test has FPR·e^{ε_i} + FNR ≥ 1 − δ_i and
FNR·e^{ε_i} + FPR ≥ 1 − δ_i (Kairouz, Oh & Viswanath 2015, Thm. 2.1); a certified (FPR, FNR) point that
breaks one of these inequalities violates the profile. The certified quantity is the ε excess: the
largest, over the profile's points, of the ε certified at δ_i minus the ε_i claimed there (> 0: violated).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from audit.certification.bounds import cp_upper
from pgc.errors import UserError

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
    return float(norm.cdf(-epsilon / mu + mu / 2.0) - math.exp(epsilon + float(norm.logcdf(-epsilon / mu - mu / 2.0))))


def gdp_epsilon(delta: float, mu: float) -> float:
    """Smallest ε ≥ 0 with gdp_delta(ε, μ) ≤ δ (inverse of Cor. 2.13)."""
    if not 0.0 < delta < 1.0:
        raise UserError(f"delta must lie in (0, 1), got {delta}")
    if mu <= 0.0 or gdp_delta(0.0, mu) <= delta:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    upper = 1.0
    while gdp_delta(upper, mu) > delta:
        upper *= 2.0
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, upper, xtol=1e-12, rtol=1e-12))


def gdp_mu_for(epsilon: float, delta: float) -> float:
    """The μ of a μ-GDP mechanism that is exactly (ε, δ)-DP (root of Cor. 2.13)."""
    if epsilon < 0.0 or not 0.0 < delta < 1.0:
        raise UserError(f"need epsilon >= 0 and delta in (0, 1), got ({epsilon}, {delta})")
    upper = 1.0
    while gdp_delta(epsilon, upper) < delta:
        upper *= 2.0
    return float(optimize.brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-12, upper, xtol=1e-14, rtol=1e-12))


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
        raise UserError(f"alpha must lie in (0, 1), got {alpha}")
    fpr_upper = cp_upper(fp, n_neg, alpha / 2.0)
    fnr_upper = cp_upper(fn, n_pos, alpha / 2.0)
    return mu_from_rates(fpr_upper, fnr_upper)


def curve_epsilon(mu_lb: float, delta: float) -> float:
    """ε certified at δ if the privacy curve is Gaussian: gdp_epsilon(δ, μ_LB)."""
    return gdp_epsilon(delta, mu_lb)


def curve_violation_pvalue(fp: int, fn: int, n_neg: int, n_pos: int, claimed_mu: float) -> float:
    """p-value of "the claimed μ-GDP curve holds" from one test's counts (for Holm): the smallest alpha at
    which mu_lower_bound exceeds claimed_mu (bisection on the monotone map alpha ↦ mu_lower_bound)."""
    return _smallest_rejecting_alpha(lambda a: mu_lower_bound(fp, fn, n_neg, n_pos, a) > claimed_mu)


def select_curve_threshold(
    train_pos_scores,
    train_neg_scores,
    n_cert: int,
    alpha: float,
    profile: tuple[tuple[float, float], ...] | None = None,
) -> float:
    """The threshold of :func:`curve_projection`."""
    return curve_projection(train_pos_scores, train_neg_scores, n_cert, alpha, profile)[0]


def curve_projection(
    train_pos_scores,
    train_neg_scores,
    n_cert: int,
    alpha: float,
    profile: tuple[tuple[float, float], ...] | None = None,
) -> tuple[float, float]:
    """(threshold, its projected bound): the threshold maximizing the projected curve bound on the training split,
    the μ lower bound, or with a ``profile`` the ε excess over it (:func:`profile_excess`).

    A test flags a release as "positive" when its score ≥ threshold. Each candidate's training rates are
    taken at a pessimistic upper bound (:func:`audit.statistics.selection.rate_upper`, two-sided), projected as
    counts on n_cert fresh samples per side and scored with the bound of :func:`mu_lower_bound` (or
    :func:`profile_excess`); the projected curve is averaged over neighbouring thresholds before its maximum
    is taken, so that a lucky tail of the training split (winner's curse) does not win over the stable centre.
    """
    from audit.statistics.selection import SELECTION_PESSIMISM_TWO_SIDED, SMOOTHING_WINDOW, moving_average, rate_upper

    pos = np.sort(np.asarray(train_pos_scores, dtype=float))
    neg = np.sort(np.asarray(train_neg_scores, dtype=float))
    candidates = np.unique(np.quantile(np.concatenate([pos, neg]), np.linspace(0.0, 1.0, 1601)))
    fp_train = neg.size - np.searchsorted(neg, candidates, side="left")
    fn_train = np.searchsorted(pos, candidates, side="left")
    fpr = rate_upper(fp_train, neg.size, SELECTION_PESSIMISM_TWO_SIDED, True)
    fnr = rate_upper(fn_train, pos.size, SELECTION_PESSIMISM_TWO_SIDED, True)
    fp = np.minimum(np.rint(fpr * n_cert), n_cert)
    fn = np.minimum(np.rint(fnr * n_cert), n_cert)
    fpr_upper = np.where(fp >= n_cert, 1.0, beta_dist.ppf(1.0 - alpha / 2.0, fp + 1, np.maximum(n_cert - fp, 1)))
    fnr_upper = np.where(fn >= n_cert, 1.0, beta_dist.ppf(1.0 - alpha / 2.0, fn + 1, np.maximum(n_cert - fn, 1)))
    if profile is None:
        with np.errstate(invalid="ignore"):
            projected = norm.isf(fpr_upper) - norm.ppf(fnr_upper)  # same bound as mu_lower_bound
    else:
        projected = np.max(profile_excesses(fpr_upper, fnr_upper, profile), axis=-1)
    projected = np.where(np.isfinite(projected), projected, -np.inf)
    if candidates.size >= 20 * SMOOTHING_WINDOW:
        projected = moving_average(np.maximum(projected, -10.0), SMOOTHING_WINDOW)
    best = int(np.argmax(projected))
    return float(candidates[best]), float(projected[best])


def profile_epsilons(fpr_upper, fnr_upper, profile: tuple[tuple[float, float], ...]) -> np.ndarray:
    """ε certified at each profile point's δ_i by upper rates (ᾱ, β̄) (arrays broadcast against the points):
    max(log(1 − δ_i − β̄) − log ᾱ, log(1 − δ_i − ᾱ) − log β̄), −inf where neither is positive."""
    eps_i, delta_i = (np.asarray(v, dtype=float) for v in zip(*profile, strict=True))
    a = np.asarray(fpr_upper, dtype=float)[..., None]
    b = np.asarray(fnr_upper, dtype=float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.where(
            (1.0 - delta_i - b > 0) & (a > 0),
            np.log(np.maximum(1.0 - delta_i - b, 1e-300)) - np.log(a),
            np.where(1.0 - delta_i - b > 0, np.inf, -np.inf),
        )
        two = np.where(
            (1.0 - delta_i - a > 0) & (b > 0),
            np.log(np.maximum(1.0 - delta_i - a, 1e-300)) - np.log(b),
            np.where(1.0 - delta_i - a > 0, np.inf, -np.inf),
        )
    return np.maximum(one, two)


def profile_excesses(fpr_upper, fnr_upper, profile: tuple[tuple[float, float], ...]) -> np.ndarray:
    """Certified ε minus claimed ε_i at each profile point (:func:`profile_epsilons`; > 0: violated there)."""
    return profile_epsilons(fpr_upper, fnr_upper, profile) - np.array([e for e, _ in profile])


def profile_tradeoff(alpha, profile: tuple[tuple[float, float], ...]) -> np.ndarray:
    """The trade-off curve a privacy profile promises, FNR ≥ max over its (ε_i, δ_i) of max(0, 1 − δ_i −
    e^ε_i·FPR, e^−ε_i·(1 − δ_i − FPR)) at FPR = ``alpha`` (the same inequalities as :func:`profile_epsilons`)."""
    eps = np.array([p[0] for p in profile])[:, None]
    delta = np.array([p[1] for p in profile])[:, None]
    a = np.asarray(alpha, dtype=float)[None, :]
    return np.max(np.maximum(0.0, np.maximum(1.0 - delta - np.exp(eps) * a, np.exp(-eps) * (1.0 - delta - a))), axis=0)


def profile_point(
    fpr_upper: float, fnr_upper: float, profile: tuple[tuple[float, float], ...]
) -> tuple[float, float, float]:
    """(ε excess, δ_i, ε_i) at the profile point where the certified ε most exceeds (or comes closest to) the
    claimed ε_i; the excess is > 0 exactly when the point violates the profile."""
    excess = profile_excesses(fpr_upper, fnr_upper, profile)
    i = int(np.argmax(excess))
    return float(excess[i]), float(profile[i][1]), float(profile[i][0])


def profile_excess(
    fp: int, fn: int, n_neg: int, n_pos: int, alpha: float, profile: tuple[tuple[float, float], ...]
) -> tuple[float, float, float]:
    """Certified (ε excess, δ_i, ε_i) from one test's counts, holding at 1 − alpha: the Clopper–Pearson upper
    bounds on FPR and FNR each take alpha/2, as in :func:`mu_lower_bound`."""
    if not 0.0 < alpha < 1.0:
        raise UserError(f"alpha must lie in (0, 1), got {alpha}")
    return profile_point(cp_upper(fp, n_neg, alpha / 2.0), cp_upper(fn, n_pos, alpha / 2.0), profile)


def _smallest_rejecting_alpha(rejects) -> float:
    """Smallest α at which ``rejects(α)`` holds (monotone: larger α, smaller upper bounds), by bisection;
    1 when no α < 1 rejects."""
    with warnings.catch_warnings():  # scipy's beta quantile warns at the extreme α of the bisection's low end
        warnings.simplefilter("ignore", RuntimeWarning)
        return _bisect_alpha(rejects)


def _bisect_alpha(rejects) -> float:
    if not rejects(1.0 - 1e-12):
        return 1.0
    low, high = 1e-300, 1.0 - 1e-12
    if rejects(low):
        return low
    for _ in range(200):
        mid = math.exp(0.5 * (math.log(low) + math.log(high))) if high < 1e-3 else 0.5 * (low + high)
        if rejects(mid):
            high = mid
        else:
            low = mid
        if high - low < 1e-12 * high:
            break
    return float(high)


def profile_violation_pvalue(
    fp: int, fn: int, n_neg: int, n_pos: int, profile: tuple[tuple[float, float], ...]
) -> float:
    """p-value of "the claimed privacy profile holds" from one test's counts (for Holm)."""
    return _smallest_rejecting_alpha(lambda a: profile_excess(fp, fn, n_neg, n_pos, a, profile)[0] > 0.0)
