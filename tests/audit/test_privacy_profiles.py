"""Claims with a privacy profile (a privacy-loss distribution's δ(ε) curve): the math against known numbers,
the claim at its boundary, and the audit of DP-SGD sampled as its accountant assumes and as it is not."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import pgc.schemas as schemas
from audit.certification.curves import (
    gdp_delta,
    profile_epsilons,
    profile_excess,
    profile_point,
    profile_violation_pvalue,
)
from audit.engine.system_audit import audit_system
from audit.power import detectable_epsilon, flags_leak
from pgc.cli.main import main
from pgc.contracts import PrivacyClaim
from pgc.mechanisms.accounting import gaussian_event, poisson_gaussian_event, privacy_profile
from pgc.toysystems.dpsgd import dp_sgd_system


def test_a_claim_holds_a_profile_and_refuses_a_bad_one():
    claim = PrivacyClaim(1.0, 1e-5, ("x",), privacy_profile=[(0, 0.3), (1.0, 1e-5)])
    assert claim.privacy_profile == ((0.0, 0.3), (1.0, 1e-5))
    assert PrivacyClaim.of(claim) is claim
    for bad in ([], [(0.0, 1.5)], [(-1.0, 0.1)], [(math.inf, 0.0)], ["ab"], 3):
        with pytest.raises(ValueError):
            PrivacyClaim(1.0, 1e-5, ("x",), privacy_profile=bad)
    with pytest.raises(ValueError, match="not both"):
        PrivacyClaim(1.0, 1e-5, ("x",), gdp_mu=0.5, privacy_profile=[(0.0, 0.3)])


def test_the_profile_of_one_gaussian_is_its_gdp_curve_from_above():
    # one Gaussian release with σ = 2Δ is 0.5-GDP (Dong, Roth & Su, Cor. 2.13 gives its δ(ε))
    profile = privacy_profile(gaussian_event(2.0), points=33)
    for eps, delta in profile:
        exact = gdp_delta(eps, 0.5)
        assert delta >= exact - 1e-12  # the accountant's δ are upper bounds
        assert delta <= exact + 2e-3
    assert profile[0][0] == 0.0 and profile[-1][1] <= 1.01e-12


def test_certified_epsilon_at_a_profile_point_is_the_kov_inequality():
    # Kairouz-Oh-Viswanath: (ε, δ)-DP needs FPR·e^ε + FNR ≥ 1 − δ and FNR·e^ε + FPR ≥ 1 − δ
    eps = profile_epsilons(0.1, 0.5, ((0.0, 0.0), (1.0, 0.2)))
    assert eps[0] == pytest.approx(math.log(0.5 / 0.1))
    assert eps[1] == pytest.approx(math.log(0.3 / 0.1))
    excess, delta_i, eps_i = profile_point(0.1, 0.5, ((0.0, 0.0), (1.0, 0.2)))
    assert (delta_i, eps_i) == (0.0, 0.0) and excess == pytest.approx(math.log(5.0))


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_randomized_response_at_its_boundary(epsilon):
    """Counts of randomized response at ε (both error rates 1/(1+e^ε)) on 10⁷ per side: a profile claiming
    ε holds; one claiming 0.97·ε is violated (OpenDP's test at the boundary)."""
    n = 10_000_000
    errors = round(n / (1.0 + math.exp(epsilon)))
    assert profile_excess(errors, errors, n, n, 0.05, ((epsilon, 0.0),))[0] < 0.0
    below = ((0.97 * epsilon, 0.0),)
    assert profile_excess(errors, errors, n, n, 0.05, below)[0] > 0.0
    p = profile_violation_pvalue(errors, errors, n, n, below)
    assert p < 0.05 and profile_excess(errors, errors, n, n, min(0.5, 1.5 * p), below)[0] > 0.0
    assert profile_violation_pvalue(errors, errors, n, n, ((epsilon, 0.0),)) == 1.0


def test_power_with_a_profile_is_finite_and_agrees_with_flags_leak():
    profile = privacy_profile(poisson_gaussian_event(0.1, 0.8, 10), points=65)
    detectable = detectable_epsilon(4.5, 1e-5, 100_000, 0.05, claimed_profile=profile)
    assert 0.5 < detectable < 4.5
    assert flags_leak(1.05 * detectable, 4.5, 1e-5, 100_000, 0.05, claimed_profile=profile)
    assert not flags_leak(0.9 * detectable, 4.5, 1e-5, 100_000, 0.05, claimed_profile=profile)


@pytest.mark.slow
def test_dp_sgd_as_accounted_is_not_flagged_and_a_fixed_batch_is():
    honest = audit_system(dp_sgd_system("poisson"), 1.0, 0.0, samples=20_000, seed=3, channels=["updates"])
    assert honest.verdict == "consistent"
    row = honest.rows[0]
    assert row.profile_delta is not None and row.profile_epsilon_lower_bound <= row.profile_claimed_epsilon
    fixed = audit_system(dp_sgd_system("always"), 1.0, 0.0, samples=20_000, seed=3, channels=["updates"])
    assert fixed.verdict == "violated" and fixed.rows[0].profile_epsilon_lower_bound > 2.0


@pytest.mark.slow
def test_shuffled_batches_break_the_poisson_profile_but_not_its_epsilon_delta(tmp_path, capsys):
    """Shuffling (one step per epoch) accounted as Poisson subsampling, through the CLI and the report: the
    profile catches it where the (ε, δ) alone cannot at this n (σ = 0.6: a clear case at 4e4 per side)."""
    out = tmp_path / "audit.json"
    assert (
        main(
            [
                "audit",
                "--system",
                "toy-dpsgd-shuffle",
                "--setting",
                "noise_multiplier=0.6",
                "--samples",
                "40000",
                "--channels",
                "updates",
                "--seed",
                "1",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "the claim promises ε ≤" in capsys.readouterr().out
    result = schemas.load(json.loads(out.read_text()), kind="system-audit")
    row = result.rows[0]
    assert result.verdict == "violated" and row.profile_epsilon_lower_bound > row.profile_claimed_epsilon
    assert row.epsilon_lower_bound < row.claimed_epsilon  # the threshold test alone does not show it
    assert len(result.claim.privacy_profile) > 100
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    assert "claimed privacy profile" not in (tmp_path / "report" / "report.md").read_text()  # a figure, not text
    assert (tmp_path / "report" / "figures" / "tradeoff_curves.png").stat().st_size > 10_000
    setting = {"sampling_rate": 0.1, "noise_multiplier": 0.6, "steps": 10}
    alone = audit_system(
        dp_sgd_system("shuffle", profile=False, **setting), 1.0, 0.0, samples=20_000, seed=1, channels=["updates"]
    )
    assert alone.verdict != "violated" and alone.rows[0].profile_delta is None


def test_a_bad_profile_setting_is_refused():
    with pytest.raises(ValueError, match="profile"):
        dp_sgd_system("poisson", profile="yes")
    with pytest.raises(ValueError, match="sampling"):
        dp_sgd_system("sometimes")
    with pytest.raises(ValueError, match="shuffle"):
        dp_sgd_system("shuffle", sampling_rate=0.3)
    assert np.isfinite(dp_sgd_system("poisson").claim.epsilon)


class _Column:
    """A statistic reading one column of the release."""

    def __init__(self, name, column):
        self.name, self.column = name, column

    def fit(self, pos, neg):
        return lambda y: y[:, self.column]


def test_a_profile_claim_ranks_its_statistics_by_the_projected_excess_over_the_profile():
    """Column 0 holds a rare, far tail (2 % of the releases at +6: a large threshold ε, a total variation of 0.02),
    column 1 a small shift (N(0.5, 1) vs N(0, 1): a threshold ε near 1, a total variation of 0.2). Against the
    profile point (ε, δ) = (0, 0.1) only column 1 projects an excess: ranked by the threshold test the tail wins,
    ranked for the profile the shift does. Seeded; the projections differ by far more than their noise."""
    from audit.certification.choice import projector
    from audit.statistics.selection import select_statistic

    rng = np.random.default_rng(11)
    n = 20_000

    def side(shifted: bool) -> np.ndarray:
        tail = np.where(rng.random(n) < 0.02, 6.0, rng.standard_normal(n)) if shifted else rng.standard_normal(n)
        return np.stack([tail, rng.standard_normal(n) + (0.5 if shifted else 0.0)], axis=1)

    pos, neg = side(True), side(False)
    statistics = [_Column("tail", 0), _Column("shift", 1)]

    def chosen(curve_alpha, profile):
        project = projector(100_000, 0.05, 0.0, True, curve_alpha, profile)
        return select_statistic(statistics, pos, neg, pos, neg, project, tie_margin=0.01)

    by_threshold = chosen(None, None)
    by_profile = chosen(0.04, ((0.0, 0.1),))
    assert by_threshold[0].name == "tail" and by_profile[0].name == "shift"
    assert by_profile[4][-1] > 0.0 and len(by_profile[4]) == 5  # threshold, share, ε, curve threshold, ranking
