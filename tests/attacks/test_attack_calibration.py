"""Attacker calibration: a sound attacker is at chance when the candidates cannot be told apart.

Null setting: the three candidate names Ψ = {9.7, 9.8, 9.9} are kept as three classes, but every
episode (the targets' and the attacker's shadow episodes) is played with the SAME physics (gravity
9.8). No attacker can then do better or worse than chance except by sampling luck: with balanced
targets and predictions independent of the labels, the number of correct guesses is a sum of
independent Bernoulli variables with mean n/3, whose tails are no heavier than Binomial(n, 1/3)
(Hoeffding 1956), so each seed's exact 95 % interval excludes 1/3 with probability ≤ 0.05.
Over S seeds the number of excluding seeds is then stochastically ≤ Binomial(S, 0.05), and each
assertion allows the count its (1 − 2.5e-5) quantile: false-failure rate ≤ 1e-4 for the four
settings together. A defect that biases the guess (first-class tie-breaking with unbalanced
truth, labels compared by tolerance, likelihood noise shared by every target) pushes the count up.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

import attacks.a3c.shadow
import attacks.a3c.targets
from attacks.a3c import ThreatModel, draw_truth, fresh_submissions, run_attack
from attacks.a3c.evaluate import candidate_index, evaluate_classification
from attacks.a3c.runner import map_index, posterior
from attacks.a3c.targets import TargetTruth
from attacks.bounds import clopper_pearson
from pgc.a3c.env import physics_array
from pgc.a3c.model import glorot_uniform_theta
from pgc.mechanisms import Laplace, NoNoise

PSI = (9.7, 9.8, 9.9)
SEEDS = 24
ALPHA_EACH = 2.5e-5  # four null assertions: 1e-4 in all
ALPHA = 1e-4


@pytest.fixture
def identical_physics(monkeypatch):
    """Every episode is played with gravity 9.8, whatever candidate name it is filed under."""

    def same_gravity(n, base=None, gravity=None, **kw):
        return physics_array(n, base=base, gravity=np.full(n, 9.8), **kw)

    monkeypatch.setattr(attacks.a3c.shadow, "physics_array", same_gravity)
    monkeypatch.setattr(attacks.a3c.targets, "physics_array", same_gravity)


def _null_counts(mech, channels, ks, *, targets=120, budget=40):
    theta = glorot_uniform_theta(np.random.default_rng(np.random.SeedSequence(0)))
    threat = ThreatModel(mechanism=mech, channels=channels, candidates=PSI, budget=budget)
    excluded = {k: 0 for k in ks}
    accuracy = {k: [] for k in ks}
    for seed in range(SEEDS):
        a, b, c = np.random.SeedSequence([2024, seed]).spawn(3)
        truth = draw_truth(threat, targets, np.random.default_rng(a))
        view = fresh_submissions(threat, theta, truth, max(ks), np.random.default_rng(b))
        res = run_attack(threat, view, truth, seed=c, attackers=("likelihood",), ks=ks)
        for row in res["rows"]:
            lo, hi = clopper_pearson(row["correct"], row["n_targets"], 0.95)
            excluded[row["k"]] += int(lo > 1 / 3 or hi < 1 / 3)
            accuracy[row["k"]].append(row["accuracy"])
            assert row["chance"] == pytest.approx(1 / 3)
            assert row["below_chance"] == (row["ci"][1] < 1 / 3)
    return excluded, accuracy


@pytest.mark.parametrize(
    "mech,channels",
    [(NoNoise(clip=0.01), ("gradient", "score")), (Laplace(10.0, clip=0.01), ("gradient", "score"))],
    ids=["eps_inf", "eps_10"],
)
def test_identical_physics_gives_chance(identical_physics, mech, channels):
    limit = int(binom.isf(ALPHA_EACH, SEEDS, 0.05))  # P[Binomial(S, 0.05) > limit] ≤ ALPHA_EACH
    excluded, accuracy = _null_counts(mech, channels, (1, 10))
    for k, count in excluded.items():
        assert count <= limit, (k, count, limit, accuracy[k])


def test_tied_likelihoods_are_broken_uniformly():
    """All-equal, all −∞ and NaN rows: every candidate is picked about equally often (seeded)."""
    n = 6000
    rows = np.zeros((n, 3))
    rows[n // 3 : 2 * n // 3] = -np.inf
    rows[2 * n // 3 :, 1] = np.nan
    rows[2 * n // 3 :, [0, 2]] = -np.inf
    picks = map_index(rows, np.random.default_rng(1))
    counts = np.bincount(picks, minlength=3)
    lo, hi = binom.ppf(ALPHA / 6, n, 1 / 3), binom.isf(ALPHA / 6, n, 1 / 3)
    assert np.all((counts >= lo) & (counts <= hi)), counts
    assert np.array_equal(picks, map_index(rows, np.random.default_rng(1)))  # reproducible
    # a clear maximum is never overridden; a tie between two is split between exactly those two
    clear = np.array([[0.0, -1.0, -2.0], [-5.0, -5.0, 3.0]])
    assert map_index(clear, np.random.default_rng(0)).tolist() == [0, 2]
    two = map_index(np.tile([[-1.0, 0.0, 0.0]], (2000, 1)), np.random.default_rng(2))
    assert set(two.tolist()) == {1, 2}
    assert np.allclose(posterior(rows[n // 3 : n // 3 + 1]), 1 / 3)


def test_first_class_tie_breaking_would_be_a_visible_defect():
    """With unbalanced truth, argmax's first-index rule on tied likelihoods lands below chance; the
    seeded uniform rule does not (α = 1e-4 per assertion)."""
    n = 600
    truth = TargetTruth(np.full(n, 9.9))
    tied = np.zeros((n, 3))
    old = evaluate_classification(
        np.asarray(PSI)[np.argmax(tied, axis=1)], truth, PSI, epsilon=1.0, k=1, protected_only=True
    )
    assert old["accuracy"] == 0.0 and old["below_chance"] and old["verdict"] == "attacker-defect"
    new = evaluate_classification(
        np.asarray(PSI)[map_index(tied, np.random.default_rng(3))],
        truth,
        PSI,
        epsilon=1.0,
        k=1,
        protected_only=True,
        confidence=1 - ALPHA,
    )
    assert new["ci"][0] <= 1 / 3 <= new["ci"][1] and not new["below_chance"] and new["verdict"] == "ok"


def test_rows_carry_chance_ceiling_and_defect_flag():
    truth = TargetTruth(np.repeat(np.asarray(PSI), 100))
    wrong = np.roll(truth.psi, 100)  # every guess names another candidate
    r = evaluate_classification(wrong, truth, PSI, epsilon=1.0, k=2, protected_only=True)
    assert r["chance"] == pytest.approx(1 / 3)
    assert r["ceiling"] == pytest.approx(math.exp(2) / (math.exp(2) + 2))
    assert r["below_chance"] is True and r["verdict"] == "attacker-defect"
    right = evaluate_classification(truth.psi, truth, PSI, epsilon=math.inf, k=1, protected_only=True)
    assert right["below_chance"] is False and right["ceiling"] == 1.0 and right["verdict"] == "n/a"


def test_candidates_are_compared_by_index_not_tolerance():
    close = np.array([9.8, 9.8 + 1e-9, 9.8 + 2e-9])  # np.isclose would call these all equal
    assert candidate_index(close, close).tolist() == [0, 1, 2]
    truth = TargetTruth(np.repeat(close, 10))
    r = evaluate_classification(np.roll(truth.psi, 10), truth, tuple(close), epsilon=1.0, k=1, protected_only=True)
    assert r["correct"] == 0


def test_null_criterion_catches_a_planted_label_defect():
    """The same count and limit reject an attacker that names the wrong neighbour for a fifth of the
    targets and guesses at random otherwise (accuracy 0.8/3 = 0.27): the null test above can fail."""
    limit = int(binom.isf(ALPHA_EACH, SEEDS, 0.05))
    rng = np.random.default_rng(np.random.SeedSequence(77))
    excluded = 0
    for _ in range(SEEDS):
        truth = TargetTruth(rng.permutation(np.repeat(np.asarray(PSI), 100)))
        idx = candidate_index(truth.psi, np.asarray(PSI))
        guess = rng.integers(0, 3, size=idx.size)
        shifted = rng.random(idx.size) < 0.2
        guess[shifted] = (idx[shifted] + 1) % 3
        r = evaluate_classification(np.asarray(PSI)[guess], truth, PSI, epsilon=1.0, k=1, protected_only=True)
        excluded += int(r["ci"][0] > 1 / 3 or r["ci"][1] < 1 / 3)
    assert excluded > limit
