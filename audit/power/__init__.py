"""Power of an audit: the smallest leak it would flag, and the samples that would decide a claim.

A leak of a given shape and size gives every threshold test a (FPR, FNR) pair; n fresh samples per
side give counts near n·FPR and n·FNR. Each count is taken at its normal-approximation quantile that
it stays below with probability √p (the two sides are independent), so the bound computed from those
counts at the best threshold is reached with probability ≥ p by the oracle test of that leak; p is
:func:`oracle_power` of the promised power, leaving room for the audit's own choice of test.
``detectable_epsilon`` is the smallest leak whose bound then exceeds the claim: a leak of that size
would have been flagged with probability ≥ power (checked by simulation in :mod:`audit.power.study`).

Leak shapes: a claim with a μ-GDP curve, or a claim with δ > 0, faces a Gaussian-shaped leak
(N(0, 1) vs N(μ, 1), μ calibrated to the leak's ε at the claim's δ); a pure ε claim (δ = 0) faces a
Laplace-shaped leak (Lap(0, 1/ε) vs Lap(1, 1/ε)), the shape of the additive noise that delivers ε-DP.

A claim with a privacy profile faces the same Gaussian-shaped leak; its curve test flags when the leak's
certified (FPR, FNR) point breaks one of the profile's (ε_i, δ_i) (:func:`audit.certification.curves.profile_excess`).

Tests: the threshold test certifies ε at the claim's δ (:func:`audit.certification.bounds.epsilon_from_rates`, the
α split between the two rates chosen among :data:`audit.statistics.selection.FP_SHARES`); the curve test
certifies μ (:func:`audit.certification.curves.mu_lower_bound`, α split evenly between its two rates). A row whose
claim has a curve runs both, at their shares of α (:func:`audit.certification.curves.split_alpha`), and is flagged
when either flags, so its detectable ε is the smaller of the two.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.stats import norm

from audit.certification import bounds
from audit.certification.curves import gdp_epsilon, gdp_mu_for, profile_excesses, split_alpha
from audit.statistics.selection import FP_SHARES

POWER = 0.8  # the flag probability ``detectable_epsilon`` promises


# The counts are computed for the ORACLE test (the best threshold of the true leak). The audit chooses its
# test on a training split, which costs power (most for a Laplace leak, whose best test sits in a thin
# tail); a quarter of the promised miss probability for the oracle (0.8 -> 0.95) leaves that room, and
# results/power/detectability.json checks the promise by simulation.
def oracle_power(power: float) -> float:
    return 1.0 - (1.0 - power) / 4.0


DECISIVE_MARGIN = 1.1  # a consistent row is decisive when detectable_epsilon ≤ 1.1 × the claim
_LARGEST_LEAK = 60.0  # ε (or μ) beyond which no leak is searched: the audit cannot flag the claim
GRID = 400  # thresholds scanned per leak
TOLERANCE = 1e-3  # relative precision of a detectable size


def _pessimistic_counts(rates: np.ndarray, n: int, z: float) -> np.ndarray:
    """Counts that Binomial(n, rate) stays below with probability Φ(z) (normal approximation)."""
    rates = np.clip(rates, 0.0, 1.0)
    return np.minimum(n, np.ceil(n * rates + z * np.sqrt(n * rates * (1.0 - rates))))


def gaussian_rates(mu: float) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, FNR) of the threshold tests [x ≥ t] on N(0, 1) vs N(μ, 1), over a grid of t."""
    t = np.linspace(-3.0, mu + 9.0, GRID)
    return norm.sf(t), norm.cdf(t - mu)


