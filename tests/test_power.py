import numpy as np

from audit.curves import gdp_mu_for, mu_lower_bound, select_curve_threshold
from audit.power import detectable_epsilon, detectable_mu, samples_to_decide


def test_detectable_shrinks_with_n():
    small = detectable_epsilon(1.0, 1e-5, 2000, 0.05)
    large = detectable_epsilon(1.0, 1e-5, 50000, 0.05)
    assert large < small and large > 1.0


def test_samples_to_decide_meets_margin():
    n = samples_to_decide(1.0, 1e-5, 0.05)
    assert detectable_epsilon(1.0, 1e-5, n, 0.05) <= 1.1
    assert detectable_epsilon(1.0, 1e-5, n // 2, 0.05) > 1.1


def test_detectable_leak_flagged_by_simulation():
    # 200 seeded runs; at a true flag rate of 0.8 the chance of < 150 flags is ~4e-3.
    n, alpha, claimed = 4000, 0.05, gdp_mu_for(1.0, 1e-5)
    leak = detectable_mu(claimed, n, alpha)
    rng = np.random.default_rng(np.random.SeedSequence(2024))
    flags = 0
    for _ in range(200):
        neg, pos = rng.normal(0.0, 1.0, (2, n)), rng.normal(leak, 1.0, (2, n))
        threshold = select_curve_threshold(pos[0], neg[0], n, alpha)
        fp, fn = int((neg[1] >= threshold).sum()), int((pos[1] < threshold).sum())
        flags += mu_lower_bound(fp, fn, n, n, alpha) > claimed
    assert flags >= 150
