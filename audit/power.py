"""Power of the curve audit: the smallest Gaussian-shaped leak it flags.

A μ-GDP pair of releases is N(0, 1) vs N(μ, 1) along the difference direction; a
threshold t gives FPR = Φ(−t) and FNR = Φ(t − μ).  The audit certifies
mu_lower_bound from the counts on n fresh samples per side (audit.curves) and
flags a claim of μ_c when that bound exceeds μ_c.  Counts are taken at their
normal-approximation quantile so that each side is no worse with probability
√power (the two sides are independent), which gives a flag probability ≥ power.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.stats import norm

from audit.curves import gdp_epsilon, gdp_mu_for, mu_lower_bound


def _pessimistic_count(rate: float, n: int, z: float) -> int:
    """Count exceeded with probability 1 − Φ(z) under Binomial(n, rate) (normal approx.)."""
    return int(min(n, math.ceil(n * rate + z * math.sqrt(n * rate * (1.0 - rate)))))


def flagged_mu_bound(true_mu: float, n: int, alpha: float, power: float) -> float:
    """μ lower bound the curve audit reaches with probability ≥ power at the best threshold."""
    z = float(norm.ppf(math.sqrt(power)))
    best = 0.0
    for threshold in np.linspace(-1.0, true_mu + 1.0, 121):
        fp = _pessimistic_count(float(norm.sf(threshold)), n, z)
        fn = _pessimistic_count(float(norm.cdf(threshold - true_mu)), n, z)
        best = max(best, mu_lower_bound(fp, fn, n, n, alpha))
    return best


def detectable_mu(claimed_mu: float, n: int, alpha: float, power: float = 0.8) -> float:
    """Smallest true μ whose leak the curve audit flags against claimed_mu w.p. ≥ power."""
    gap = lambda mu: flagged_mu_bound(mu, n, alpha, power) - claimed_mu
    upper = max(2.0 * claimed_mu, 1.0)
    while gap(upper) <= 0.0:
        upper *= 2.0
        if upper > 1e3:
            return math.inf
    return float(optimize.brentq(gap, claimed_mu, upper, xtol=1e-4))


def detectable_epsilon(claim_eps: float, delta: float, n: int, alpha: float,
                       power: float = 0.8) -> float:
    """Smallest ε whose Gaussian-shaped leak the curve audit flags against (claim_eps, δ)."""
    return gdp_epsilon(delta, detectable_mu(gdp_mu_for(claim_eps, delta), n, alpha, power))


def samples_to_decide(claim_eps: float, delta: float, alpha: float, power: float = 0.8,
                      margin: float = 1.1, n_max: int = 10**8) -> int:
    """Smallest n per side with detectable_epsilon ≤ margin × claim_eps (doubling + bisection)."""
    decides = lambda n: detectable_epsilon(claim_eps, delta, n, alpha, power) <= margin * claim_eps
    high = 1000
    while not decides(high):
        high *= 2
        if high > n_max:
            raise ValueError(f"no n up to {n_max} decides a claim of epsilon={claim_eps}")
    low = high // 2
    while high - low > max(1, high // 100):
        mid = (low + high) // 2
        low, high = (low, mid) if decides(mid) else (mid, high)
    return high
