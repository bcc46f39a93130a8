"""Bound math against hand-computed numbers (audit.certification.bounds)."""

import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from audit.certification import bounds


def test_clopper_pearson_zero_successes_closed_form():
    # k = 0: the one-sided upper bound solves (1 − p)^n = α, i.e. p = 1 − α^(1/n)
    assert bounds.cp_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)
    assert bounds.cp_upper(0, 100, 0.05) == pytest.approx(0.029513049607, rel=1e-9)
    assert bounds.cp_lower(0, 100, 0.05) == 0.0
    # k = n: symmetric
    assert bounds.cp_lower(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100), rel=1e-9)
    assert bounds.cp_upper(100, 100, 0.05) == 1.0


def test_clopper_pearson_textbook_interval():
    # the classic exact 95% interval for 5/10 is (0.1871, 0.8129): one-sided 2.5% each
    assert bounds.cp_lower(5, 10, 0.025) == pytest.approx(0.187086, abs=1e-6)
    assert bounds.cp_upper(5, 10, 0.025) == pytest.approx(0.812914, abs=1e-6)
    lo, hi = proportion_confint(37, 400, alpha=0.1, method="beta")
    assert bounds.cp_lower(37, 400, 0.05) == pytest.approx(lo)
    assert bounds.cp_upper(37, 400, 0.05) == pytest.approx(hi)


def test_epsilon_from_rates_both_directions_and_delta():
    # direction 1: ln((1 − 0.2)/0.1) = ln 8; direction 2: ln((1 − 0.1)/0.2) = ln 4.5
    assert bounds.epsilon_from_rates(0.1, 0.2) == pytest.approx(math.log(8))
    assert bounds.epsilon_from_rates(0.2, 0.1) == pytest.approx(math.log(8))  # symmetric
    assert bounds.epsilon_from_rates(0.1, 0.2, delta=0.1) == pytest.approx(math.log(7))
    assert bounds.epsilon_from_rates(0.5, 0.5) == 0.0  # a coin flip proves nothing
    assert bounds.epsilon_from_rates(0.6, 0.6) == 0.0  # never negative
    assert bounds.epsilon_from_rates(0.0, 0.5) == math.inf


def test_epsilon_lower_bound_perfect_test():
    # 0 errors out of 1000 per side, α = 0.05 split evenly: rate bounds u = 1 − 0.025^(1/1000)
    u = 1 - 0.025 ** (1 / 1000)
    assert u == pytest.approx(0.0036820839, rel=1e-7)
    expected = math.log((1 - u) / u)
    assert expected == pytest.approx(5.6005875, rel=1e-6)
    assert bounds.epsilon_lower_bound(0, 1000, 0, 1000, 0.05) == pytest.approx(expected, rel=1e-9)
    assert bounds.max_certifiable_epsilon(1000, 0.05) == pytest.approx(expected, rel=1e-9)


def test_epsilon_lower_bound_uneven_alpha_split_and_counts():
    # fp = 10 of 1000 at α_fp = 0.04, fn = 200 of 1000 at α_fn = 0.01
    fpr = proportion_confint(10, 1000, alpha=0.08, method="beta")[1]
    fnr = proportion_confint(200, 1000, alpha=0.02, method="beta")[1]
    expected = max(math.log((1 - fnr) / fpr), math.log((1 - fpr) / fnr))
    got = bounds.epsilon_lower_bound(10, 1000, 200, 1000, 0.05, fp_share=0.8)
    assert got == pytest.approx(expected)
    assert got < math.log(0.8 / 0.01)  # below the point estimate ln(TPR/FPR)


def test_cap_grows_like_log_n_and_bounds_lower_than_point_estimates():
    caps = [bounds.max_certifiable_epsilon(n, 0.05) for n in (10**3, 10**4, 10**5, 10**6)]
    assert np.all(np.diff(caps) > 2.2) and np.all(np.diff(caps) < 2.4)  # ≈ ln 10 per decade
    assert caps[-1] == pytest.approx(12.51, abs=0.01)


def test_smallest_detectable_delta_is_the_first_certifiable_count():
    n, alpha, eps = 100_000, 0.05, 1.0
    d = bounds.smallest_detectable_delta(n, alpha, eps)
    k = round(d * n)
    ub0 = bounds.cp_upper(0, n, alpha / 2)
    assert bounds.cp_lower(k, n, alpha / 2) - math.e * ub0 > 0
    assert bounds.cp_lower(k - 1, n, alpha / 2) - math.e * ub0 <= 0
    assert bounds.delta_lower_bound(0, n, n - k, n, alpha, eps) > 0
    assert 1e-4 < d < 1e-3