def laplace_rates(epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, FNR) of the tests [x ≥ t] on Lap(0, b) vs Lap(1, b), b = 1/ε, over a grid of t ≥ 1
    (where the likelihood ratio is e^ε; by symmetry the lower tail gives the same)."""
    b = 1.0 / epsilon
    t = 1.0 + b * np.linspace(0.0, 40.0, GRID)
    return 0.5 * np.exp(-t / b), 1.0 - 0.5 * np.exp(-(t - 1.0) / b)


def threshold_flag_bound(
    fpr: np.ndarray, fnr: np.ndarray, n: int, alpha: float, delta: float, power: float = POWER
) -> float:
    """The ε lower bound the best threshold test reaches with probability ≥ ``power`` on n per side."""
    fp, fn = _power_counts(fpr, fnr, n, power)
    best = 0.0
    for share in FP_SHARES:
        eps = bounds.epsilon_from_rates(
            bounds.cp_upper(fp, n, share * alpha), bounds.cp_upper(fn, n, (1.0 - share) * alpha), delta
        )
        best = max(best, float(np.max(eps)))
    return best


def _power_counts(fpr: np.ndarray, fnr: np.ndarray, n: int, power: float) -> tuple[np.ndarray, np.ndarray]:
    """(FP, FN) counts on n per side that the two sides stay below together with probability ≥ the oracle
    share of ``power`` (each at its √ quantile)."""
    z = float(norm.ppf(math.sqrt(oracle_power(power))))
    return _pessimistic_counts(fpr, n, z), _pessimistic_counts(fnr, n, z)


def curve_flag_bound(true_mu: float, n: int, alpha: float, power: float = POWER) -> float:
    """The μ lower bound the best curve test reaches with probability ≥ ``power`` on n per side."""
    fp, fn = _power_counts(*gaussian_rates(true_mu), n, power)
    fpr_upper = bounds.cp_upper(fp, n, alpha / 2.0)
    fnr_upper = bounds.cp_upper(fn, n, alpha / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.where((fpr_upper < 1.0) & (fnr_upper < 1.0), norm.isf(fpr_upper) - norm.ppf(fnr_upper), 0.0)
    return float(max(0.0, np.max(mu)))


def profile_flag_excess(true_mu: float, n: int, alpha: float, profile: tuple, power: float = POWER) -> float:
    """The ε excess over ``profile`` (:func:`audit.certification.curves.profile_excess`) that the best curve test
    reaches
    with probability ≥ ``power`` on n per side against a Gaussian leak of μ = ``true_mu``."""
    fp, fn = _power_counts(*gaussian_rates(true_mu), n, power)
    return float(
        np.max(profile_excesses(bounds.cp_upper(fp, n, alpha / 2.0), bounds.cp_upper(fn, n, alpha / 2.0), profile))
    )


def _smallest_flagged(flag_bound, claimed: float, lowest: float) -> float:
    """Smallest leak size s ≥ ``lowest`` with flag_bound(s) > claimed (bisection on a monotone map); ∞ if
    no leak up to the largest searched is flagged."""
    high = max(2.0 * lowest, lowest + 0.5)
    while flag_bound(high) <= claimed:
        if high >= _LARGEST_LEAK:
            return math.inf
        high = min(_LARGEST_LEAK, 2.0 * high)
    low = lowest
    for _ in range(40):
        mid = 0.5 * (low + high)
        low, high = (low, mid) if flag_bound(mid) > claimed else (mid, high)
        if high - low <= TOLERANCE * high:
            break
    return high


def detectable_mu(claimed_mu: float, n: int, alpha: float, power: float = POWER) -> float:
    """Smallest true μ whose Gaussian leak the curve test (at ``alpha``) flags against ``claimed_mu``."""
    return _smallest_flagged(lambda mu: curve_flag_bound(mu, n, alpha, power), claimed_mu, claimed_mu)


@functools.lru_cache(maxsize=4096)
def curve_detectable_epsilon(claimed_mu: float, delta: float, n: int, alpha: float, power: float = POWER) -> float:
    """The ε at δ of the smallest Gaussian leak the curve test (at ``alpha``) flags against ``claimed_mu``."""
    mu = detectable_mu(claimed_mu, n, alpha, power)
    return gdp_epsilon(delta, mu) if math.isfinite(mu) and delta > 0 else math.inf


def _threshold_flag(delta: float, n: int, alpha: float, power: float):
    """leak ε ↦ the threshold test's ε bound reached with probability ≥ power (Gaussian-shaped leak at
    δ > 0, Laplace-shaped at δ = 0)."""
    if delta > 0:
        return lambda eps: threshold_flag_bound(*gaussian_rates(gdp_mu_for(eps, delta)), n, alpha, delta, power)
    return lambda eps: threshold_flag_bound(*laplace_rates(eps), n, alpha, 0.0, power)


@functools.lru_cache(maxsize=4096)
def threshold_detectable_epsilon(claim_eps: float, delta: float, n: int, alpha: float, power: float = POWER) -> float:
    """Smallest ε of a leak (Gaussian-shaped at δ > 0, Laplace-shaped at δ = 0) that the threshold
    test flags against (claim_eps, δ) with probability ≥ ``power``."""
    return _smallest_flagged(_threshold_flag(delta, n, alpha, power), claim_eps, claim_eps)


@functools.lru_cache(maxsize=1024)
def profile_detectable_epsilon(profile: tuple, delta: float, n: int, alpha: float, power: float = POWER) -> float:
    """The ε at δ of the smallest Gaussian leak the curve test (at ``alpha``) flags against a claimed privacy
    profile (∞ at δ = 0: the leak's shape is calibrated at the claim's δ)."""
    if delta <= 0:
        return math.inf
    return _smallest_flagged(
        lambda eps: profile_flag_excess(gdp_mu_for(eps, delta), n, alpha, profile, power), 0.0, 1e-3
    )


@functools.lru_cache(maxsize=4096)
def detectable_epsilon(
    claim_eps: float,
    delta: float,
    n: int,
    alpha: float,
    claimed_mu: float | None = None,
    power: float = POWER,
    claimed_profile: tuple | None = None,
) -> float:
    """Smallest ε (at the claim's δ) of a leak this audit flags with probability ≥ ``power``: the threshold
    test alone, or — when the claim has a μ-GDP curve or a privacy profile — the threshold and curve tests at
    their shares of α, whichever flags the smaller leak."""
    if not (math.isfinite(claim_eps) and claim_eps > 0):
        return math.inf
    if claimed_mu is None and claimed_profile is None:
        return threshold_detectable_epsilon(claim_eps, delta, n, alpha, power)
    threshold_alpha, curve_alpha = split_alpha(alpha)
    curve = (
        curve_detectable_epsilon(claimed_mu, delta, n, curve_alpha, power)
        if claimed_mu is not None
        else profile_detectable_epsilon(claimed_profile, delta, n, curve_alpha, power)
    )
    return min(threshold_detectable_epsilon(claim_eps, delta, n, threshold_alpha, power), curve)


def flags_leak(
    leak_eps: float,
    claim_eps: float,
    delta: float,
    n: int,
    alpha: float,
    claimed_mu: float | None = None,
    power: float = POWER,
    claimed_profile: tuple | None = None,
) -> bool:
    """Whether this audit (n per side, ``alpha``) flags a leak of ``leak_eps`` against the claim with
    probability ≥ ``power``: detectable_epsilon(...) ≤ leak_eps, in one evaluation."""
    if claimed_mu is None and claimed_profile is None:
        return _threshold_flag(delta, n, alpha, power)(leak_eps) > claim_eps
    threshold_alpha, curve_alpha = split_alpha(alpha)
    if _threshold_flag(delta, n, threshold_alpha, power)(leak_eps) > claim_eps:
        return True
    if delta <= 0:
        return False
    if claimed_mu is not None:
        return curve_flag_bound(gdp_mu_for(leak_eps, delta), n, curve_alpha, power) > claimed_mu
    return profile_flag_excess(gdp_mu_for(leak_eps, delta), n, curve_alpha, claimed_profile, power) > 0.0


@functools.lru_cache(maxsize=1024)
def samples_to_flag(
    leak_eps: float,
    claim_eps: float,
    delta: float,
    alpha: float,
    claimed_mu: float | None = None,
    power: float = POWER,
    n_max: int = 10**9,
    claimed_profile: tuple | None = None,
) -> int | None:
    """Smallest n per side at which this audit flags a leak of ``leak_eps`` against the claim with
    probability ≥ ``power`` (doubling, then bisection to 1 %); None when no n up to ``n_max`` does."""

    def flags(n: int) -> bool:
        return flags_leak(leak_eps, claim_eps, delta, n, alpha, claimed_mu, power, claimed_profile)

    if not (math.isfinite(claim_eps) and claim_eps > 0):
        return None
    return smallest_sample_size(flags, n_max)


def smallest_sample_size(holds, n_max: int = 10**9) -> int | None:
    """Smallest n per side (doubling from 1,000, then bisection to 1 %) at which the monotone ``holds(n)`` is
    true; None when no n up to ``n_max`` makes it true."""
    high = 1000
    while not holds(high):
        high *= 2
        if high > n_max:
            return None
    low = high // 2
    while high - low > max(1, high // 100):
        mid = (low + high) // 2
        low, high = (low, mid) if holds(mid) else (mid, high)
    return high


def samples_to_decide(
    claim_eps: float,
    delta: float,
    alpha: float,
    claimed_mu: float | None = None,
    power: float = POWER,
    margin: float = DECISIVE_MARGIN,
    n_max: int = 10**9,
) -> int | None:
    """Smallest n per side whose detectable ε is ≤ ``margin`` × the claim: a consistent verdict there is
    decisive (None when no n up to ``n_max`` gets there)."""
    return samples_to_flag(margin * claim_eps, claim_eps, delta, alpha, claimed_mu, power, n_max)


def samples_to_leave_inconclusive(
    claim_eps: float,
    delta: float,
    alpha: float,
    claimed_mu: float | None = None,
    power: float = POWER,
    claimed_profile: tuple | None = None,
) -> int | None:
    """Smallest n per side at which the audit could flag a leak at all (the largest searched, ε = 60 at the
    claim's δ): from there on its verdict is no longer ``inconclusive``."""
    return samples_to_flag(_LARGEST_LEAK, claim_eps, delta, alpha, claimed_mu, power, claimed_profile=claimed_profile)
