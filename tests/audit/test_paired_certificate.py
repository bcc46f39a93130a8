"""The paired certificate (audit.certification.paired): its numbers, its validity at the ε-DP boundary and where
the selection takes it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.certification.bounds import cp_upper, epsilon_lower_bound, max_certifiable_epsilon
from audit.certification.paired import (
    NUISANCE_SHARE,
    certified_epsilon,
    certified_p_value,
    discordant_pairs,
    expected_discordant,
    odds_ratio_epsilon,
    paired_claim_p_value,
    paired_epsilon_lower_bound,
    projected_certificates,
)
from audit.certification.paired import max_certifiable_epsilon as paired_max_certifiable_epsilon
from audit.certification.tester import CandidateTest, bound_from_counts, certify
from pgc.errors import UserError

ALPHA = 0.05


def test_no_x_prime_only_pair_has_a_closed_form():
    """With every discordant pair on the x side and no false positive, the Clopper–Pearson lower bound of the
    binomial's rate is (α − γ)^(1/m) and the nuisance interval is [0, 1 − (γ/2)^(1/n)]."""
    m, n = 400, 10_000
    gamma = NUISANCE_SHARE * ALPHA
    q = (ALPHA - gamma) ** (1.0 / m)
    psi = q / (1.0 - q)
    high = 1.0 - (gamma / 2.0) ** (1.0 / n)
    want = max(math.log(psi / (1.0 + high * (psi - 1.0))), 0.5 * math.log(psi))
    assert paired_epsilon_lower_bound(m, 0, 0, n, ALPHA) == pytest.approx(want, rel=1e-9)


def test_odds_ratio_epsilon_reads_the_tighter_of_the_two_definitions():
    psi = math.exp(0.4)
    # the x'-rate is small: ψ_max = e^ε·(1 − p′)/(1 − e^ε·p′), inverted at the interval's top
    assert odds_ratio_epsilon(psi, 0.0, 0.01) == pytest.approx(math.log(psi / (1.0 + 0.01 * (psi - 1.0))))
    # an interval across the crossing p′ = 1/(1 + e^ε): the odds ratio of both definitions at once, ε = ½·ln ψ
    assert odds_ratio_epsilon(psi, 0.3, 0.7) == pytest.approx(0.2)
    # the x'-rate is large: the complement's definition binds, read at the interval's bottom
    assert odds_ratio_epsilon(psi, 0.99, 1.0) == pytest.approx(math.log(1.0 + 0.99 * (psi - 1.0)))
    assert odds_ratio_epsilon(0.8, 0.0, 0.1) == 0.0
    assert odds_ratio_epsilon(np.inf, 0.0, 0.0) == np.inf


def _boundary_counts(rng, eps, p_neg, n, trials):
    """Pair types of n pairs per trial from the ε-DP boundary: the x-rate at the most ε allows given the x'-rate."""
    p_pos = min(math.exp(eps) * p_neg, 1.0 - math.exp(-eps) * (1.0 - p_neg))
    probs = [p_pos * p_neg, p_pos * (1.0 - p_neg), (1.0 - p_pos) * p_neg, (1.0 - p_pos) * (1.0 - p_neg)]
    counts = rng.multinomial(n, probs, size=trials)
    return counts[:, 1], counts[:, 2], counts[:, 0] + counts[:, 2]


@pytest.mark.parametrize("eps", [0.1, 1.0])
@pytest.mark.parametrize("p_neg", [0.005, 0.1, "crossing", 0.9])
def test_false_rejections_at_the_boundary_stay_below_alpha(eps, p_neg):
    """An ε-DP event at the boundary of the definition, where the certificate is most tempted: ε_LB > ε in at most
    α of the audits. 4,000 audits per case: the observed rate exceeds α + 3 standard errors (0.060) with
    probability ≈ 0.13 % when the true rate is α (the false-failure rate of each case)."""
    case = [0.005, 0.1, "crossing", 0.9].index(p_neg)
    rng = np.random.default_rng(np.random.SeedSequence([20261207, int(eps * 10), case]))
    p = 1.0 / (1.0 + math.exp(eps)) if p_neg == "crossing" else float(p_neg)
    trials = 4_000
    only_pos, only_neg, fp = _boundary_counts(rng, eps, p, 20_000, trials)
    bound = paired_epsilon_lower_bound(only_pos, only_neg, fp, 20_000, ALPHA)
    limit = ALPHA + 3.0 * math.sqrt(ALPHA * (1 - ALPHA) / trials)
    assert np.mean(bound > eps) <= limit


