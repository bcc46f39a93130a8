"""The δ test of the black-box audit: point masses and rare exact releases.

Statistical guarantees. "Not flagged" assertions run the δ test at confidence 1 − 1e-4 (so each
run flags a correct mechanism with probability ≤ 1e-4; the 24 runs of the no-false-alarm test
together ≤ 2.4·10⁻³). "Flagged" assertions use a leak whose expected hit count is far above the
detection floor (noted per test). Every run is seeded, hence deterministic.
"""

import json
import math

import numpy as np
import pytest
from test_audit_mechanism import SignRandomizedResponse  # the third-party ε-DP mechanism both files use

from audit import audit_mechanism, audit_prs_whitebox
from audit.engine.blackbox import DELTA_ALPHA_SHARE, HypothesisPair, MechanismSampler, canary_pairs, delta_test
from audit.selftest import mutants
from audit.statistics import ExactRelease, column_scales
from pgc.mechanisms import Laplace, ProjectedRandomSign

STRICT = 1 - 1e-4


def _seed(k: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(k)


def _pairs(mech, dim=112):
    scale = float(getattr(mech, "clip", None) or 1.0)
    res = 2.0**-30 * scale
    return [
        HypothesisPair(c.name, MechanismSampler(mech, c.positive, res), MechanismSampler(mech, c.negative, res))
        for c in canary_pairs(dim, scale)
    ]


def test_exact_release_finds_a_planted_point_mass_and_nothing_in_continuous_noise():
    rng = np.random.default_rng(0)
    pos = rng.laplace(0.0, 1.0, size=(4000, 20))
    neg = rng.laplace(0.0, 1.0, size=(4000, 20))
    pos[::100] = 0.5  # 40 exact releases at one point under x only
    for eta in (0.0, 1e-6):
        score = ExactRelease("row", eta, epsilon=1.0).fit(pos, neg)
        assert score.point_masses == (1, 0)
        s = score(np.vstack([np.full((1, 20), 0.5), np.full((1, 20), 0.5 + 1e-12), rng.laplace(size=(500, 20))]))
        assert s[0] == 1.0 and not s[2:].any()
        assert s[1] == (1.0 if eta > 0 else 0.0)  # near-exact: within η·spread
    clean = ExactRelease("row", 1e-6, epsilon=1.0).fit(neg, rng.laplace(size=(4000, 20)))
    assert clean.point_masses == (0, 0)


def test_exact_release_respects_the_claimed_ratio():
    """A value frequent under both hypotheses is a point mass but no δ witness unless its counts
    differ by more than e^ε."""
    pos = np.repeat([[1.0], [2.0]], [300, 100], axis=0)
    neg = np.repeat([[1.0], [2.0]], [200, 200], axis=0)
    assert ExactRelease("row", 0.0, epsilon=1.0).fit(pos, neg).point_masses == (0, 0)  # 1.5 and 2 < e
    assert ExactRelease("row", 0.0, epsilon=0.1).fit(pos, neg).point_masses == (1, 1)


def test_column_scales_fall_back_when_the_mad_is_zero():
    x = np.column_stack([np.r_[np.zeros(90), np.arange(10.0)], np.ones(100), np.arange(100.0)])
    s = column_scales(x)
    assert s[0] == pytest.approx(x[:, 0].std()) and s[1] == 1.0 and s[2] == 25.0


def test_rare_noiseless_release_flagged_by_the_delta_test():
    """Leak 1% at n = 20,000: ≈ 200 certified hits vs 0 (floor ≈ 4·10⁻⁴); the training split sees ≈ 10."""
    mech = mutants.RareNoiselessRelease(1.0, leak_rate=1e-2)
    res = audit_mechanism(mech, samples=20_000, seed=3)
    d = res.delta_test
    assert d.certified and d.false_hits == 0 and d.hits > 100
    assert 0 < res.delta_lower_bound <= mech.true_delta(112)  # a lower bound, below the truth
    assert res.violation and res.verdict == "violated" and res.row.delta_lower_bound > res.row.claimed_delta
    assert res.reason.startswith("δ_LB") and "the claimed δ = 0 " in res.reason
    assert d.epsilon_lower_bound > mech.epsilon  # the same counts refute pure ε too
    assert d.confidence == pytest.approx(1 - DELTA_ALPHA_SHARE * 0.05)
    assert res.bound.confidence == pytest.approx(1 - (1 - DELTA_ALPHA_SHARE) * 0.05)


def test_a_claimed_delta_above_the_leak_is_consistent_with_the_delta_test():
    """Claiming (1, 0.05) for a 1% leak: δ_LB ≤ 0.01 < 0.05, so the δ test does not object."""
    mech = mutants.RareNoiselessRelease(1.0, leak_rate=1e-2)
    res = audit_mechanism(mech, samples=20_000, seed=3, delta=0.05, confidence=STRICT)
    assert res.delta_test.certified and 0 < res.delta_lower_bound < 0.05
    assert res.row.delta_lower_bound < res.row.claimed_delta and not res.reason.startswith("δ_LB")


@pytest.mark.parametrize(
    "mech",
    [
        Laplace(1.0),
        Laplace(4.0),
        Laplace(1.0, secure=True),
        Laplace(4.0, secure=True),
        ProjectedRandomSign(1.0),
        ProjectedRandomSign(4.0),
    ],
    ids=repr,
)
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("dim", [112, 131], ids=["d112", "d131-biases"])
def test_correct_mechanisms_raise_no_delta_alarm(mech, seed, dim):
    """d = 131: the gradient of the model with biases (the reading knob); the mechanisms' privacy is
    unchanged, so the δ test must stay silent there too."""
    d = delta_test(_pairs(mech, dim), mech.epsilon, 20_000, 4_000, STRICT, _seed(100 + seed))
    assert d.delta_lower_bound == 0.0, d


def test_delta_test_is_tight_on_the_randomized_response_boundary():
    """RR at true ε = 1: δ(1) = 0 exactly, δ(0.5) = 0.731 − e^0.5·0.269 = 0.288. The δ test
    certifies nothing at the true ε and a clear δ at a claim of 0.5 (n = 20,000: CP error ≈ 0.01)."""
    mech = SignRandomizedResponse(1.0)
    at_truth = delta_test(_pairs(mech, 4), 1.0, 20_000, 4_000, STRICT, _seed(7))
    below = delta_test(_pairs(mech, 4), 0.5, 20_000, 4_000, STRICT, _seed(7))
    assert at_truth.delta_lower_bound == 0.0
    assert 0.25 < below.delta_lower_bound <= 0.2885


def test_result_fields_reach_the_json():
    res = audit_mechanism(mutants.RareNoiselessRelease(1.0, leak_rate=1e-2), samples=5_000, seed=1)
    d = json.loads(json.dumps(res.to_dict()))
    for key in (
        "claimed_delta",
        "delta_lower_bound",
        "verdict",
        "verdict_reason",
        "detectable_delta",
        "point_mass_search",
    ):
        assert key in d["row"]
    for key in ("delta_test", "delta_time_s"):
        assert key in d
    for key in (
        "statistic",
        "hypothesis",
        "hits",
        "false_hits",
        "samples_per_side",
        "confidence",
        "delta_lower_bound",
        "epsilon_lower_bound",
        "certified",
    ):
        assert key in d["delta_test"]
    assert d["row"]["delta_lower_bound"] >= d["delta_test"]["delta_lower_bound"]


def test_delta_test_off_or_not_applicable():
    off = audit_mechanism(Laplace(1.0), samples=2_000, seed=0, delta_test_samples=0)
    assert off.delta_test is None and off.delta_lower_bound is None
    assert off.bound.confidence == off.confidence  # the ε test then gets the whole α
    wb = audit_prs_whitebox(ProjectedRandomSign(2.0), samples=2_000, seed=0)
    assert wb.delta_test is None and wb.to_dict()["delta_test"] is None
    with pytest.raises(ValueError):
        audit_mechanism(Laplace(1.0), samples=2_000, delta_test_samples=5)
    with pytest.raises(ValueError):
        audit_mechanism(Laplace(1.0), samples=2_000, delta=1.0)


def test_delta_test_is_deterministic():
    mech = mutants.RareNoiselessRelease(1.0, leak_rate=1e-2)
    a = audit_mechanism(mech, samples=3_000, seed=4).delta_test
    b = audit_mechanism(mech, samples=3_000, seed=4).delta_test
    assert a == b and math.isfinite(a.delta_lower_bound)
