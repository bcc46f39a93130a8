"""Pure bound math: from a distinguishing test's errors to a certified ε lower bound.

A test T chooses between two neighbouring inputs x (the "positive" side) and x' (the "negative" side)
from one output of the mechanism. With FPR = P[T = 1 | x'] and FNR = P[T = 0 | x], (ε, δ)-DP
applied to the events {T = 1} and {T = 0} gives (Kairouz et al. 2015; Jagielski et al. 2020)

    1 − δ − FNR ≤ e^ε · FPR        and        1 − δ − FPR ≤ e^ε · FNR,

so   ε ≥ max{ ln((1 − δ − FNR)/FPR), ln((1 − δ − FPR)/FNR) }.

The rates are only estimated from n samples per side, so each is replaced by its exact one-sided
Clopper–Pearson upper bound (statsmodels ``proportion_confint(method="beta")``). The FPR bound holds
with probability ≥ 1 − α_fp and the FNR bound with ≥ 1 − α_fn; by the union bound both hold with
probability ≥ 1 − α for α = α_fp + α_fn, and then BOTH directions above are valid at once, so the
maximum needs no further split. ``fp_share`` = α_fp/α is fixed before the certification samples are
drawn (the auditor picks it on its training split).

Everything here is a plain function of counts; tests check it against hand-computed numbers.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Protocol, TypeAlias, overload

import numpy as np
import numpy.typing as npt
from statsmodels.stats.proportion import proportion_confint

from pgc.errors import UserError

FloatArray: TypeAlias = npt.NDArray[np.float64]
# a bound of scalar counts is a float, of arrays of counts an array of the same shape
FloatOrArray: TypeAlias = float | FloatArray


def _check_alpha(alpha: float) -> float:
    if not (0.0 < alpha < 1.0):
        raise UserError(f"alpha must lie in (0, 1), got {alpha!r}")
    return float(alpha)


def _check_counts(k: npt.ArrayLike, n: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise UserError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    return k, n


@overload
def cp_upper(k: float, n: float, alpha: float) -> float: ...
@overload
def cp_upper(k: npt.ArrayLike, n: npt.ArrayLike, alpha: float) -> FloatOrArray: ...
def cp_upper(k: npt.ArrayLike, n: npt.ArrayLike, alpha: float) -> FloatOrArray:
    """Exact one-sided Clopper–Pearson upper bound: P[p ≤ bound] ≥ 1 − alpha.

    Equals the upper end of ``proportion_confint(k, n, alpha=2·alpha, method="beta")``; ``k`` may be a
    non-integer (projected) count. Closed form at k = 0: 1 − alpha^(1/n).
    """
    alpha = _check_alpha(alpha)
    k, n = _check_counts(k, n)
    _, upper = proportion_confint(k, n, alpha=2.0 * alpha, method="beta")
    upper = np.where(k >= n, 1.0, upper)
    return float(upper) if np.ndim(upper) == 0 else np.asarray(upper)


@overload
def cp_lower(k: float, n: float, alpha: float) -> float: ...
@overload
def cp_lower(k: npt.ArrayLike, n: npt.ArrayLike, alpha: float) -> FloatOrArray: ...
def cp_lower(k: npt.ArrayLike, n: npt.ArrayLike, alpha: float) -> FloatOrArray:
    """Exact one-sided Clopper–Pearson lower bound: P[p ≥ bound] ≥ 1 − alpha (0 at k = 0)."""
    alpha = _check_alpha(alpha)
    k, n = _check_counts(k, n)
    lower, _ = proportion_confint(k, n, alpha=2.0 * alpha, method="beta")
    lower = np.where(k <= 0, 0.0, lower)
    return float(lower) if np.ndim(lower) == 0 else np.asarray(lower)


def exp_or_inf(x: float) -> float:
    """e^x as a float, +inf where it overflows (ε of 710 or more) instead of raising ``OverflowError``."""
    x = float(x)
    return math.inf if x > _LOG_FLOAT_MAX else math.exp(x)


_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


@overload
def epsilon_from_rates(fpr: float, fnr: float, delta: float = 0.0) -> float: ...
@overload
def epsilon_from_rates(fpr: npt.ArrayLike, fnr: npt.ArrayLike, delta: float = 0.0) -> FloatOrArray: ...
def epsilon_from_rates(fpr: npt.ArrayLike, fnr: npt.ArrayLike, delta: float = 0.0) -> FloatOrArray:
    """ε implied by (upper bounds on) FPR and FNR: max over both directions of ln((1−δ−FNR)/FPR).

    Returns 0 when no direction gives a positive value and +inf when a rate bound is 0.
    """
    if not (0.0 <= delta < 1.0):
        raise UserError(f"delta must lie in [0, 1), got {delta!r}")
    fpr = np.asarray(fpr, dtype=np.float64)
    fnr = np.asarray(fnr, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.where(1.0 - delta - fnr > 0, np.log(np.maximum(1.0 - delta - fnr, 1e-300)) - np.log(fpr), -np.inf)
        two = np.where(1.0 - delta - fpr > 0, np.log(np.maximum(1.0 - delta - fpr, 1e-300)) - np.log(fnr), -np.inf)
    out = np.maximum(np.maximum(one, two), 0.0)
    return float(out) if out.ndim == 0 else out


@overload
def epsilon_lower_bound(
    false_positives: float,
    negatives: float,
    false_negatives: float,
    positives: float,
    alpha: float,
    delta: float = 0.0,
    fp_share: float = 0.5,
) -> float: ...
@overload
def epsilon_lower_bound(
    false_positives: npt.ArrayLike,
    negatives: npt.ArrayLike,
    false_negatives: npt.ArrayLike,
    positives: npt.ArrayLike,
    alpha: float,
    delta: float = 0.0,
    fp_share: float = 0.5,
) -> FloatOrArray: ...
def epsilon_lower_bound(
    false_positives: npt.ArrayLike,
    negatives: npt.ArrayLike,
    false_negatives: npt.ArrayLike,
    positives: npt.ArrayLike,
    alpha: float,
    delta: float = 0.0,
    fp_share: float = 0.5,
) -> FloatOrArray:
    """Certified ε lower bound at confidence 1 − alpha from a test's error counts.

    ``false_positives`` of ``negatives`` samples from x' said "x"; ``false_negatives`` of ``positives``
    samples from x said "x'". α is split α_fp = fp_share·α, α_fn = (1 − fp_share)·α (see module doc).
    """
    alpha = _check_alpha(alpha)
    if not (0.0 < fp_share < 1.0):
        raise UserError(f"fp_share must lie in (0, 1), got {fp_share!r}")
    fpr_ub = cp_upper(false_positives, negatives, fp_share * alpha)
    fnr_ub = cp_upper(false_negatives, positives, (1.0 - fp_share) * alpha)
    return epsilon_from_rates(fpr_ub, fnr_ub, delta)


def delta_lower_bound(
    false_positives: float,
    negatives: float,
    false_negatives: float,
    positives: float,
    alpha: float,
    epsilon: float,
    fp_share: float = 0.5,
) -> float:
    """Certified δ lower bound at a given ε: max over directions of 1 − FNR_ub − e^ε·FPR_ub (≥ 0)."""
    fpr_ub = cp_upper(false_positives, negatives, fp_share * _check_alpha(alpha))
    fnr_ub = cp_upper(false_negatives, positives, (1.0 - fp_share) * alpha)
    e = exp_or_inf(epsilon)  # the rate bounds are > 0 (alpha < 1), so e·rate is never inf·0
    return float(max(0.0, 1.0 - fnr_ub - e * fpr_ub, 1.0 - fpr_ub - e * fnr_ub))


def max_certifiable_epsilon(n: int, alpha: float, delta: float = 0.0, fp_share: float = 0.5) -> float:
    """The largest ε any test can certify with n samples per side: a perfect test (0 errors).

    With 0 errors the rate bounds are 1 − α_i^(1/n) ≈ ln(1/α_i)/n, so the cap grows only like
    ln(n / ln(1/α)); an auditor can never show more than this, whatever the mechanism.
    """
    return epsilon_lower_bound(0, n, 0, n, alpha, delta, fp_share)


def smallest_detectable_delta(n: int, alpha: float, epsilon: float, fp_share: float = 0.5) -> float:
    """The smallest δ-violation at ε that n samples per side can certify, at best.

    Picture an event of probability δ under x and probability 0 under x' (a pure δ failure, as a
    catastrophic leak with rate δ). With k of n hits under x and none under x', the certified δ
    lower bound is CP_lower(k) − e^ε·CP_upper(0). The answer is the smallest rate δ = k/n whose
    expected count k already gives a positive certified bound.
    """
    alpha = _check_alpha(alpha)
    e = exp_or_inf(epsilon)
    fp_ub = cp_upper(0, n, fp_share * alpha)
    if not math.isfinite(e * fp_ub) or e * fp_ub >= 1.0:
        return 1.0
    lo, hi = 1, n  # binary search on the hit count k: CP_lower is increasing in k
    while lo < hi:
        mid = (lo + hi) // 2
        if cp_lower(mid, n, (1.0 - fp_share) * alpha) - e * fp_ub > 0:
            hi = mid
        else:
            lo = mid + 1
    return lo / n


P_VALUE_FLOOR = 1e-300


def smallest_rejecting_alpha(exceeds: Callable[[float], bool]) -> float:
    """The p-value of a bound that grows with α: the smallest α at which ``exceeds(log α)`` holds (the bound exceeds
    the claim), by bisection on log α (relative precision ~1e-12); the returned α itself satisfies it. 1.0 when even
    α → 1 does not, :data:`P_VALUE_FLOOR` when every representable α does."""
    lo, hi = math.log(P_VALUE_FLOOR), math.log1p(-1e-12)
    if not exceeds(hi):
        return 1.0
    if exceeds(lo):
        return P_VALUE_FLOOR
    while hi - lo > 1e-12 * max(1.0, abs(lo)):  # invariant: not exceeds(lo), exceeds(hi)
        mid = 0.5 * (lo + hi)
        if exceeds(mid):
            hi = mid
        else:
            lo = mid
    return float(math.exp(hi))


def claim_p_value(
    false_positives: float,
    negatives: float,
    false_negatives: float,
    positives: float,
    claimed_epsilon: float,
    delta: float = 0.0,
    fp_share: float = 0.5,
) -> float:
    """p-value of H0 "true ε ≤ claimed_epsilon" from a test's error counts.

    The smallest α at which :func:`epsilon_lower_bound` (same counts, δ, fp_share) exceeds the claim:
    the bound grows with α (the Clopper–Pearson rate bounds shrink), so the set of such α is an
    interval (p, 1) and rejecting H0 whenever α > p is exactly "ε_LB(α) > claim". Found by bisection on
    log α (relative precision ~1e-12); the returned α itself satisfies ε_LB(α) > claim. Returns 1.0
    when even α → 1 does not exceed the claim (and for an infinite claim), and :data:`P_VALUE_FLOOR`
    when the bound exceeds the claim at every representable α.
    """
    claimed_epsilon = float(claimed_epsilon)
    if math.isnan(claimed_epsilon):
        raise UserError("claimed_epsilon must be a number")
    if not (0.0 < fp_share < 1.0):
        raise UserError(f"fp_share must lie in (0, 1), got {fp_share!r}")
    _check_counts(false_positives, negatives)
    _check_counts(false_negatives, positives)
    if math.isinf(claimed_epsilon) and claimed_epsilon > 0:
        return 1.0

    def exceeds(log_alpha: float) -> bool:
        with warnings.catch_warnings():  # boost's beta quantile warns (harmlessly) at α near 1e-300
            warnings.simplefilter("ignore", RuntimeWarning)
            return (
                epsilon_lower_bound(
                    false_positives, negatives, false_negatives, positives, math.exp(log_alpha), delta, fp_share
                )
                > claimed_epsilon
            )

    return smallest_rejecting_alpha(exceeds)


class ErrorCounts(Protocol):
    """A certified test's counts, as :func:`counts_p_value` reads them (an
    :class:`audit.certification.tester.EpsilonBound`)."""

    @property
    def false_positives(self) -> float: ...
    @property
    def false_negatives(self) -> float: ...
    @property
    def samples_per_side(self) -> float: ...
    @property
    def delta(self) -> float: ...
    @property
    def fp_share(self) -> float: ...


def counts_p_value(counts: ErrorCounts, claimed_epsilon: float) -> float:
    """:func:`claim_p_value` of a certified test's counts: any object with ``false_positives``,
    ``false_negatives``, ``samples_per_side``, ``delta`` and ``fp_share`` (an EpsilonBound, a channel
    audit row)."""
    return claim_p_value(
        counts.false_positives,
        counts.samples_per_side,
        counts.false_negatives,
        counts.samples_per_side,
        claimed_epsilon,
        counts.delta,
        counts.fp_share,
    )


def delta_claim_p_value(
    false_hits: float,
    negatives: float,
    misses: float,
    positives: float,
    epsilon: float,
    claimed_delta: float = 0.0,
    fp_share: float = 0.5,
) -> float:
    """p-value of H0 "the mechanism is (ε, claimed_delta)-DP" from an event test's counts.

    The smallest α at which :func:`delta_lower_bound` (same counts, ε, fp_share) exceeds the claimed δ
    (bisection on log α, as :func:`claim_p_value`); 1.0 when even α → 1 does not exceed it.
    """
    if not (0.0 <= claimed_delta < 1.0):
        raise UserError(f"claimed_delta must lie in [0, 1), got {claimed_delta!r}")
    _check_counts(false_hits, negatives)
    _check_counts(misses, positives)

    def exceeds(log_alpha: float) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return (
                delta_lower_bound(false_hits, negatives, misses, positives, math.exp(log_alpha), epsilon, fp_share)
                > claimed_delta
            )

    return smallest_rejecting_alpha(exceeds)