def test_bad_inputs():
    with pytest.raises(ValueError):
        bounds.cp_upper(5, 4, 0.05)
    with pytest.raises(ValueError):
        bounds.cp_upper(1, 10, 0.0)
    with pytest.raises(ValueError):
        bounds.epsilon_lower_bound(1, 10, 1, 10, 0.05, fp_share=1.0)
    with pytest.raises(ValueError):
        bounds.epsilon_from_rates(0.1, 0.1, delta=1.0)


def test_claim_p_value_is_the_alpha_where_the_bound_crosses_the_claim():
    counts = (10, 1000, 200, 1000)  # point estimate ln(0.8/0.01) ≈ 4.38 (and the other direction ln(0.99/0.2))
    for claim in (1.0, 2.5, 3.5):
        p = bounds.claim_p_value(*counts, claim)
        assert 0 < p < 1
        assert bounds.epsilon_lower_bound(*counts, p) > claim
        assert bounds.epsilon_lower_bound(*counts, p * (1 - 1e-6)) <= claim
    # monotone: a larger claim is harder to reject
    ps = [bounds.claim_p_value(*counts, c) for c in (1.0, 2.0, 3.0, 4.0)]
    assert ps == sorted(ps)
    # a claim at or above the point estimate is never rejected, nor is an infinite claim
    assert bounds.claim_p_value(*counts, 4.5) == 1.0
    assert bounds.claim_p_value(*counts, math.inf) == 1.0
    # consistency with the 95 % bound: rejected at 5 % iff the 95 % bound exceeds the claim
    lb95 = bounds.epsilon_lower_bound(*counts, 0.05)
    assert bounds.claim_p_value(*counts, lb95 - 1e-6) < 0.05 < bounds.claim_p_value(*counts, lb95 + 1e-6)


def test_claim_p_value_hand_case():
    # a perfect test (0 errors of n per side), claim 0, α split evenly: ε_LB(α) > 0 iff 1 − u > u with
    # u = 1 − (α/2)^(1/n), i.e. (α/2)^(1/n) > 1/2, α > 2·2^(−n). n = 10: p = 2/1024
    assert bounds.claim_p_value(0, 10, 0, 10, 0.0) == pytest.approx(2 / 1024, rel=1e-9)
    # with claim ε: (α/2)^(1/n) > e^ε/(1 + e^ε)  ⇒  p = 2 (e^ε/(1+e^ε))^n
    eps = 1.0
    assert bounds.claim_p_value(0, 10, 0, 10, eps) == pytest.approx(2 * (math.e / (1 + math.e)) ** 10, rel=1e-9)
    # a coin-flip test proves nothing even at α → 1
    assert bounds.claim_p_value(500, 1000, 500, 1000, 0.0) == 1.0
    with pytest.raises(ValueError):
        bounds.claim_p_value(5, 4, 0, 10, 1.0)


@pytest.mark.parametrize("epsilon", [709.0, 800.0, 1e6, 1e300])
def test_bounds_at_epsilons_whose_exponential_overflows(epsilon):
    # e^ε overflows a float above ε ≈ 709.78: the bounds read it as +inf instead of raising OverflowError
    assert bounds.exp_or_inf(epsilon) == (math.exp(epsilon) if epsilon < 709.78 else math.inf)
    assert bounds.smallest_detectable_delta(10_000, 0.05, epsilon) == 1.0  # nothing below δ = 1 is detectable
    assert bounds.delta_lower_bound(3, 10_000, 4, 10_000, 0.05, epsilon) == 0.0


def test_prs_likelihood_ratio_table_fits_in_memory_for_a_large_reduced_dimension():
    from audit.statistics import MAX_LATTICE_CELLS, PRSLexicographicLikelihoodRatio

    small = PRSLexicographicLikelihoodRatio(1.0, 4, 10.0, columns=4)
    assert small.columns == 4 and small.llr.shape == (9,) * 4
    large = PRSLexicographicLikelihoodRatio(1.0, 112, 1e6, columns=4)  # ε = 10⁶: d̂ = d = 112
    assert large.columns == 2 and large.llr.size <= MAX_LATTICE_CELLS
    assert np.isfinite(large.llr).all()
