"""The one verdict rule and the one Holm rule, with the power of the test that ran; sampling until decisive."""

import math

import pytest

from audit.certification.curves import gdp_mu_for
from audit.certification.sequential import audit_system_until_decisive, stage_alphas, stage_sizes
from audit.engine.system_audit import audit_system
from audit.verdicts import decide, family_verdict, judge
from pgc.schemas.audit_rows import AuditRow, Verdict
from pgc.toysystems import GaussianVectorSystem, LaplaceCountSystem
from pgc.toysystems.systems import miscalibrated_gaussian_system


def _row(**fields) -> AuditRow:
    base = dict(
        channel="c",
        claimed_epsilon=1.0,
        claimed_delta=0.0,
        covered=True,
        epsilon_lower_bound=0.5,
        detectable_epsilon=1.2,
        samples_per_side=10_000,
    )
    return AuditRow.make(**{**base, **fields})


def test_a_bound_above_the_claim_is_violated_and_one_at_the_claim_is_not():
    assert decide(_row(epsilon_lower_bound=1.0 + 1e-9))[0] == Verdict.VIOLATED
    assert decide(_row(epsilon_lower_bound=1.0))[0] == Verdict.CONSISTENT  # the boundary itself passes
    assert decide(_row(delta_lower_bound=2e-5, claimed_delta=1e-5))[0] == Verdict.VIOLATED
    assert decide(_row(delta_lower_bound=1e-5, claimed_delta=1e-5))[0] == Verdict.CONSISTENT
    assert decide(_row(mu_lower_bound=0.51, claimed_mu=0.5))[0] == Verdict.VIOLATED
    assert (
        decide(_row(profile_epsilon_lower_bound=2.1, profile_claimed_epsilon=2.0, profile_delta=1e-3))[0] == "violated"
    )


def test_a_claim_that_contradicts_itself_is_violated_whatever_the_samples():
    verdict, reason = decide(_row(epsilon_lower_bound=0.0, claim_contradiction="μ = 0.752 means ε = 3.16"))
    assert verdict == Verdict.VIOLATED and reason == "μ = 0.752 means ε = 3.16"


def test_no_separation_claims_no_power():
    verdict, reason = decide(_row(epsilon_lower_bound=0.0, detectable_epsilon=1.1))
    assert verdict == Verdict.INCONCLUSIVE and "did not tell the two secrets apart" in reason
    # a curve test that separated them is separation enough
    assert decide(_row(epsilon_lower_bound=0.0, mu_lower_bound=0.1, claimed_mu=0.5))[0] == Verdict.CONSISTENT


def test_power_the_test_did_not_have_is_inconclusive():
    verdict, reason = decide(_row(detectable_epsilon=math.inf, samples_to_decide=70_500))
    assert verdict == Verdict.INCONCLUSIVE and "70,500 per side would decide" in reason
    verdict, reason = decide(_row(detectable_epsilon=None))
    assert verdict == Verdict.INCONCLUSIVE and "no counts" in reason


def test_uncovered_channels_unprotected_or_held_to_the_claim():
    assert decide(_row(covered=False, epsilon_lower_bound=5.0))[0] == Verdict.UNPROTECTED
    assert decide(_row(covered=False, epsilon_lower_bound=0.0))[0] == Verdict.INCONCLUSIVE
    verdict, reason = decide(_row(covered=False, held_to_claim=True, epsilon_lower_bound=1.3))
    assert verdict == Verdict.VIOLATED and "does not cover" in reason
    assert decide(_row(covered=False, held_to_claim=True, epsilon_lower_bound=0.6))[0] == Verdict.UNPROTECTED


def test_a_partly_covered_joint_row_counts_as_unprotected_only_above_the_claim():
    """The joint row of a claim covering some of its channels: a leak up to the claim may be the covered part's."""
    joint = dict(channel="all", covered=False, partly_covered=True, claimed_epsilon=1.0)
    verdict, reason = decide(_row(**joint, epsilon_lower_bound=1.0))  # at the claim: the covered part may leak it
    assert verdict == Verdict.INCONCLUSIVE and "may be that part's own" in reason
    verdict, reason = decide(_row(**joint, epsilon_lower_bound=1.0 + 1e-9))
    assert verdict == Verdict.UNPROTECTED and "more than that part may" in reason
    assert decide(_row(**joint, epsilon_lower_bound=0.0))[0] == Verdict.INCONCLUSIVE
    # Holm judges its finding by "no leak beyond the claim", not "no leak"
    below = judge(_row(**joint, epsilon_lower_bound=0.45, p_value=1.0, p_value_leak=1e-9))
    above = judge(_row(**joint, epsilon_lower_bound=1.3, p_value=1e-4, p_value_leak=1e-9))
    assert family_verdict([below], 0.05).verdict == Verdict.CONSISTENT
    assert family_verdict([below], 0.05).rejected == (False,)
    assert family_verdict([above], 0.05).verdict == Verdict.UNPROTECTED
    # held to the claim as a whole as well: tested once, by its claim (violated above it), never as a leak too
    held = judge(_row(**joint, held_to_claim=True, epsilon_lower_bound=1.3, p_value=1e-4, p_value_leak=1e-9))
    family = family_verdict([held], 0.05)
    assert held.verdict == Verdict.VIOLATED and family.verdict == Verdict.VIOLATED and family.size == 1
    assert held.finding_p_value() == 1e-4 and below.finding_p_value() == 1.0


