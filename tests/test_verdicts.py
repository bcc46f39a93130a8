"""The verdict rule with power: curve violations, inconclusive rows, detectable ε, sampling until decisive."""

import math

import pytest

from audit.curves import gdp_mu_for
from audit.sequential import audit_system_until_decisive, stage_sizes
from audit.system_audit import audit_system
from audit.verdicts import row_verdict
from toysystems import GaussianVectorSystem, LaplaceCountSystem
from toysystems.systems import miscalibrated_gaussian_system


def test_row_verdict_rule():
    assert row_verdict(1.0, 1.2, True) == "violated"
    assert row_verdict(1.0, 0.5, True, mu_lb=0.6, claimed_mu=0.5) == "violated"  # the curve alone
    assert row_verdict(1.0, 0.5, True, mu_lb=0.4, claimed_mu=0.5, detectable=1.3) == "consistent"
    assert row_verdict(10.0, 8.7, True, detectable=math.inf) == "inconclusive"
    assert row_verdict(math.inf, 0.3, False, detectable=None) == "unprotected channel"
    assert row_verdict(1.0, 0.0, False) == "consistent"


def _audit(system, n, seed=0):
    secret, secret_prime = next(iter(system.canaries().values()))
    return audit_system(system, secret, secret_prime, samples=n, seed=seed, channels=[system.channels[0]])


def test_miscalibrated_gaussian_violated_on_its_curve_inconclusive_without_it():
    # noise for a sensitivity of 1e-4 on a vector of diameter 2, claiming (10, 1e-5), 2e4 per side
    with_curve = _audit(miscalibrated_gaussian_system(curve=True), 20_000).rows[0]
    assert with_curve.verdict == "violated"
    assert with_curve.mu_lower_bound > 3 * with_curve.claimed_mu  # μ ≥ 7 against a claimed 2
    assert with_curve.epsilon_lower_bound < 10.0  # the threshold bound alone could not show it
    without = _audit(miscalibrated_gaussian_system(curve=False), 20_000)
    row = without.rows[0]
    assert row.verdict == "inconclusive" and without.verdict == "inconclusive"
    assert row.max_certifiable_epsilon < 10.0 and math.isinf(row.detectable_epsilon)
    assert row.mu_lower_bound is None


def test_correct_gaussian_is_consistent_and_states_what_it_would_have_caught():
    system = GaussianVectorSystem(2.0, 1e-5, dim=4)
    row = _audit(system, 20_000, seed=3).rows[0]
    assert row.verdict == "consistent"
    assert row.claimed_mu == pytest.approx(system.claim.gdp_mu)
    assert 0.0 < row.mu_lower_bound < row.claimed_mu
    assert 1.0 < row.curve_epsilon < 2.0 and row.epsilon_lower_bound < row.curve_epsilon
    assert 2.0 < row.detectable_epsilon < 4.0


def test_curve_claim_at_its_boundary_passes_and_just_below_fails():
    # the same releases: claimed at the true μ the curve holds; claimed at 0.8 μ it is flagged
    exact = GaussianVectorSystem(1.0, 1e-5, dim=1)
    assert _audit(exact, 100_000, seed=1).rows[0].verdict == "consistent"
    from systems.contract import PrivacyClaim

    tight = GaussianVectorSystem(1.0, 1e-5, dim=1)
    tight.claim = PrivacyClaim(1.0, 1e-5, ("value",), gdp_mu=0.8 * exact.claim.gdp_mu)
    row = _audit(tight, 100_000, seed=1).rows[0]
    assert row.verdict == "violated" and row.mu_lower_bound > 0.8 * exact.claim.gdp_mu


def test_laplace_rows_state_power_without_a_curve():
    row = _audit(LaplaceCountSystem(1.0), 20_000).rows[0]
    assert row.claimed_mu is None and row.mu_lower_bound is None and row.curve_epsilon is None
    assert row.verdict == "consistent" and 1.0 < row.detectable_epsilon < 1.5


def test_stage_sizes_double_within_the_budget():
    assert stage_sizes(1000, 7000) == [1000, 2000, 4000]
    assert stage_sizes(1000, 6999) == [1000, 2000]
    with pytest.raises(ValueError):
        stage_sizes(50, 1000)


def test_sampling_until_decisive_stops_on_violation_and_on_decision():
    leaky = GaussianVectorSystem(1.0, 1e-5, dim=1, sensitivity_factor=0.5)
    secret, secret_prime = next(iter(leaky.canaries().values()))
    out = audit_system_until_decisive(leaky, secret, secret_prime, budget=70_000, n_first=10_000, seed=2,
                                      channels=["value"])
    assert out.decision == "violated" and len(out.stages) == 1
    exact = GaussianVectorSystem(4.0, 1e-5, dim=1)
    out = audit_system_until_decisive(exact, secret, secret_prime, budget=70_000, n_first=10_000, seed=2,
                                      channels=["value"])
    # it decides at the first stage large enough for its own α (audit.power.samples_to_decide)
    from audit.power import samples_to_decide

    needed = [samples_to_decide(4.0, 1e-5, 0.05 * 2.0**-k, exact.claim.gdp_mu) for k in (1, 2, 3)]
    first = next(k for k, n in enumerate([10_000, 20_000, 40_000], start=1) if n >= needed[k - 1])
    assert out.decision == "consistent" and len(out.stages) == first
    last = out.stages[-1].detail.rows[0]
    assert last.detectable_epsilon <= 4.4 and out.stages[-1].alpha == pytest.approx(0.05 * 2.0 ** -len(out.stages))
    assert [s.n_per_side for s in out.stages] == [10_000 * 2**k for k in range(len(out.stages))]


def test_cli_prints_inconclusive_with_the_samples_that_would_decide(tmp_path, capsys):
    from pgc_cli.main import main

    out = tmp_path / "a.json"
    assert main(["audit", "--system", "toy-gaussian-miscalibrated-no-curve", "--samples", "20000", "--out", str(out),
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "INCONCLUSIVE" in printed and "108,000 per side would decide" in printed
    assert main(["audit", "--system", "toysystems.systems:gaussian_vector_system", "--samples", "auto:70000",
                 "--channels", "value", "--out", str(tmp_path / "b.json"), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "stage: 10,000 per side" in printed and "would have caught ε ≥" in printed
    assert main(["audit", "--mechanism", "laplace", "--epsilon", "1", "--samples", "auto"]) == 2
    assert "works with --system" in capsys.readouterr().err


def test_accountant_gives_the_exact_gaussian_curve_even_for_tiny_noise():
    import dp_accounting

    from audit.accountant import accountant_epsilon
    from audit.curves import gdp_epsilon

    mu = gdp_mu_for(2.0, 1e-5)
    assert accountant_epsilon(dp_accounting.GaussianDpEvent(1.0 / mu), 1e-5) == pytest.approx(2.0, rel=1e-6)
    composed = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 4)  # √4/2 = μ 1
    assert accountant_epsilon(composed, 1e-5) == pytest.approx(gdp_epsilon(1e-5, 1.0), rel=1e-9)
    # σ/Δ = 2.5e-5: a PLD grid would need terabytes; the closed form is immediate
    assert accountant_epsilon(dp_accounting.GaussianDpEvent(2.5e-5), 1e-5) > 1e8
