"""The one-run bound (audit.one_run.bounds) against jax-privacy's implementation of Steinke et al. 2023, Theorem 3."""

import numpy as np
import pytest

from audit.one_run.bounds import (
    best_guess_count,
    binned_log_ratio,
    epsilon_lower_bound,
    guess_canaries,
    one_run_p_value,
    randomized_response_accuracy,
)

# (M, r, v, δ, ε_LB at α = 0.05) from jax_privacy/auditing.py (_epsilon_one_run(0, M, r, v, 0.05, δ),
# google-deepmind/jax_privacy commit 03a095e)
JAX_PRIVACY = [
    [1000, 100, 100, 0.0, 3.492965],
    [1000, 100, 100, 1e-05, 3.465376],
    [1000, 100, 90, 0.0, 1.630823],
    [1000, 100, 90, 1e-05, 1.626144],
    [1000, 500, 400, 0.0, 1.198645],
    [1000, 500, 400, 1e-05, 1.197969],
    [1000, 1000, 600, 0.0, 0.297468],
    [1000, 1000, 600, 1e-05, 0.297227],
    [10000, 10000, 7000, 0.0, 0.811222],
    [10000, 10000, 7000, 1e-05, 0.810944],
    [10000, 2000, 1700, 0.0, 1.630493],
    [10000, 2000, 1700, 1e-05, 1.628275],
    [10000, 500, 480, 0.0, 2.794989],
    [10000, 500, 480, 1e-05, 2.770387],
    [100, 50, 40, 0.0, 0.774085],
    [100, 50, 40, 1e-05, 0.773516],
    [10000, 10000, 5100, 0.0, 0.006904],
    [10000, 10000, 5100, 1e-05, 0.006668],
    [1000, 200, 110, 0.0, 0.0],
    [1000, 200, 110, 1e-05, 0.0],
]


@pytest.mark.parametrize("m,r,v,delta,expected", JAX_PRIVACY)
def test_bound_matches_jax_privacy(m, r, v, delta, expected):
    assert abs(epsilon_lower_bound(m, r, v, alpha=0.05, delta=delta) - expected) < 1e-3


def test_p_value_at_the_bound_is_alpha():
    eps = epsilon_lower_bound(10_000, 2000, 1700, alpha=0.05)
    assert abs(one_run_p_value(10_000, 2000, 1700, eps) - 0.05) < 1e-5


def test_perfect_laplace_guesses_at_ten_thousand_allow_about_096():
    q = randomized_response_accuracy(1.0)
    assert abs(epsilon_lower_bound(10_000, 10_000, int(q * 10_000)) - 0.962) < 0.005


def test_bad_counts_are_refused():
    with pytest.raises(ValueError):
        epsilon_lower_bound(10, 20, 5)
    with pytest.raises(ValueError):
        epsilon_lower_bound(10, 5, 6)


def test_guessing_randomized_response_certifies_below_its_epsilon():
    # ε = 1 randomized response: 200 seeded runs of M = 2000; a bound above 1 is a false alarm, at most
    # α = 5 % of runs in expectation (the theorem), so more than 20 of 200 fails with probability < 1e-4
    rng = np.random.default_rng(7)
    q = randomized_response_accuracy(1.0)
    above = 0
    for _ in range(200):
        truth = rng.integers(0, 2, 2000)
        guess = np.where(rng.random(2000) < q, truth, 1 - truth)
        above += epsilon_lower_bound(2000, 2000, int((guess == truth).sum())) > 1.0
    assert above <= 20


def test_binned_log_ratio_and_best_r_on_separated_scores():
    rng = np.random.default_rng(3)
    pos, neg = rng.normal(2, 1, 20_000), rng.normal(-2, 1, 20_000)
    llr = binned_log_ratio(pos, neg)
    assert llr(np.array([3.0]))[0] > 2 and llr(np.array([-3.0]))[0] < -2
    truth = rng.integers(0, 2, 1000)
    x = np.where(truth == 1, rng.normal(2, 1, 1000), rng.normal(-2, 1, 1000))
    guesses, order = guess_canaries(llr(x))
    r, eps = best_guess_count(guesses, order, truth, 1000)
    assert 10 <= r <= 1000 and eps > 2.0


