"""The reference frequency oracles: their probabilities against known numbers, their exact ε, their reports'
frequencies, the LDP-Auditor bound and guess, and a correct protocol audited at its boundary."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta
from statsmodels.stats.proportion import proportion_confint

from audit.engine.system_audit import AuditSettings, audit_system
from audit.peers.ldp_auditor import ldp_auditor_epsilon
from pgc.ldp.direct import GRR, HistogramEncoding, SubsetSelection, the_threshold
from pgc.ldp.guesses import guess_hits
from pgc.ldp.hadamard import HadamardMechanism, HadamardResponse, hadamard_sign
from pgc.ldp.hashed import LocalHashing
from pgc.ldp.hashing import UNIVERSAL_PRIME, xxh32_of_text
from pgc.ldp.oracle import integer_from_limbs, integer_limbs
from pgc.ldp.registry import REFERENCE, make_oracle, parse_spec
from pgc.ldp.system import OracleSystem, reference_system
from pgc.ldp.unary import Rappor, UnaryEncoding, rappor_f

Z = 5.0  # |z| beyond which a frequency check fails: two-sided false-failure rate 5.7e-7 per check


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def test_probabilities_match_the_papers_numbers():
    grr = GRR(4, math.log(3))  # p = 3/(3 + 3), q = 1/6
    assert (grr.p, grr.q) == pytest.approx((0.5, 1 / 6))
    assert UnaryEncoding(5, 2 * math.log(3)).p == pytest.approx(0.75)  # SUE: e^{ε/2} = 3
    assert UnaryEncoding(5, math.log(3), optimized=True).q == pytest.approx(0.25)  # OUE: 1/(e^ε + 1)
    assert LocalHashing(10, math.log(3.4)).g == 4  # OLH: round(e^ε) + 1
    ss = SubsetSelection(10, math.log(4))  # s = round(10/5) = 2, p_v = 2·4/(2·4 + 8)
    assert (ss.s, ss.p_v) == (2, pytest.approx(0.5))
    assert rappor_f(2 * math.log(3), 1) == pytest.approx(0.5)  # 2·ln((1 − f/2)/(f/2)) = 2·ln 3
    hr = HadamardResponse(25, 0.5)  # B = 2^⌊log₂ e^0.5⌋ = 1, b = 2^⌈log₂ 26⌉ = 32
    assert (hr.blocks, hr.block_size, hr.outputs) == (1, 32, 32)
    assert HadamardMechanism(25, math.log(3)).t == 2  # ⌈log₂(3 + 1)⌉
    assert the_threshold(1.0) == pytest.approx(0.6186, abs=2e-4)  # the θ pure-ldp's HEServer prints at ε = 1


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_every_reference_oracle_is_exactly_epsilon_dp(name):
    oracle = REFERENCE[name](25, 1.3)
    assert oracle.exact_epsilon(0, 24) == pytest.approx(1.3, abs=1e-9)  # RAPPOR: its filters for 0 and 24 differ
    reports = oracle.release(np.zeros(50, dtype=int), rng(1))
    assert reports.shape == (50, oracle.width) and np.all(np.isfinite(reports))
    support = oracle.support(reports, [0, 24])
    assert support.shape == (50, 2)


def test_report_frequencies_match_the_protocol():
    n = 40_000
    grr = GRR(10, 1.0)
    y = grr.release(np.full(n, 3), rng(2))[:, 0]
    for value, prob in ((3, grr.p), (7, grr.q)):
        hit = np.mean(y == value)
        assert abs(hit - prob) < Z * math.sqrt(prob * (1 - prob) / n)
    oue = UnaryEncoding(10, 1.0, optimized=True)
    bits = oue.release(np.full(n, 3), rng(3))
    for column, prob in ((3, oue.p), (5, oue.q)):
        assert abs(bits[:, column].mean() - prob) < Z * math.sqrt(prob * (1 - prob) / n)
    ss = SubsetSelection(10, 0.5)
    member = ss.release(np.full(n, 3), rng(4))
    assert np.all(member.sum(axis=1) == ss.s)
    assert abs(member[:, 3].mean() - ss.p_v) < Z * math.sqrt(ss.p_v * (1 - ss.p_v) / n)


def test_local_hashing_support_is_exact_hash_agreement():
    olh = LocalHashing(20, 2.0)
    reports = olh.release(np.full(20_000, 5), rng(5))
    assert np.all(reports[:, 1:] < UNIVERSAL_PRIME)
    support = olh.support(reports, [5])[:, 0]
    assert abs(support.mean() - olh.p) < Z * math.sqrt(olh.p * (1 - olh.p) / len(support))


def test_hadamard_response_lands_in_its_set_as_often_as_the_paper_says():
    hr = HadamardResponse(25, 2.0)
    y = hr.release(np.full(30_000, 7), rng(6))
    inside = hr.support(y, [7])[:, 0].mean()
    expected = (hr.uniform / hr.outputs + (1 - hr.uniform) * 2 / hr.block_size) * hr.block_size / 2
    assert abs(inside - expected) < Z * math.sqrt(expected * (1 - expected) / len(y))
    assert hadamard_sign(3, 5) == -1 and hadamard_sign(3, 4) == 1


def test_rappor_without_the_instantaneous_step_keeps_a_set_bit_with_prob_one_minus_half_f():
    rappor = Rappor(10, 2.0, bits=16, cohorts=2)
    reports = rappor.release(np.full(20_000, 4), rng(7))
    cohort = reports[:, -1].astype(int)
    own = reports[np.arange(len(reports)), rappor.positions[cohort, 0, 4]]
    prob = 1 - rappor.f / 2
    assert abs(own.mean() - prob) < Z * math.sqrt(prob * (1 - prob) / len(own))


def test_xxh32_matches_the_xxhash_package():
    xxhash = pytest.importorskip("xxhash")
    seeds = rng(8).integers(0, 2**63 - 1, size=200, dtype=np.int64)
    for value in (0, 9, 42, 123456):
        text = str(value).encode()
        want = np.array([xxhash.xxh32(text, seed=int(s)).intdigest() for s in seeds], dtype=np.uint32)
        np.testing.assert_array_equal(xxh32_of_text(text, seeds), want)


def test_integer_limbs_are_lossless():
    values = np.array([0, 1, 2**63 - 1, 6021925473871479196], dtype=np.uint64)
    np.testing.assert_array_equal(integer_from_limbs(integer_limbs(values)), values)


def test_ldp_auditor_bound_is_clopper_pearson_at_half_alpha():
    tp, fp, n, alpha = 600, 300, 1000, 0.05
    lower = beta.ppf(alpha / 2, tp, n - tp + 1)
    upper = beta.ppf(1 - alpha / 2, fp + 1, n - fp)
    assert ldp_auditor_epsilon(tp, n, fp, n, alpha) == pytest.approx(math.log(lower / upper), rel=1e-9)
    assert proportion_confint(tp, n, alpha=alpha, method="beta")[0] == pytest.approx(lower)
    assert ldp_auditor_epsilon(300, 1000, 600, 1000, alpha) == 0.0  # the event favours the other value
    with pytest.raises(ValueError):
        ldp_auditor_epsilon(5, 4, 0, 4, alpha)


def test_guesses_follow_the_support_argmax():
    grr = GRR(10, 1.0)
    reports = grr.release(np.full(5000, 2), rng(9))
    assert guess_hits(grr, reports, 2, rng(10)) == int(np.sum(reports[:, 0] == 2))  # no ties: the report itself
    oue = UnaryEncoding(4, 1.0, optimized=True)
    silent = np.zeros((40_000, 4))  # no bit set: every value ties, the guess is uniform
    hits = guess_hits(oue, silent, 1, rng(11))
    assert abs(hits / 40_000 - 0.25) < Z * math.sqrt(0.25 * 0.75 / 40_000)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="domain size"):
        GRR(1, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        GRR(4, 0.0)
    with pytest.raises(ValueError, match="values must lie"):
        GRR(4, 1.0).release([4], rng())
    with pytest.raises(ValueError, match="LIBRARY:PROTOCOL"):
        parse_spec("GRR")
    with pytest.raises(ValueError, match="has no protocol"):
        parse_spec("reference:NOPE")
    with pytest.raises(ValueError, match="secret is a value"):
        reference_system("GRR", 4, 1.0).release(7, 3, rng())
    with pytest.raises(ValueError, match="different values"):
        OracleSystem(GRR(4, 1.0), pair=(2, 2))
    with pytest.raises(ValueError, match="does not take"):
        make_oracle("reference", "GRR", 4, 1.0, hashes=2)


def test_a_correct_protocol_at_its_boundary_is_not_flagged():
    """GRR claims exactly its exact ε: one seeded audit at 99% confidence (false-failure rate ≤ 1%)."""
    system = reference_system("GRR", 2, 1.0)
    result = audit_system(system, 0, 1, AuditSettings(samples=50_000, seed=3, confidence=0.99), channels=["report"])
    row = result.rows[0]
    assert result.verdict != "violated"
    assert 0.9 < row.epsilon_lower_bound <= 1.0  # tight: the event "report = v" is the likelihood-ratio test


def test_the_support_statistic_decodes_what_the_raw_columns_hide():
    """OLH's raw (y, a, b) columns carry nothing linear about v; the hash-aware statistic recovers ε."""
    system = reference_system("OLH", 25, 2.0)
    result = audit_system(system, 0, 24, AuditSettings(samples=40_000, seed=1), channels=["report"])
    row = result.rows[0]
    assert row.statistic.startswith("support-") and row.epsilon_lower_bound > 1.6


def test_the_exact_epsilon_of_histogram_encoding_is_two_over_its_scale():
    he = HistogramEncoding(5, 0.7, thresholded=True)
    assert he.exact_epsilon() == pytest.approx(0.7) and 0.5 < he.theta < 1.0
