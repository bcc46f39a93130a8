"""The black-box and white-box audits: correct mechanisms pass, planted bugs are flagged.

Statistical guarantees: "not flagged" tests run at confidence 1 − 1e-4, so a correct mechanism is
flagged with probability ≤ 1e-4 (the bound's own guarantee). "Flagged" tests use seeded budgets
whose margin is large (noted per test); all runs are deterministic given the seed.
"""

import math

import numpy as np
import pytest
from scipy.special import expit

import pgc.contracts as interfaces
from audit import audit_mechanism, audit_prs_whitebox
from audit.certification.tester import CertifiedTest, HypothesisPair
from audit.selftest import mutants
from pgc.mechanisms import Laplace, ProjectedRandomSign, split_rounds

STRICT = 1 - 1e-4  # false-failure rate of "not flagged" assertions


class SignRandomizedResponse:
    """A third-party mechanism defined here: each coordinate's sign, flipped w.p. 1/(1+e^ε).

    Exactly ε-LDP per coordinate; with ``coordinates`` released the true ε is coordinates·ε.
    """

    def __init__(self, epsilon: float, true_epsilon: float | None = None):
        self.epsilon = epsilon  # the CLAIM
        self._eps = epsilon if true_epsilon is None else true_epsilon

    def __call__(self, gradients, rng):
        g = np.asarray(gradients, dtype=np.float64)
        keep = rng.random(g.shape[:1]) < expit(self._eps)
        s = np.where(g[:, :1] >= 0, 1.0, -1.0)
        return np.where(keep[:, None], s, -s)


def test_api_on_a_mechanism_defined_in_the_test_file():
    res = audit_mechanism(SignRandomizedResponse(1.0), dim=4, samples=20_000, confidence=STRICT, seed=3)
    assert res.claimed_epsilon == 1.0
    assert isinstance(res.epsilon_lower_bound, float)
    assert not res.violation
    assert 0.85 < res.epsilon_lower_bound <= 1.0  # tight: RR is the textbook worst case


def test_boundary_claim_passes_at_true_epsilon_and_fails_below():
    """OpenDP style: the same mechanism (true ε = 1) claimed at 1 passes, claimed at 0.8 is refuted.

    At n = 20,000 the 1e-4-confidence bound sits ≈ 0.09 below 1 (error ≈ 0.045 per rate), far above 0.8.
    """
    honest = audit_mechanism(SignRandomizedResponse(1.0), dim=4, samples=20_000, confidence=STRICT, seed=5)
    liar = audit_mechanism(
        SignRandomizedResponse(0.8, true_epsilon=1.0), dim=4, samples=20_000, confidence=STRICT, seed=5
    )
    assert not honest.violation
    assert liar.violation and liar.epsilon_lower_bound > 0.8


@pytest.mark.parametrize("mech", [Laplace(1.0), Laplace(4.0), ProjectedRandomSign(5.0)], ids=repr)
@pytest.mark.parametrize("dim", [112, 131], ids=["d112", "d131-biases"])
def test_correct_mechanisms_are_not_flagged(mech, dim):
    """d = 131 is the gradient of the model with biases (the reading knob): privacy is unchanged."""
    res = audit_mechanism(mech, dim=dim, samples=10_000, confidence=STRICT, seed=11)
    assert not res.violation
    assert res.delta_test is not None and res.delta_lower_bound == 0.0  # the δ test ran and saw no point mass
    assert res.epsilon_lower_bound > 0.5 * mech.epsilon  # and the audit has power


def test_laplace_audit_is_tight_at_moderate_budget():
    res = audit_mechanism(Laplace(1.0), samples=50_000, seed=1)
    assert 0.9 < res.epsilon_lower_bound <= 1.0
    b = res.bound
    assert b.max_certifiable_epsilon > res.epsilon_lower_bound
    assert 0 < b.smallest_detectable_delta < 1e-3


