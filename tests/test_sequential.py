import numpy as np

from audit.curves import gdp_mu_for
from audit.sequential import sequential_curve_audit, stage_alpha


def gaussian_draw(mu):
    return lambda n, rng: (rng.normal(mu, 1.0, n), rng.normal(0.0, 1.0, n))


def test_alpha_spending_sums_below_alpha():
    assert sum(stage_alpha(0.05, k) for k in range(1, 60)) <= 0.05


def test_stops_on_violation_and_on_consistency():
    rng = np.random.default_rng(np.random.SeedSequence(11))
    leak = sequential_curve_audit(gaussian_draw(2.0 * gdp_mu_for(1.0, 1e-5)), 1.0, 1e-5, 0.05, rng)
    assert leak.decision == "violated"
    exact = sequential_curve_audit(gaussian_draw(gdp_mu_for(1.0, 1e-5)), 1.0, 1e-5, 0.05, rng,
                                   budget=64000)
    assert exact.decision in ("consistent", "inconclusive")
    assert len(exact.stages) >= 1
