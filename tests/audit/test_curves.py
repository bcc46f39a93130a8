import numpy as np
import pytest
from scipy.stats import norm

from audit.certification.curves import (
    curve_epsilon,
    curve_violation_pvalue,
    gdp_delta,
    gdp_epsilon,
    gdp_mu_for,
    gdp_tradeoff,
    mu_lower_bound,
    select_curve_threshold,
)
from pgc.mechanisms.calibration import analytic_gaussian_sigma


def test_tradeoff_known_values():
    assert gdp_tradeoff(0.05, 0.0) == pytest.approx(0.95)
    assert gdp_tradeoff(norm.cdf(-0.5), 1.0) == pytest.approx(norm.cdf(-0.5))


def test_delta_epsilon_roundtrip():
    for mu in (0.5, 1.0, 3.0):
        eps = gdp_epsilon(1e-5, mu)
        assert gdp_delta(eps, mu) == pytest.approx(1e-5, rel=1e-6)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 10.0])
def test_mu_matches_analytic_gaussian(eps):
    sigma = analytic_gaussian_sigma(eps, 1e-5, 1.0)
    assert gdp_mu_for(eps, 1e-5) == pytest.approx(1.0 / sigma, rel=1e-6)


def test_mu_lower_bound_behaviour():
    assert mu_lower_bound(500, 500, 1000, 1000, 0.05) == 0.0
    lb = mu_lower_bound(3085, 3085, 10000, 10000, 0.05)  # rates at Φ(-1/2): μ ≈ 1
    assert 0.9 < lb < 1.0
    assert curve_epsilon(lb, 1e-5) < curve_epsilon(1.0, 1e-5)


def test_pvalue_monotone_in_claim():
    p_small = curve_violation_pvalue(3085, 3085, 10000, 10000, 0.5)
    p_near = curve_violation_pvalue(3085, 3085, 10000, 10000, 0.95)
    assert p_small < 1e-6 < p_near < 1.0
    assert curve_violation_pvalue(3085, 3085, 10000, 10000, 1.2) == 1.0
    assert mu_lower_bound(3085, 3085, 10000, 10000, p_near * 1.01) > 0.95


def test_select_threshold_near_midpoint():
    rng = np.random.default_rng(np.random.SeedSequence(7))
    neg = rng.normal(0.0, 1.0, 20000)
    pos = rng.normal(1.0, 1.0, 20000)
    threshold = select_curve_threshold(pos, neg, 20000, 0.05)
    assert abs(threshold - 0.5) < 0.5