MUTANTS = [
    mutants.NoiseTooSmall(1.0),  # true 2: ε_LB ≈ 1.9 at 20k
    mutants.L2ClipL1Noise(1.0),  # true 10.6: dense canary
    mutants.ClipAfterNoise(1.0),  # true ∞
    mutants.PRSFullEpsilonPerCoordinate(5.0),  # true 10
    mutants.RepeatedSubmissions(Laplace(1.0), 3, 1.0),  # true 3
    mutants.SeedReuseLaplace(1.0),  # true ∞ (colluding submissions)
    mutants.Float16TextbookLaplace(1.0),  # true ∞ (finite lattice)
]


@pytest.mark.parametrize("mech", MUTANTS, ids=lambda m: type(m).__name__)
def test_each_mutant_is_flagged_black_box(mech):
    res = audit_mechanism(mech, samples=20_000, seed=7)
    assert res.violation, res.to_dict()
    assert res.epsilon_lower_bound > mech.epsilon
    assert res.epsilon_lower_bound <= mech.true_epsilon(112) + 1e-9  # a lower bound never exceeds the truth


def test_rare_noiseless_release_is_flagged_through_delta_not_epsilon():
    """1 in 200 released without noise, claim ε = 1, n = 20,000 per side (≈ 100 certified hits, floor
    ≈ 4·10⁻⁴): the δ test gives δ_LB > 0 at ε = 1 while the ε test's bound stays near the claim."""
    mech = mutants.RareNoiselessRelease(1.0, leak_rate=5e-3)
    res = audit_mechanism(mech, samples=20_000, seed=7)
    assert res.violation and res.reason.startswith("δ_LB"), res.to_dict()
    assert 0 < res.delta_lower_bound <= mech.true_delta(112)
    assert res.epsilon_lower_bound < 1.3


@pytest.mark.parametrize(
    "mech", [mutants.PRSSwappedFlip(5.0), mutants.PRSFullEpsilonPerCoordinate(5.0)], ids=lambda m: type(m).__name__
)
def test_prs_mutants_flagged_white_box(mech):
    res = audit_prs_whitebox(mech, samples=20_000, seed=7)
    assert res.violation and res.epsilon_lower_bound > mech.epsilon


def test_correct_split_rounds_not_flagged_and_prs_white_box_tight():
    split = mutants.RepeatedSubmissions(split_rounds(Laplace(1.0), 3), 3, 1.0)
    assert not audit_mechanism(split, samples=10_000, confidence=STRICT, seed=2).violation
    wb = audit_prs_whitebox(ProjectedRandomSign(2.0), samples=20_000, confidence=STRICT, seed=2)
    assert not wb.violation and wb.epsilon_lower_bound > 1.8


def test_tester_keeps_lower_bound_apart_from_rejects(rng):
    pos = lambda n, r: r.laplace(0.5, 1.0, size=(n, 1))  # noqa: E731  (ε = 1 Laplace pair)
    neg = lambda n, r: r.laplace(-0.5, 1.0, size=(n, 1))  # noqa: E731
    test = CertifiedTest(
        [HypothesisPair("shift", pos, neg)], samples=20_000, train_samples=5_000, confidence=STRICT, seed=0
    )
    assert isinstance(test, interfaces.Tester)
    b = test.lower_bound()
    assert b is test.lower_bound()  # computed once
    assert test.rejects(b.epsilon_lower_bound - 1e-9) and not test.rejects(1.0)


def test_same_seed_same_result():
    a = audit_mechanism(Laplace(2.0), samples=5_000, seed=9)
    b = audit_mechanism(Laplace(2.0), samples=5_000, seed=9)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound


def test_bad_inputs():
    with pytest.raises(TypeError):
        audit_mechanism(object(), samples=1000)
    with pytest.raises(ValueError):
        audit_mechanism(Laplace(1.0), samples=10)
    with pytest.raises(ValueError):
        audit_mechanism(Laplace(1.0), samples=1000, confidence=1.5)
    with pytest.raises(TypeError):
        audit_prs_whitebox(Laplace(1.0), samples=1000)
    assert math.isfinite(audit_mechanism(Laplace(1.0), dim=1, samples=1000).epsilon_lower_bound)