def test_a_system_whose_claim_covers_one_of_two_channels_holds_its_joint_row_to_the_claim():
    from audit.engine.system_audit import AuditSettings
    from pgc.gympg.system import pendulum_system

    system = pendulum_system()
    result = audit_system(
        system,
        *list(system.canaries().values())[0],
        AuditSettings(samples=2_000, seed=3, confidence=0.95),
        channels=["gradient", "all"],
    )
    joint = next(r for r in result.rows if r.channel == "all")
    assert joint.partly_covered and not joint.covered
    assert joint.verdict == (
        Verdict.UNPROTECTED if joint.epsilon_lower_bound > joint.claimed_epsilon else Verdict.INCONCLUSIVE
    )
    assert not next(r for r in result.rows if r.channel == "gradient").partly_covered


def test_a_consistent_row_says_which_point_masses_it_does_not_exclude():
    row = judge(_row(point_mass_search=True, detectable_delta=2.7e-3, claimed_delta=1e-5))
    assert row.verdict == Verdict.CONSISTENT and row.separated
    assert "point mass ≥ 0.0027" in row.verdict_reason and "not excluded" in row.verdict_reason
    assert "no point-mass search ran" in judge(_row(point_mass_search=False)).verdict_reason


def test_holm_family_rejects_contradictions_outright_and_keeps_held_rows_in_the_claim_family():
    rows = [
        judge(_row(p_value=0.03, p_value_leak=0.0)),
        judge(_row(p_value=0.9, claim_contradiction="stated μ")),
        judge(_row(covered=False, held_to_claim=True, epsilon_lower_bound=1.3, p_value=0.001, p_value_leak=0.0)),
        judge(_row(covered=False, epsilon_lower_bound=0.2, p_value=1.0, p_value_leak=0.2)),
    ]
    family = family_verdict(rows, 0.05)
    assert family.verdict == Verdict.VIOLATED and family.size == 5  # 3 rows held to the claim, 2 uncovered
    assert family.rejected == (True, True, True, False)  # Holm: 0 < α/3, 0.001 < α/2, 0.03 < α
    assert family_verdict([rows[0], rows[3]], 0.05).rejected == (True, False)
    assert family_verdict([judge(_row(p_value=0.06))], 0.05).verdict == Verdict.CONSISTENT
    assert family_verdict(rows[3:], 0.05).verdict == Verdict.CONSISTENT  # its leak is not significant
    assert family_verdict([judge(_row(epsilon_lower_bound=0.0, p_value=1.0))], 0.05).verdict == Verdict.INCONCLUSIVE


def _audit(system, n, seed=0):
    secret, secret_prime = next(iter(system.canaries().values()))
    return audit_system(system, secret, secret_prime, samples=n, seed=seed, channels=[system.channels[0]])


def test_miscalibrated_gaussian_violated_on_its_curve_inconclusive_without_it():
    # noise for a sensitivity of 1e-4 on a vector of diameter 2, claiming (10, 1e-5), 2e4 per side
    with_curve = _audit(miscalibrated_gaussian_system(curve=True), 20_000).rows[0]
    assert with_curve.verdict == "violated" and with_curve.claim_contradiction is None
    assert with_curve.mu_lower_bound > 3 * with_curve.claimed_mu  # μ ≥ 7 against a claimed 2
    assert with_curve.epsilon_lower_bound < 10.0  # the threshold bound alone could not show it
    without = _audit(miscalibrated_gaussian_system(curve=False), 20_000)
    row = without.rows[0]
    assert row.verdict == "inconclusive" and without.verdict == "inconclusive"
    assert row.max_certifiable_epsilon < 10.0 and math.isinf(row.detectable_epsilon)
    assert row.mu_lower_bound is None and 20_000 < row.samples_to_decide < 200_000


def test_correct_gaussian_is_consistent_and_states_what_its_test_would_have_caught():
    system = GaussianVectorSystem(2.0, 1e-5, dim=4)
    row = _audit(system, 20_000, seed=3).rows[0]
    assert row.verdict == "consistent" and row.separated
    assert row.claimed_mu == pytest.approx(system.claim.gdp_mu)
    assert 0.0 < row.mu_lower_bound < row.claimed_mu
    assert 1.0 < row.curve_epsilon < 2.0 and row.epsilon_lower_bound < row.curve_epsilon
    assert 2.0 < row.detectable_epsilon < 4.0 and "a leak of ε ≥" in row.verdict_reason


