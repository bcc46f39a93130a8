"""The one-run audit's bound: ε_LB from (M canaries, r guesses, v correct) (pure functions).

Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run" (2023), Theorem 3: M canaries,
each included (here: playing ψ′ instead of ψ) by an independent fair coin; an auditor guesses r of the
coins from the output of an (ε, δ)-DP algorithm and abstains on the rest. Then the number W of correct
guesses satisfies

    P[W ≥ v] ≤ P[Binomial(r, q) ≥ v] + 2Mδ · max_{i=1..v} P[v − i ≤ Binomial(r, q) < v] / i,
    q = e^ε / (1 + e^ε)

(the δ = 0 case is the ε-DP statement: the tail of ε-randomized response). The p-value of an (ε, δ)
claim is that right-hand side; ε_LB at confidence 1 − α is the largest ε whose p-value is still ≤ α
(the p-value grows with ε, so it is found by bisection). :func:`epsilon_lower_bound` is checked against
jax-privacy's ``auditing._epsilon_one_run`` in ``tests/audit/test_one_run_bound.py``.

:func:`guess_canaries` ranks canaries by confidence and guesses on the r most confident;
:func:`best_guess_count` picks r on samples the auditor simulated itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

from pgc.errors import UserError

EPSILON_CEILING = 60.0  # search ceiling for ε_LB (q = expit(60) is 1 to double precision)


def _check_counts(canaries: int, guesses: int, correct: int) -> None:
    for name, value in (("canaries", canaries), ("guesses", guesses), ("correct", correct)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise UserError(f"{name} must be an integer, got {value!r}")
    if not 0 <= correct <= guesses <= canaries:
        raise UserError(f"need 0 <= correct <= guesses <= canaries, got {correct}, {guesses}, {canaries}")


def randomized_response_accuracy(epsilon: float) -> float:
    """q = e^ε / (1 + e^ε): the best accuracy an ε-DP guess of a fair coin can have."""
    return float(1.0 / (1.0 + math.exp(-epsilon)))


def one_run_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float = 0.0) -> float:
    """P[≥ ``correct`` of ``guesses`` right] under an (ε, δ)-DP claim (Steinke et al. 2023, Theorem 3)."""
    _check_counts(canaries, guesses, correct)
    if not (epsilon >= 0 and 0 <= delta <= 1):
        raise UserError(f"need epsilon >= 0 and delta in [0, 1], got {epsilon!r}, {delta!r}")
    q = randomized_response_accuracy(epsilon)
    tail = float(stats.binom.sf(correct - 1, guesses, q))  # P[Binomial(r, q) ≥ v]
    if delta == 0 or correct == 0:
        return min(tail, 1.0)
    i = np.arange(1, correct + 1)
    # P[v − i ≤ Binomial(r, q) < v] = P[B ≥ v − i] − P[B ≥ v]
    window = stats.binom.sf(correct - i - 1, guesses, q) - tail
    return float(min(tail + 2.0 * canaries * delta * float(np.max(window / i)), 1.0))


def epsilon_lower_bound(
    canaries: int, guesses: int, correct: int, *, alpha: float = 0.05, delta: float = 0.0, tolerance: float = 1e-7
) -> float:
    """ε_LB: the largest ε whose (ε, δ) claim the guesses refute at level ``alpha`` (0 when none is)."""
    _check_counts(canaries, guesses, correct)
    if not 0 < alpha < 1:
        raise UserError(f"alpha must lie in (0, 1), got {alpha!r}")
    if guesses == 0 or one_run_p_value(canaries, guesses, correct, 0.0, delta) > alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    while hi < EPSILON_CEILING and one_run_p_value(canaries, guesses, correct, hi, delta) <= alpha:
        lo, hi = hi, 2.0 * hi
    hi = min(hi, EPSILON_CEILING)
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        if one_run_p_value(canaries, guesses, correct, mid, delta) <= alpha:
            lo = mid
        else:
            hi = mid
    return lo


def guess_canaries(log_ratio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Guesses (1: ψ′, 0: ψ) from each canary's estimated log-likelihood ratio log p(x|ψ′)/p(x|ψ), and the
    order of confidence (most confident first; ties keep the canaries' order)."""
    llr = np.asarray(log_ratio, dtype=np.float64)
    if llr.ndim != 1 or not np.all(np.isfinite(llr)):
        raise UserError("log_ratio must be a finite 1-d array")
    return (llr > 0).astype(np.int8), np.argsort(-np.abs(llr), kind="stable")