def test_a_rare_event_certifies_more_than_the_split_bound():
    """On a rare event the two margins combine as √(1/k + 1/k′) instead of adding: the expected counts of 52,915
    releases per side of SVT34Parallel's best event at "half half" (rates 2.10 % and 1.61 %) certify 0.142 split and
    0.190 paired."""
    n = 52_915
    tp, fp = 0.020970 * n, 0.01605 * n
    only_pos, only_neg = expected_discordant(tp, fp, n)
    split = max(epsilon_lower_bound(fp, n, n - tp, n, ALPHA, 0.0, s) for s in (0.1, 0.25, 0.5, 0.75, 0.9))
    paired = paired_epsilon_lower_bound(only_pos, only_neg, fp, n, ALPHA)
    assert split == pytest.approx(0.1416, abs=5e-4)
    assert paired == pytest.approx(0.1896, abs=5e-4)


def test_the_p_value_is_the_alpha_at_which_the_bound_reaches_the_claim():
    only_pos, only_neg, fp, n = 1_100, 830, 850, 52_915
    bound = paired_epsilon_lower_bound(only_pos, only_neg, fp, n, ALPHA)
    assert paired_claim_p_value(only_pos, only_neg, fp, n, bound * 0.999) < ALPHA
    assert paired_claim_p_value(only_pos, only_neg, fp, n, bound * 1.001) > ALPHA
    assert paired_claim_p_value(only_pos, only_neg, fp, n, math.inf) == 1.0
    assert certified_p_value(fp, n - 1_120, n, bound * 1.001, 0.0, None, (only_pos, only_neg)) > ALPHA


def test_discordant_pairs_pair_by_index_over_the_shorter_side():
    pos = np.array([1, 1, 0, 0, 1], dtype=bool)
    neg = np.array([1, 0, 1, 0], dtype=bool)
    assert discordant_pairs(pos, neg) == (1, 1)
    with pytest.raises(UserError):
        paired_epsilon_lower_bound(6, 5, 0, 10, ALPHA)


def test_the_selection_takes_the_certificate_that_projects_more():
    """A rare event that both secrets produce projects more paired; a frequent event the second secret never
    produces projects more split (the odds ratio's correction for p′ costs more than the combined margin saves)."""
    rng = np.random.default_rng(3)
    n = 20_000
    s_pos = (rng.random(n) < 0.03).astype(float)
    s_neg = (rng.random(n) < 0.02).astype(float)
    split, paired = projected_certificates(s_pos, s_neg, 1.0, 0.5, 50_000, ALPHA, two_sided=True)
    assert paired > split > 0.0
    frequent, never = (rng.random(n) < 0.3).astype(float), np.zeros(n)
    split, paired = projected_certificates(frequent, never, 1.0, 0.5, 50_000, ALPHA, two_sided=True)
    assert split > paired > 1.0


def _threshold_test(paired: bool) -> CandidateTest:
    return CandidateTest("x vs x'", "identity", lambda y: np.asarray(y)[:, 0], 1.0, 0.5, 0.2, 1_000, paired=paired)


def test_a_paired_test_is_certified_from_its_pairs_and_says_so():
    rng = np.random.default_rng(11)
    pos = (rng.random((30_000, 1)) < 0.03).astype(float)
    neg = (rng.random((30_000, 1)) < 0.02).astype(float)
    bound = certify(_threshold_test(True), [pos[:20_000], pos[20_000:]], [neg], 0.95)
    pairs = discordant_pairs(pos[:, 0] >= 1.0, neg[:, 0] >= 1.0)
    assert bound.discordant_pairs == pairs and bound.fp_share is None
    assert bound.epsilon_lower_bound == pytest.approx(paired_epsilon_lower_bound(*pairs, int(neg.sum()), 30_000, ALPHA))
    assert bound.epsilon_lower_bound == pytest.approx(
        certified_epsilon(bound.false_positives, bound.false_negatives, 30_000, ALPHA, 0.0, None, pairs)
    )
    assert bound.fpr_upper == pytest.approx(cp_upper(bound.false_positives, 30_000, NUISANCE_SHARE * ALPHA / 2))
    split = certify(_threshold_test(False), [pos], [neg], 0.95)
    assert split.discordant_pairs is None and split.fp_share == 0.5
    assert split.epsilon_lower_bound < bound.epsilon_lower_bound
    # each row's cap is its own certificate's: a perfect test's bound (every pair on the x side, no false positive)
    assert bound.max_certifiable_epsilon == paired_max_certifiable_epsilon(30_000, ALPHA)
    assert bound.max_certifiable_epsilon == pytest.approx(paired_epsilon_lower_bound(30_000, 0, 0, 30_000, ALPHA))
    assert split.max_certifiable_epsilon == pytest.approx(max_certifiable_epsilon(30_000, ALPHA, 0.0, 0.5))
    assert bound.max_certifiable_epsilon < split.max_certifiable_epsilon


