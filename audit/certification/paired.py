"""The paired certificate: an exact Clopper–Pearson bound on a test's odds ratio from discordant pairs.

:mod:`audit.certification.bounds` bounds FPR and FNR separately, each at its share of α, and divides: the two
margins add. Here the i-th release under x and the i-th under x' (independent draws, paired by index before any
is scored) form a pair, and only the pairs where exactly one of the two lands in the event E = {T = 1} speak:
``only_positive`` pairs with the x-release in E alone, ``only_negative`` with the x'-release alone. Given their
number m, ``only_positive`` is exactly Binomial(m, ψ/(1 + ψ)) with ψ the event's odds ratio
p(1 − p′)/(p′(1 − p)), p = P[E | x], p′ = P[E | x'] (McNemar's conditioning). One Clopper–Pearson lower bound at
α − γ bounds ψ, and the two rates' margins combine as √(1/k + 1/k′) instead of adding: on a rare event
(k, k′ hits) the margin is z_α·√(1/k + 1/k′) against z_{α/2}·(1/√k + 1/√k′), about 40 % less.

ε-DP bounds the odds ratio given p′ (both directions of the definition: p ≤ e^ε·p′ and 1 − p′ ≤ e^ε·(1 − p)):
ψ ≤ ψ_max(p′, ε), reached at p = min(e^ε·p′, 1 − e^−ε·(1 − p′)). p′ is a nuisance, so γ = :data:`NUISANCE_SHARE`·α
buys a two-sided Clopper–Pearson interval [lo, hi] for it from the false positives (Berger & Boos, JASA 1994): the
claim ε is rejected when the bound on ψ exceeds ψ_max(p′, ε) for every p′ in [lo, hi], and the certified ε is the
largest ε rejected. ψ_max(p′, ε) ≥ ψ holds exactly when ε ≥ ln(ψ/(1 + p′(ψ − 1))) and ε ≥ ln(1 + p′(ψ − 1)); the
first falls and the second rises with p′, so the largest ε rejected is

    max{ ln(ψ/(1 + hi·(ψ − 1))), ln(1 + lo·(ψ − 1)), ½·ln ψ }     (0 where ψ ≤ 1)

(:func:`odds_ratio_epsilon`). The false-rejection rate is at most γ (the interval misses p′) plus α − γ (the bound on
ψ fails): α. The certificate is for pure ε (δ = 0). Where one side never produces the event, the odds ratio's
correction for p′ costs more than the split bound's margin (a count of 0 against thousands): the selection picks
the certificate that projects more on its training split (:func:`projected_certificates`).

The pairing needs the two sides' i-th releases independent: the audit draws each side's certification releases on its
own child of the certification seed, never common random numbers (which would make x'-only pairs vanish and
inflate the bound on ψ).
"""

from __future__ import annotations

import math
import warnings
from typing import overload

import numpy as np
import numpy.typing as npt

from audit.certification.bounds import (
    FloatOrArray,
    claim_p_value,
    cp_lower,
    cp_upper,
    epsilon_lower_bound,
    smallest_rejecting_alpha,
)
from pgc.errors import UserError

NUISANCE_SHARE = 0.1  # γ/α: the share of α spent on the interval for the event's rate under x'


def discordant_pairs(hits_positive: npt.ArrayLike, hits_negative: npt.ArrayLike) -> tuple[int, int]:
    """(pairs with only the x-release in the event, pairs with only the x'-release in it): the i-th release of each
    side paired with the i-th of the other, over the shorter side."""
    a, b = np.asarray(hits_positive, dtype=bool), np.asarray(hits_negative, dtype=bool)
    m = min(a.size, b.size)
    a, b = a[:m], b[:m]
    return int(np.count_nonzero(a & ~b)), int(np.count_nonzero(b & ~a))


def expected_discordant(
    true_positives: npt.ArrayLike, false_positives: npt.ArrayLike, n: float
) -> tuple[FloatOrArray, FloatOrArray]:
    """The discordant pairs that n pairs are expected to hold at the rates ``true_positives``/n under x and
    ``false_positives``/n under x' (a projection's non-integer counts)."""
    p = np.asarray(true_positives, np.float64) / n
    q = np.asarray(false_positives, np.float64) / n
    return n * p * (1.0 - q), n * q * (1.0 - p)


