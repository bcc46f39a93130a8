"""Exact output likelihoods of the catalogue's broken algorithms: the log-probability (a density in the released
values, a mass in the ⊥ / above / absent pattern) of each output row under an input ``a``, from the algorithms'
definitions (:mod:`pgc.catalogue.algorithms`, :mod:`pgc.catalogue.svt`) and their parameters at ε = 0.1.

The sparse vector variants integrate the threshold noise ρ out numerically on a fixed grid (:data:`GRID`, ±800
around the threshold, step 0.1: ρ's scale is at most 40, so the grid holds all but e^−20 of its mass); every other
likelihood is closed form. The benchmark that uses them (:mod:`pgc.benchmarks.catalogue_oracle`) needs the privacy
loss ln p_a(o) − ln p_a′(o) of sampled outputs, so a constant factor common to both inputs cancels.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

GRID = np.linspace(-800.0, 800.0, 16_001)
LOG_STEP = math.log(GRID[1] - GRID[0])


def laplace_logpdf(x: np.ndarray, b: float) -> np.ndarray:
    return -np.abs(x) / b - math.log(2.0 * b)


def laplace_logcdf(x: np.ndarray, b: float) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return np.where(x < 0, math.log(0.5) + np.minimum(x, 0.0) / b, np.log1p(-0.5 * np.exp(-np.abs(x) / b)))


def laplace_logsf(x: np.ndarray, b: float) -> np.ndarray:
    return laplace_logcdf(-np.asarray(x, dtype=np.float64), b)


def exponential_logpdf(x: np.ndarray, b: float) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return np.where(x >= 0, -x / b - math.log(b), -np.inf)


def exponential_logcdf(x: np.ndarray, b: float) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(x > 0, np.log(-np.expm1(-np.maximum(x, 1e-300) / b)), -np.inf)


def noisy_max_value(a: np.ndarray, out: np.ndarray, b: float, exponential: bool) -> np.ndarray:
    """ReportNoisyMax3 / 4: the density of max_i(a_i + noise_i) at each output, noise Lap(b) or Exp(b):
    Σ_i f(v − a_i) Π_{j≠i} F(v − a_j)."""
    d = out[:, :1] - np.asarray(a, dtype=np.float64)[None, :]
    logpdf = exponential_logpdf(d, b) if exponential else laplace_logpdf(d, b)
    logcdf = exponential_logcdf(d, b) if exponential else laplace_logcdf(d, b)
    k = d.shape[1]
    terms = [logpdf[:, i] + logcdf[:, [j for j in range(k) if j != i]].sum(axis=1) for i in range(k)]
    return logsumexp(np.stack(terms, axis=1), axis=1)


def laplace_entries(a: np.ndarray, out: np.ndarray, b: float, prefix_sums: bool = False) -> np.ndarray:
    """Independent a_i + Lap(b) per entry (NoisyHist2); ``prefix_sums``: the output is their running sum
    (PrefixSum), a map of determinant 1, so the entries are its differences."""
    entries = np.diff(out, axis=1, prepend=0.0) if prefix_sums else out
    return laplace_logpdf(entries - np.asarray(a, dtype=np.float64)[None, :], b).sum(axis=1)


# ln 0 inside matrix products (0 · −inf is NaN): far below any log-probability the grid reaches (about −100)
LOG_ZERO = -1e4


def _side_logs(a: np.ndarray, t: float, b_nu: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Per query j and grid point r: ln P(above | ρ = r) and ln P(below | ρ = r), floored at :data:`LOG_ZERO`."""
    x = t + GRID[None, :] - a[:, None]
    if b_nu is None:
        up = np.where(x <= 0, 0.0, LOG_ZERO)
        return up, np.where(x <= 0, LOG_ZERO, 0.0)
    return np.maximum(laplace_logsf(x, b_nu), LOG_ZERO), np.maximum(laplace_logcdf(x, b_nu), LOG_ZERO)