def test_curve_claim_at_its_boundary_passes_and_just_below_fails():
    # the same releases: claimed at the true μ the curve holds; claimed at 0.8 μ it is flagged
    exact = GaussianVectorSystem(1.0, 1e-5, dim=1)
    assert _audit(exact, 100_000, seed=1).rows[0].verdict == "consistent"
    from pgc.contracts import PrivacyClaim

    tight = GaussianVectorSystem(1.0, 1e-5, dim=1)
    tight.claim = PrivacyClaim(1.0, 1e-5, ("value",), gdp_mu=0.8 * exact.claim.gdp_mu)
    row = _audit(tight, 100_000, seed=1).rows[0]
    assert row.verdict == "violated" and row.mu_lower_bound > 0.8 * exact.claim.gdp_mu


def test_laplace_rows_state_power_without_a_curve():
    row = _audit(LaplaceCountSystem(1.0), 20_000).rows[0]
    assert row.claimed_mu is None and row.mu_lower_bound is None and row.curve_epsilon is None
    assert row.verdict == "consistent" and 1.0 < row.detectable_epsilon < 1.5


def test_stage_sizes_double_within_the_budget_and_their_alphas_sum_to_alpha():
    assert stage_sizes(1000, 7000) == [1000, 2000, 4000]
    assert stage_sizes(1000, 6999) == [1000, 2000]
    with pytest.raises(ValueError):
        stage_sizes(50, 1000)
    alphas = stage_alphas(0.05, [1000, 2000, 4000])
    assert sum(alphas) == pytest.approx(0.05) and alphas[2] == pytest.approx(4 * alphas[0])


def test_sampling_until_decisive_stops_on_violation_and_decides_on_certified_results():
    leaky = GaussianVectorSystem(1.0, 1e-5, dim=1, sensitivity_factor=0.5)
    secret, secret_prime = next(iter(leaky.canaries().values()))
    out = audit_system_until_decisive(
        leaky, secret, secret_prime, budget=70_000, n_first=10_000, seed=2, channels=["value"]
    )
    assert out.verdict == "violated" and out.decisive and len(out.stages) == 1
    exact = GaussianVectorSystem(4.0, 1e-5, dim=1)
    out = audit_system_until_decisive(
        exact, secret, secret_prime, budget=70_000, n_first=10_000, seed=2, channels=["value"]
    )
    assert out.verdict == "consistent" and out.decisive
    last = out.stages[-1].detail.rows[0]
    assert last.separated and last.detectable_epsilon <= 4.4  # its own certified test showed the power
    assert all(s.decision == "undecided" for s in out.stages[:-1])
    assert [s.n_per_side for s in out.stages] == [10_000 * 2**k for k in range(len(out.stages))]
    assert out.stages[-1].alpha == pytest.approx(stage_alphas(0.05, [10_000, 20_000, 40_000])[len(out.stages) - 1])


@pytest.mark.slow
def test_cli_prints_inconclusive_with_the_samples_that_would_decide(tmp_path, capsys):
    from pgc.cli.main import main

    out = tmp_path / "a.json"
    assert (
        main(
            [
                "audit",
                "--system",
                "toy-gaussian-miscalibrated-no-curve",
                "--samples",
                "20000",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "INCONCLUSIVE" in printed and "per side would decide" in printed
    assert (
        main(
            [
                "audit",
                "--system",
                "pgc.toysystems.systems:gaussian_vector_system",
                "--samples",
                "auto:70000",
                "--channels",
                "value",
                "--out",
                str(tmp_path / "b.json"),
                "--no-progress",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "stage: 10,000 per side" in printed and "would have been caught" in printed
    assert main(["audit", "--mechanism", "laplace", "--epsilon", "1", "--samples", "auto"]) == 2
    assert "works with --system" in capsys.readouterr().err


def test_accountant_gives_the_exact_gaussian_curve_even_for_tiny_noise():
    import dp_accounting

    from audit.certification.accountant import accountant_epsilon
    from audit.certification.curves import gdp_epsilon

    mu = gdp_mu_for(2.0, 1e-5)
    assert accountant_epsilon(dp_accounting.GaussianDpEvent(1.0 / mu), 1e-5) == pytest.approx(2.0, rel=1e-6)
    composed = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 4)  # √4/2 = μ 1
    assert accountant_epsilon(composed, 1e-5) == pytest.approx(gdp_epsilon(1e-5, 1.0), rel=1e-9)
    # σ/Δ = 2.5e-5: a PLD grid would need terabytes; the closed form is immediate
    assert accountant_epsilon(dp_accounting.GaussianDpEvent(2.5e-5), 1e-5) > 1e8