def odds_ratio_epsilon(psi: npt.ArrayLike, low: npt.ArrayLike, high: npt.ArrayLike) -> FloatOrArray:
    """The largest ε whose ψ_max(p′, ε) stays below ``psi`` for every p′ in [``low``, ``high``] (module
    docstring); 0 where ψ ≤ 1, inf where ψ is."""
    psi = np.asarray(psi, np.float64)
    low, high = np.asarray(low, np.float64), np.asarray(high, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gain = psi - 1.0
        first = np.log(psi) - np.log1p(high * gain)
        second = np.log1p(low * gain)
        out = np.maximum(np.maximum(first, second), 0.5 * np.log(psi))
    out = np.where(psi > 1.0, np.where(np.isinf(psi), np.inf, np.nan_to_num(out, nan=0.0)), 0.0)
    return float(out) if out.ndim == 0 else out


@overload
def paired_epsilon_lower_bound(
    only_positive: float, only_negative: float, false_positives: float, n: float, alpha: float
) -> float: ...
@overload
def paired_epsilon_lower_bound(
    only_positive: npt.ArrayLike, only_negative: npt.ArrayLike, false_positives: npt.ArrayLike, n: float, alpha: float
) -> FloatOrArray: ...
def paired_epsilon_lower_bound(
    only_positive: npt.ArrayLike,
    only_negative: npt.ArrayLike,
    false_positives: npt.ArrayLike,
    n: float,
    alpha: float,
) -> FloatOrArray:
    """Certified ε lower bound (δ = 0) at confidence 1 − ``alpha`` from the discordant pairs of n pairs and the
    false positives (x'-releases in the event) among the n x'-releases (module docstring)."""
    if not (0.0 < alpha < 1.0):
        raise UserError(f"alpha must lie in (0, 1), got {alpha!r}")
    a, b = np.asarray(only_positive, np.float64), np.asarray(only_negative, np.float64)
    if np.any(a < 0) or np.any(b < 0) or np.any(a + b > n):
        raise UserError(f"need discordant pairs >= 0 and at most n = {n}, got {a} and {b}")
    if np.any(b > np.asarray(false_positives, np.float64)):
        raise UserError("the x'-only pairs are among the false positives: at most as many")
    return paired_epsilon_over(a, b, false_positives, false_positives, n, alpha)


def paired_epsilon_over(
    only_positive: npt.ArrayLike,
    only_negative: npt.ArrayLike,
    false_positives_low: npt.ArrayLike,
    false_positives_high: npt.ArrayLike,
    n: float,
    alpha: float,
) -> FloatOrArray:
    """:func:`paired_epsilon_lower_bound` with the nuisance interval spanning the false positives from
    ``false_positives_low`` (its lower end) to ``false_positives_high`` (its upper end): the least the certificate
    gives for any count between them (the bound falls and rises with the count); equal ends: the certificate itself."""
    gamma = NUISANCE_SHARE * alpha
    a, b = np.asarray(only_positive, np.float64), np.asarray(only_negative, np.float64)
    m = a + b
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        q = np.where(m > 0, cp_lower(a, np.maximum(m, 1.0), alpha - gamma), 0.0)
    psi = np.where(q < 1.0, q / np.maximum(1.0 - q, 1e-300), np.inf)
    low, high = cp_lower(false_positives_low, n, gamma / 2.0), cp_upper(false_positives_high, n, gamma / 2.0)
    return odds_ratio_epsilon(psi, low, high)


def max_certifiable_epsilon(n: int, alpha: float) -> float:
    """The largest ε the paired certificate can certify with n pairs at confidence 1 − ``alpha``: a perfect test,
    every pair discordant with its x-release in the event and no x'-release in it (below the split certificate's
    cap, :func:`audit.certification.bounds.max_certifiable_epsilon`: α less the nuisance share bounds the odds ratio,
    9.31 against 10.21 at n = 10⁵ and α = 0.05)."""
    return float(paired_epsilon_lower_bound(n, 0, 0, n, alpha))


def paired_claim_p_value(
    only_positive: float, only_negative: float, false_positives: float, n: float, claimed_epsilon: float
) -> float:
    """p-value of H0 "true ε ≤ claimed_epsilon" from the paired counts: the smallest α at which
    :func:`paired_epsilon_lower_bound` exceeds the claim (the bound grows with α), by bisection on log α as
    :func:`audit.certification.bounds.claim_p_value` does."""
    claimed_epsilon = float(claimed_epsilon)
    if math.isnan(claimed_epsilon):
        raise UserError("claimed_epsilon must be a number")
    if math.isinf(claimed_epsilon) and claimed_epsilon > 0:
        return 1.0

    def exceeds(log_alpha: float) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            bound = paired_epsilon_lower_bound(only_positive, only_negative, false_positives, n, math.exp(log_alpha))
        return bool(bound > claimed_epsilon)

    return smallest_rejecting_alpha(exceeds)


def projected_certificates(
    s_pos: npt.ArrayLike,
    s_neg: npt.ArrayLike,
    threshold: float,
    fp_share: float,
    n_cert: int,
    alpha: float,
    two_sided: bool = False,
    pessimism: float | None = None,
) -> tuple[float, float]:
    """(split, paired) certified ε that ``n_cert`` fresh releases per side would give the test [s ≥ ``threshold``]
    at the selection split's pessimistic rates (:func:`audit.statistics.selection.projected_epsilon`'s, at
    ``pessimism`` where given), the split bound at ``fp_share``: the selection certifies with the larger (pure ε
    only)."""
    from audit.statistics.selection import pessimistic_rates, projected_epsilon

    s_pos, s_neg = np.asarray(s_pos, np.float64), np.asarray(s_neg, np.float64)
    fp = float(np.count_nonzero(s_neg >= threshold))
    fn = float(s_pos.size - np.count_nonzero(s_pos >= threshold))
    fpr, fnr = (min(1.0, float(r)) for r in pessimistic_rates(fp, s_neg.size, fn, s_pos.size, two_sided, pessimism))
    split = float(projected_epsilon(fp, s_neg.size, fn, s_pos.size, n_cert, alpha, 0.0, fp_share, two_sided, pessimism))
    only_positive, only_negative = expected_discordant((1.0 - fnr) * n_cert, fpr * n_cert, n_cert)
    paired = float(paired_epsilon_lower_bound(only_positive, only_negative, fpr * n_cert, n_cert, alpha))
    return split, paired


def certified_epsilon(
    false_positives: float,
    false_negatives: float,
    n: float,
    alpha: float,
    delta: float,
    fp_share: float | None,
    pairs: tuple[int, int] | None,
) -> float:
    """A threshold test's certified ε from its counts on n releases per side: the paired certificate where it ran
    (``pairs``: the x-only and x'-only pairs; pure ε only), else the split one at ``fp_share``."""
    if pairs is not None:
        _pure(delta)
        return float(paired_epsilon_lower_bound(pairs[0], pairs[1], false_positives, n, alpha))
    assert fp_share is not None, "a split certificate records its α split"
    return float(epsilon_lower_bound(false_positives, n, false_negatives, n, alpha, delta, fp_share))


def certified_p_value(
    false_positives: float,
    false_negatives: float,
    n: float,
    claimed_epsilon: float,
    delta: float,
    fp_share: float | None,
    pairs: tuple[int, int] | None,
) -> float:
    """p-value of "true ε ≤ claimed_epsilon" from a threshold test's counts, by the certificate that ran
    (:func:`certified_epsilon`)."""
    if pairs is not None:
        _pure(delta)
        return paired_claim_p_value(pairs[0], pairs[1], false_positives, n, claimed_epsilon)
    assert fp_share is not None, "a split certificate records its α split"
    return claim_p_value(false_positives, n, false_negatives, n, claimed_epsilon, delta, fp_share)


def _pure(delta: float) -> None:
    if delta != 0.0:
        raise UserError(f"the paired certificate bounds a pure ε claim (δ = 0), not δ = {delta:g}")
