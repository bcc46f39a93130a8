import numpy as np

from audit.certification.curves import gdp_mu_for, mu_lower_bound, select_curve_threshold
from audit.power import detectable_epsilon, detectable_mu, flags_leak, samples_to_decide


def test_detectable_shrinks_with_n_and_the_curve_sees_smaller_leaks():
    mu = gdp_mu_for(1.0, 1e-5)
    for claimed_mu in (None, mu):
        small = detectable_epsilon(1.0, 1e-5, 2000, 0.05, claimed_mu)
        large = detectable_epsilon(1.0, 1e-5, 50000, 0.05, claimed_mu)
        assert 1.0 < large < small
    assert detectable_epsilon(1.0, 1e-5, 50000, 0.05, mu) < detectable_epsilon(1.0, 1e-5, 50000, 0.05)
    assert 1.0 < detectable_epsilon(1.0, 0.0, 50000, 0.05) < 1.1  # Laplace-shaped leak of a pure ε claim


def test_a_claim_beyond_the_budget_has_no_detectable_leak():
    # 2e4 per side: no count certifies ε above 8.77 at δ = 1e-5, so nothing is flagged against ε = 10
    assert detectable_epsilon(10.0, 1e-5, 20_000, 0.05) == float("inf")
    assert detectable_epsilon(10.0, 1e-5, 20_000, 0.05, gdp_mu_for(10.0, 1e-5)) < 11.0


def test_samples_to_decide_meets_margin():
    for claimed_mu in (None, gdp_mu_for(1.0, 1e-5)):
        n = samples_to_decide(1.0, 1e-5, 0.05, claimed_mu)
        assert flags_leak(1.1, 1.0, 1e-5, n, 0.05, claimed_mu)
        assert not flags_leak(1.1, 1.0, 1e-5, int(0.98 * n), 0.05, claimed_mu)


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


def test_false_alarm_seeds_keep_the_one_seed_study_first_and_draw_distinct_others():
    from audit.power.study import _false_alarm_seeds

    seeds = _false_alarm_seeds(3, 52, 3)
    one_seed = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(3).spawn(52)]
    assert [row[0] for row in seeds] == one_seed
    assert all(len(set(row)) == 3 for row in seeds) and len({s for row in seeds for s in row}) == 156
    assert _false_alarm_seeds(3, 52, 3) == seeds