def correct_among_top(guesses: np.ndarray, order: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Correct guesses among the r most confident, for r = 0..M (length M + 1)."""
    hits = (np.asarray(guesses)[order] == np.asarray(truth)[order]).astype(np.int64)
    return np.concatenate([[0], np.cumsum(hits)])


def candidate_guess_counts(canaries: int, count: int = 60) -> np.ndarray:
    """r on a geometric grid from 10 (or M) to M."""
    low = min(10, canaries)
    return np.unique(np.round(np.geomspace(low, canaries, count)).astype(np.int64))


def best_guess_count(
    guesses: np.ndarray,
    order: np.ndarray,
    truth: np.ndarray,
    canaries: int,
    *,
    alpha: float = 0.05,
    delta: float = 0.0,
    grid: Sequence[int] | None = None,
) -> tuple[int, float]:
    """The r of ``grid`` whose guesses on these (simulated) canaries give the largest ε_LB, and that ε_LB.

    Run it on canaries the auditor simulated itself: the r it returns is then fixed before the real
    canaries are looked at."""
    grid = candidate_guess_counts(canaries) if grid is None else np.asarray(grid, dtype=np.int64)
    correct = correct_among_top(guesses, order, truth)
    best = (int(grid[-1]), -1.0)
    for r in grid:
        r = int(min(r, len(order)))
        eps = epsilon_lower_bound(canaries, r, int(correct[r]), alpha=alpha, delta=delta)
        if eps > best[1]:
            best = (r, eps)
    return best


def binned_log_ratio(train_pos: np.ndarray, train_neg: np.ndarray, bins: int = 64):
    """A function score ↦ estimated log p(score|ψ′)/p(score|ψ), from scores of simulated releases: quantile
    bins of the pooled scores, log((n′ + ½)/(n + ½)) per bin, made monotone (pooled adjacent violators)
    when the score is a likelihood-ratio-like statistic that grows with ψ′."""
    pos, neg = np.asarray(train_pos, np.float64), np.asarray(train_neg, np.float64)
    edges = np.unique(np.quantile(np.concatenate([pos, neg]), np.linspace(0, 1, bins + 1)[1:-1]))
    n_pos = np.bincount(np.searchsorted(edges, pos, side="right"), minlength=edges.size + 1).astype(np.float64)
    n_neg = np.bincount(np.searchsorted(edges, neg, side="right"), minlength=edges.size + 1).astype(np.float64)
    llr = _isotonic(
        np.log((n_pos + 0.5) / (n_neg + 0.5)) + math.log(max(neg.size, 1) / max(pos.size, 1)), n_pos + n_neg
    )

    def log_ratio(scores: np.ndarray) -> np.ndarray:
        return llr[np.searchsorted(edges, np.asarray(scores, np.float64), side="right")]

    return log_ratio


def _isotonic(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Non-decreasing least-squares fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, weight, count]
    for v, w in zip(values, np.maximum(weights, 1e-12), strict=False):
        blocks.append([float(v), float(w), 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, c2 = blocks.pop()
            v1, w1, c1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    return np.concatenate([np.full(c, v) for v, _, c in blocks])


# ---------------------------------------------------------------------------------------------
# The audit: statistics fitted on the auditor's own simulated releases, applied to the canaries
# ---------------------------------------------------------------------------------------------


def max_certifiable_epsilon(canaries: int, *, alpha: float = 0.05, delta: float = 0.0) -> float:
    """The largest ε_LB M canaries can give: every guess right, at the best r."""
    return max(
        epsilon_lower_bound(canaries, int(r), int(r), alpha=alpha, delta=delta)
        for r in candidate_guess_counts(canaries)
    )


# ---- the f-DP one-run bound ---------------------------------------------------------------------
# Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy in One Run" (ICML 2025), the
# reconstruction bound with a cap (their "audit_rh_with_cap"), for a symmetric trade-off curve f. With r
# guesses of which v are correct out of M canaries, a claim of f-DP is falsified at level α when the
# recursion below — which follows how much probability mass an f-DP algorithm can move towards correct
# guesses, one correct guess at a time — ends above r/M. The curve enters through its inverse blow-up
# x ↦ f(1 − x): for the μ-GDP curve Φ(Φ⁻¹(x) − μ), for the (ε, δ)-DP curve
# max(0, 1 − δ − e^ε·(1 − x), e^−ε·(x − δ)). Each falsifies only the curve it is run with: a falsified
# μ-GDP curve says nothing of an (ε, δ) claim, whose own curve is not Gaussian.


def gdp_blow_up_inverse(x: float, mu: float) -> float:
    """Φ(Φ⁻¹(x) − μ): the inverse blow-up function of the μ-GDP trade-off curve."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    return float(stats.norm.cdf(stats.norm.ppf(x) - mu))


def approximate_dp_blow_up_inverse(x: float, epsilon: float, delta: float) -> float:
    """f_{ε,δ}(1 − x) = max(0, 1 − δ − e^ε·(1 − x), e^−ε·(x − δ)): the inverse blow-up function of the (ε, δ)-DP
    trade-off curve (Kairouz, Oh & Viswanath 2015; Dong, Roth & Su 2022, eq. 5)."""
    x = min(max(x, 0.0), 1.0)
    return max(0.0, 1.0 - delta - math.exp(epsilon) * (1.0 - x), math.exp(-epsilon) * (x - delta))


def falsifies_curve(
    blow_up_inverse: Callable[[float], float], canaries: int, guesses: int, correct: int, alpha: float
) -> bool:
    """Whether v = ``correct`` of r = ``guesses`` falsify the trade-off curve of ``blow_up_inverse`` at level
    ``alpha`` (the recursion of the f-DP one-run audit over the correct guesses, from the last to the first)."""
    _check_counts(canaries, guesses, correct)
    mass_correct = alpha * correct / canaries
    mass_wrong = alpha * (guesses - correct) / canaries
    for i in reversed(range(correct)):
        raised = max(mass_wrong, blow_up_inverse(mass_correct))
        if raised == mass_wrong:  # neither mass can change any more
            break
        mass_correct = min(mass_correct + i / (guesses - i) * (raised - mass_wrong), 1.0)
        mass_wrong = raised
    return mass_correct + mass_wrong > guesses / canaries


def fdp_falsifies(mu: float, canaries: int, guesses: int, correct: int, alpha: float) -> bool:
    """Whether the guesses falsify a μ-GDP claim at level ``alpha`` (:func:`falsifies_curve`)."""
    return falsifies_curve(lambda x: gdp_blow_up_inverse(x, mu), canaries, guesses, correct, alpha)


def fdp_epsilon_lower_bound(canaries: int, guesses: int, correct: int, *, alpha: float, delta: float) -> float:
    """The largest ε whose (ε, δ)-DP claim the guesses falsify at level ``alpha`` through the (ε, δ) curve's own
    recursion (0 when none is): an ε_LB at δ that holds with confidence 1 − α for any algorithm, Gaussian or not
    (bisection; falsification is monotone in ε, the curve's inverse blow-up falling as ε grows)."""
    _check_counts(canaries, guesses, correct)
    if not 0.0 < alpha < 1.0:
        raise UserError(f"alpha must lie in (0, 1), got {alpha!r}")

    def falsified(epsilon: float) -> bool:
        return falsifies_curve(
            lambda x: approximate_dp_blow_up_inverse(x, epsilon, delta), canaries, guesses, correct, alpha
        )

    return 0.0 if guesses == 0 else _largest_falsified(falsified, 0.0, FDP_EPSILON_CEILING, FDP_EPSILON_CEILING)


FDP_EPSILON_CEILING = 64.0  # search ceiling for the f-DP recursion's ε_LB


def _largest_falsified(falsified: Callable[[float], bool], floor: float, ceiling: float, limit: float) -> float:
    """The largest parameter a monotone ``falsified`` holds at, to a relative 10⁻⁶ (0 where it fails at ``floor``):
    doubling from 1 until it fails (``ceiling`` once the doubling passes ``limit``), then bisection."""
    if not falsified(floor):
        return 0.0
    low, high = floor, 1.0
    while falsified(high):
        low, high = high, 2.0 * high
        if high > limit:
            return ceiling
    while high - low > 1e-6 * high:
        mid = 0.5 * (low + high)
        low, high = (mid, high) if falsified(mid) else (low, mid)
    return low


def fdp_mu_lower_bound(canaries: int, guesses: int, correct: int, *, alpha: float = 0.05) -> float:
    """The largest μ whose μ-GDP claim the guesses falsify at level ``alpha`` (0 when none is): a μ_LB
    that holds with confidence 1 − α (bisection; falsification is monotone in μ)."""
    _check_counts(canaries, guesses, correct)
    if not 0.0 < alpha < 1.0:
        raise UserError(f"alpha must lie in (0, 1), got {alpha!r}")
    if guesses == 0:
        return 0.0
    return _largest_falsified(
        lambda mu: fdp_falsifies(mu, canaries, guesses, correct, alpha), 1e-9, MU_CEILING, 2.0 * MU_CEILING
    )


MU_CEILING = 40.0  # search ceiling for μ_LB


def curve_p_value(blow_up_inverse: Callable[[float], float], canaries: int, guesses: int, correct: int) -> float:
    """p-value of "the curve of ``blow_up_inverse`` holds": the smallest α at which the guesses falsify it (1 when
    none below 1 does; bisection in log α, falsification being monotone in α)."""

    def falsified(alpha: float) -> bool:
        return falsifies_curve(blow_up_inverse, canaries, guesses, correct, alpha)

    if not falsified(1.0 - 1e-12):
        return 1.0
    low, high = 1e-300, 1.0 - 1e-12
    if falsified(low):
        return low
    for _ in range(80):
        mid = math.exp(0.5 * (math.log(low) + math.log(high)))
        low, high = (low, mid) if falsified(mid) else (mid, high)
        if high / low < 1.0 + 1e-6:
            break
    return float(high)


def fdp_p_value(canaries: int, guesses: int, correct: int, claimed_mu: float) -> float:
    """p-value of "the μ-GDP claim holds" (:func:`curve_p_value`)."""
    return curve_p_value(lambda x: gdp_blow_up_inverse(x, claimed_mu), canaries, guesses, correct)


def fdp_epsilon_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float) -> float:
    """p-value of "the (ε, δ) claim holds" through the (ε, δ) curve's own f-DP recursion (:func:`curve_p_value`)."""
    return curve_p_value(lambda x: approximate_dp_blow_up_inverse(x, epsilon, delta), canaries, guesses, correct)
