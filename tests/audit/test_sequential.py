import numpy as np
import pytest

from audit.certification.curves import gdp_mu_for
from audit.certification.sequential import sequential_curve_audit, stage_alphas, stage_sizes


def gaussian_draw(mu):
    return lambda n, rng: (rng.normal(mu, 1.0, n), rng.normal(0.0, 1.0, n))


def test_alpha_spending_is_planned_with_the_sizes_and_sums_to_alpha():
    sizes = stage_sizes(2000, 10**6)
    alphas = stage_alphas(0.05, sizes)
    assert sum(alphas) == pytest.approx(0.05, rel=1e-12) and all(a > 0 for a in alphas)
    assert [a / alphas[0] for a in alphas] == pytest.approx([n / sizes[0] for n in sizes])


def test_stops_on_violation_and_decides_only_on_a_certified_stage():
    rng = np.random.default_rng(np.random.SeedSequence(11))
    leak = sequential_curve_audit(gaussian_draw(2.0 * gdp_mu_for(1.0, 1e-5)), 1.0, 1e-5, 0.05, rng)
    assert leak.verdict == "violated" and leak.decisive
    exact = sequential_curve_audit(gaussian_draw(gdp_mu_for(1.0, 1e-5)), 1.0, 1e-5, 0.05, rng, budget=1_000_000)
    assert exact.verdict == "consistent" and exact.decisive
    assert exact.stages[-1].detail["detectable_epsilon"] <= 1.1  # the deciding stage's own certified power
    assert exact.stages[-1].detail["mu_lower_bound"] > 0
    short = sequential_curve_audit(gaussian_draw(gdp_mu_for(1.0, 1e-5)), 1.0, 1e-5, 0.05, rng, budget=6000)
    assert not short.decisive and short.decision.endswith("(budget spent)")