# (M, r, v, δ, ε at α = 0.05) from jax-privacy's auditing._epsilon_one_run_fdp(0, M, r, v, 0.05, δ) (the f-DP
# one-run audit of Mahloujifar et al. 2025 with the Gaussian curve that dp_accounting calibrates to (ε, δ))
FDP_REFERENCE = [
    (1000, 100, 90, 1e-5, 2.4564),
    (1000, 1000, 700, 1e-5, 1.372),
    (10000, 500, 450, 1e-5, 2.5862),
    (100, 10, 10, 1e-5, 1.6259),
    (1000, 300, 240, 1e-6, 2.1421),
    (5000, 2000, 1300, 1e-5, 0.8445),
]


@pytest.mark.parametrize("m, r, v, delta, expected", FDP_REFERENCE)
def test_fdp_bound_matches_jax_privacy(m, r, v, delta, expected):
    from audit.certification.curves import gdp_epsilon
    from audit.one_run.bounds import fdp_mu_lower_bound

    assert gdp_epsilon(delta, fdp_mu_lower_bound(m, r, v, alpha=0.05)) == pytest.approx(expected, abs=2e-4)


def test_fdp_bound_is_monotone_and_zero_at_chance():
    from audit.one_run.bounds import fdp_falsifies, fdp_mu_lower_bound

    assert fdp_mu_lower_bound(1000, 100, 50) == 0.0
    bounds = [fdp_mu_lower_bound(1000, 200, v) for v in (120, 150, 180, 200)]
    assert bounds == sorted(bounds) and bounds[0] > 0
    mu = fdp_mu_lower_bound(1000, 200, 150)
    assert fdp_falsifies(0.99 * mu, 1000, 200, 150, 0.05) and not fdp_falsifies(1.01 * mu, 1000, 200, 150, 0.05)


def test_the_approximate_dp_curve_recursion_bounds_epsilon_at_its_boundary():
    from audit.one_run.bounds import (
        approximate_dp_blow_up_inverse,
        falsifies_curve,
        fdp_epsilon_lower_bound,
        fdp_epsilon_p_value,
    )

    assert all(approximate_dp_blow_up_inverse(x, 0.0, 0.0) == pytest.approx(x) for x in (0.0, 0.2, 0.7, 1.0))
    eps = fdp_epsilon_lower_bound(1000, 200, 170, alpha=0.05, delta=1e-5)
    assert 0.5 < eps < 3.0

    def falsified(e: float) -> bool:
        return falsifies_curve(lambda x: approximate_dp_blow_up_inverse(x, e, 1e-5), 1000, 200, 170, 0.05)

    assert falsified(0.99 * eps) and not falsified(1.01 * eps)
    assert (
        fdp_epsilon_p_value(1000, 200, 170, 0.99 * eps, 1e-5)
        <= 0.05
        < fdp_epsilon_p_value(1000, 200, 170, 1.01 * eps, 1e-5)
    )
    assert fdp_epsilon_lower_bound(1000, 100, 50, alpha=0.05, delta=1e-5) == 0.0  # chance


def test_a_true_epsilon_dp_claim_is_not_violated_by_the_fdp_bound():
    """Randomized response exactly 2-DP per canary, claim (2, 1e-5), no curve: each audit is violated with
    probability at most α = 0.05, so 3 or more of 10 has probability 1.2 %; a μ_LB read as if the curve were
    Gaussian called every one of them violated (ε ≈ 3.0–3.15)."""
    import math

    from audit.one_run import one_run_scores_audit

    rng = np.random.default_rng(np.random.SeedSequence(2026))
    keep = 1.0 / (1.0 + math.exp(-2.0))

    def rr(n: int) -> tuple[np.ndarray, np.ndarray]:
        coins = rng.integers(0, 2, n)
        return np.where(rng.random(n) < keep, coins, 1 - coins).astype(float), coins

    simulated, simulated_truth = rr(10_000)
    violated = 0
    for _ in range(10):
        scores, truth = rr(1000)
        row = one_run_scores_audit(
            scores,
            truth,
            simulated,
            simulated_truth,
            centre=0.5,
            claimed_epsilon=2.0,
            claimed_delta=1e-5,
            claimed_mu=None,
        )
        assert row.fdp_epsilon_lower_bound <= row.steinke_epsilon_lower_bound + 0.5
        violated += row.verdict == "violated"
    assert violated <= 2
