"""Noise calibration of the Gaussian mechanism: pure functions of (ε, δ, Δ₂), tested against known numbers.

For a query with L2 sensitivity Δ and noise N(0, σ²I) the privacy loss of two neighbours is Gaussian,
and the mechanism is (ε, δ)-DP exactly when (Balle & Wang 2018, Theorem 8)

    δ ≥ Φ(Δ/(2σ) − εσ/Δ) − e^ε · Φ(−Δ/(2σ) − εσ/Δ).                       (BW18, Thm. 8)

* :func:`gaussian_delta` is the right-hand side: the smallest δ the mechanism satisfies at ε;
* :func:`gaussian_epsilon` inverts it: the smallest ε at δ;
* :func:`analytic_gaussian_sigma` is the smallest σ meeting (ε, δ) (BW18, Algorithm 1; here by root
  finding on Thm. 8 directly, valid for every ε > 0);
* :func:`classic_gaussian_sigma` is the textbook σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm. A.1),
  proven only for ε ≤ 1.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from pgc.errors import UserError


def _check(epsilon: float, delta: float, sensitivity: float) -> None:
    if not (isinstance(epsilon, (int, float, np.floating)) and math.isfinite(epsilon) and epsilon > 0):
        raise UserError(f"epsilon must be a positive finite number, got {epsilon!r}")
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 < delta < 1.0):
        raise UserError(f"delta must lie in (0, 1), got {delta!r}")
    if not (isinstance(sensitivity, (int, float, np.floating)) and math.isfinite(sensitivity) and sensitivity > 0):
        raise UserError(f"sensitivity must be a positive finite number, got {sensitivity!r}")


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """δ(ε) of N(0, σ²) noise on a sensitivity-Δ query (BW18, Thm. 8), computed in log space."""
    if not (math.isfinite(sigma) and sigma > 0):
        raise UserError(f"sigma must be a positive finite number, got {sigma!r}")
    if not (epsilon >= 0):
        raise UserError(f"epsilon must be >= 0, got {epsilon!r}")
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = float(log_ndtr(a - b))
    second = epsilon + float(log_ndtr(-a - b))
    if second >= first:
        return 0.0
    return float(math.exp(first) * -math.expm1(second - first))


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest ε at which N(0, σ²) noise on a sensitivity-Δ query is (ε, δ)-DP (inverse of Thm. 8)."""
    if not (0.0 < delta < 1.0):
        raise UserError(f"delta must lie in (0, 1), got {delta!r}")
    if gaussian_delta(sigma, 0.0, sensitivity) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(sigma, hi, sensitivity) > delta:
        hi *= 2.0
    return float(brentq(lambda e: gaussian_delta(sigma, e, sensitivity) - delta, 0.0, hi, xtol=1e-14, rtol=1e-14))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ with N(0, σ²) (ε, δ)-DP for a sensitivity-Δ query (BW18, Alg. 1 / Thm. 8)."""
    _check(epsilon, delta, sensitivity)
    lo, hi = 1e-3 * sensitivity, sensitivity
    while gaussian_delta(hi, epsilon, sensitivity) > delta:
        hi *= 2.0
    while gaussian_delta(lo, epsilon, sensitivity) <= delta:
        lo /= 2.0
    return float(brentq(lambda s: gaussian_delta(s, epsilon, sensitivity) - delta, lo, hi, xtol=1e-15 * hi, rtol=1e-14))


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm. A.1; the proof needs ε ≤ 1)."""
    _check(epsilon, delta, sensitivity)
    if epsilon > 1.0:
        raise UserError(
            f"the classic Gaussian calibration is proven only for epsilon <= 1 (got {epsilon!r}); "
            "use the analytic one (gaussian-analytic)"
        )
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