def test_no_counts_certify_more_than_the_paired_cap():
    """The cap is the largest bound over every possible outcome of n pairs: every split of the discordant pairs and
    every false-positive count they allow (n = 30, brute force)."""
    n = 30
    a, b, fp = (grid.ravel() for grid in np.meshgrid(*(np.arange(n + 1),) * 3, indexing="ij"))
    possible = (a + b <= n) & (b <= fp) & (fp <= n - a)
    bounds = paired_epsilon_lower_bound(a[possible], b[possible], fp[possible], n, ALPHA)
    assert float(np.max(bounds)) == pytest.approx(paired_max_certifiable_epsilon(n, ALPHA))
    with pytest.raises(UserError, match="discordant pairs"):
        bound_from_counts(_threshold_test(True), 900, 30_000, 600, 30_000, 0.95)


def test_the_paired_certificate_refuses_a_claim_with_delta_and_impossible_counts():
    with pytest.raises(UserError, match="pure ε"):
        certified_epsilon(100, 900, 1_000, ALPHA, 1e-5, None, (60, 40))
    with pytest.raises(UserError, match="pure ε"):
        certified_p_value(100, 900, 1_000, 1.0, 1e-5, None, (60, 40))
    with pytest.raises(UserError, match="false positives"):
        paired_epsilon_lower_bound(60, 40, 30, 1_000, ALPHA)


def test_a_system_audit_row_by_the_paired_certificate_recertifies_bit_for_bit():
    """ReportNoisyMax4's leak lies in a rare tail of its released maximum: the audit certifies it by the paired
    certificate, its row records the pairs, and recertifying the row from its counts gives the same bound, p-value
    and power, with the verdict its p-value implies."""
    from audit.engine.recertify import recertify
    from audit.engine.system_audit import audit_system
    from pgc.catalogue import catalogue_system

    system = catalogue_system("ReportNoisyMax4")
    first, second = system.canaries()["all below"]
    row = audit_system(system, first, second, samples=50_000, confidence=0.95, seed=0).row("output")
    assert row.discordant_pairs is not None and row.fp_share is None and row.delta_lower_bound is None
    again, identical = recertify(row)
    assert identical
    assert (again.epsilon_lower_bound, again.p_value, again.detectable_epsilon) == (
        row.epsilon_lower_bound,
        row.p_value,
        row.detectable_epsilon,
    )
    assert (row.p_value < ALPHA) == (row.epsilon_lower_bound > row.claimed_epsilon)


@pytest.mark.parametrize("rate", [0.02, 0.3])
def test_a_paired_rows_power_is_true_of_its_certificate(rate):
    """The detectable ε of a row certified by the paired certificate: a leak of that size through the certified
    event (at the ε-DP boundary) is certified above the claim in at least 0.9 of 2,000 simulated certifications
    (its counts are read at quantiles that hold together with probability 0.95; a true rate of 0.95 falls below
    0.9 in 2,000 draws with probability < 10⁻¹²)."""
    from audit.power.measured import event_detectable_epsilon, leak_tpr

    n, claim = 50_000, 0.1
    leak = event_detectable_epsilon(int(rate * n), n, ALPHA, None, claim, 0.0, False)
    assert claim < leak < 1.0
    p_pos = leak_tpr(rate, leak, 0.0, False)
    rng = np.random.default_rng(np.random.SeedSequence([20261207, int(rate * 100)]))
    kinds = [p_pos * rate, p_pos * (1 - rate), (1 - p_pos) * rate, (1 - p_pos) * (1 - rate)]
    c = rng.multinomial(n, kinds, size=2_000)
    bound = paired_epsilon_lower_bound(c[:, 1], c[:, 2], c[:, 0] + c[:, 2], n, ALPHA)
    assert np.mean(bound > claim) >= 0.9