def svt_booleans(a: np.ndarray, out: np.ndarray, t: float, b_rho: float, b_nu: float | None) -> np.ndarray:
    """SVT1, SVT4, SVT5, SVT6 (one threshold noise ρ ~ Lap(b_rho) for the whole run): the mass of each row's
    pattern of above (1), below (0) and absent (NaN, after the algorithm stopped) answers, every distinct pattern
    integrated at once (one matrix product per block of patterns)."""
    a = np.asarray(a, dtype=np.float64)
    codes = np.where(np.isnan(out), 2, out).astype(np.int8)
    patterns, inverse = np.unique(codes, axis=0, return_inverse=True)
    up, down = _side_logs(a, t, b_nu)
    log_rho = laplace_logpdf(GRID, b_rho)
    mass = np.empty(len(patterns))
    for start in range(0, len(patterns), 64):
        block = patterns[start : start + 64]
        acc = (block == 1).astype(np.float64) @ up + (block == 0).astype(np.float64) @ down + log_rho[None, :]
        mass[start : start + 64] = logsumexp(acc, axis=1) + LOG_STEP
    return mass[inverse.ravel()]


def svt_values(a: np.ndarray, out: np.ndarray, c: int, t: float, b_rho: float, b_nu: float) -> np.ndarray:
    """SVT3: the noisy answer a_j + ν_j released above the threshold, ⊥ (NaN) below it, NaN after the c-th
    answer. Given ρ the answers are independent; an answered j needs v_j ≥ t + ρ, so the likelihood is
    Π_answered f_ν(v_j − a_j) · ∫_{−∞}^{min v − t} f_ρ(r) Π_⊥ F_ν(t + r − a_j) dr."""
    a = np.asarray(a, dtype=np.float64)
    answered = ~np.isnan(out)
    patterns, inverse = np.unique(answered, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    _, below = _side_logs(a, t, b_nu)
    log_rho = laplace_logpdf(GRID, b_rho)
    result = np.empty(out.shape[0])
    for i, row in enumerate(patterns):
        rows = inverse == i
        hit = np.flatnonzero(row)
        stop = hit[-1] + 1 if hit.size == c else out.shape[1]
        acc = log_rho.copy()
        for j in range(stop):
            if not row[j]:  # ⊥: below the threshold
                acc += below[j]
        integral = np.logaddexp.accumulate(acc) + LOG_STEP  # ln ∫_{−∞}^{r} at every grid point r
        if hit.size == 0:
            result[rows] = integral[-1]
            continue
        values = out[np.ix_(rows, hit)]
        upper = values.min(axis=1) - t
        result[rows] = np.interp(upper, GRID, integral, left=-np.inf) + laplace_logpdf(values - a[hit], b_nu).sum(1)
    return result


def _svt34(a: np.ndarray, out: np.ndarray, eps: float, c: int, t: float) -> np.ndarray:
    half = out.shape[1] // 2
    three = svt_values(a, out[:, :half], c, t, 2.0 / eps, c / (eps / 2.0))
    four = svt_booleans(a, out[:, half:], t, 4.0 / eps, 1.0 / (eps - eps / 4.0))
    return three + four


def log_likelihood(name: str, parameters: dict) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(a, out)``: the log-likelihood of each row of ``out`` under input ``a`` for the broken catalogue
    algorithm ``name`` with its registry ``parameters``; KeyError for an algorithm this module does not hold."""
    eps = parameters["eps"]
    c, t = parameters.get("c", 1), parameters.get("t", 1.0)
    table: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
        "NoisyHist2": lambda a, o: laplace_entries(a, o, eps),
        "PrefixSum": lambda a, o: laplace_entries(a, o, 1.0 / eps, prefix_sums=True),
        "ReportNoisyMax3": lambda a, o: noisy_max_value(a, o, 2.0 / eps, exponential=False),
        "ReportNoisyMax4": lambda a, o: noisy_max_value(a, o, 2.0 / eps, exponential=True),
        "SVT3": lambda a, o: svt_values(a, o, c, t, 2.0 / eps, c / (eps / 2.0)),
        "SVT4": lambda a, o: svt_booleans(a, o, t, 4.0 / eps, 1.0 / (eps - eps / 4.0)),
        "SVT5": lambda a, o: svt_booleans(a, o, t, 2.0 / eps, None),
        "SVT6": lambda a, o: svt_booleans(a, o, t, 2.0 / eps, 1.0 / (eps / 2.0)),
        "SVT34Parallel": lambda a, o: _svt34(a, o, eps, c, t),
    }
    return table[name]
