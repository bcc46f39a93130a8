"""Inference of another silo's first user from what a malicious silo (or the server) sees.

The secret is one bit b (balanced): which of the two users of a neighbouring pair the target silo
served first (the System's own ``canaries()``, e.g. the slides' toy pair: a full-norm first user vs a
silent one). The attacker knows the public algorithm, so it simulates both worlds (a training split
of releases through the System contract), fits a difference-of-means linear test on each channel it
observes, and is scored on a fresh test split drawn with a fair coin per trial. Accuracy comes with
a Clopper–Pearson interval, beside chance (1/2) and the ceiling any test can reach under the
system's claimed (ε, δ): (e^ε + δ)/(1 + e^ε).

Systems are reached only through the System contract: ``release(secret, n, rng)``, ``canaries()``,
``claim`` and ``channels``.
"""

from __future__ import annotations

import math

import numpy as np
from statsmodels.stats.proportion import proportion_confint

import pgc.schemas as schemas
from pgc.contracts import PrivacyClaim
from pgc.errors import UserError


def dp_accuracy_ceiling(epsilon: float, delta: float) -> float:
    """(e^ε + δ)/(1 + e^ε), capped at 1: from 1 − β ≤ e^ε α + δ and 1 − α ≤ e^ε β + δ for any test
    with type-I/II errors α, β under (ε, δ)-DP (Kairouz, Oh & Viswanath 2015, Theorem 2.1), summed:
    accuracy 1 − (α + β)/2 ≤ (e^ε + δ)/(1 + e^ε)."""
    if math.isinf(epsilon):
        return 1.0
    return min(1.0, (math.exp(epsilon) + delta) / (1.0 + math.exp(epsilon)))


def _linear_test(train_pos: np.ndarray, train_neg: np.ndarray):
    """Difference-of-means direction, threshold at the midpoint of the projected class means
    (the likelihood-ratio test for two Gaussians with equal isotropic noise)."""
    mu_pos, mu_neg = train_pos.mean(axis=0), train_neg.mean(axis=0)
    w = mu_pos - mu_neg
    threshold = 0.5 * (mu_pos + mu_neg) @ w

    def predict(x: np.ndarray) -> np.ndarray:
        return (x @ w > threshold).astype(int)

    return predict


def _train_accuracy(predict, pos: np.ndarray, neg: np.ndarray) -> float:
    return 0.5 * (predict(pos).mean() + (1 - predict(neg)).mean())


def first_user_attack(
    system, pair: str, n_train: int, n_test: int, rng: np.random.Generator, level: float = 0.95
) -> list[schemas.BanditAttackRow]:
    """Accuracy of the attacker on each channel of ``system`` (and ``all``) at guessing which user
    of the canary ``pair`` the target silo served."""
    if n_train < 2 or n_test < 1:
        raise UserError("need n_train >= 2 and n_test >= 1")
    pairs = system.canaries()
    if pair not in pairs:
        raise UserError(f"{system.name} has no canary {pair!r}; it has {', '.join(sorted(pairs))}")
    pos, neg = pairs[pair]
    train_pos = system.release(pos, n_train, rng)
    train_neg = system.release(neg, n_train, rng)
    secret = rng.integers(0, 2, size=n_test)
    n_pos = int(secret.sum())
    test_pos = system.release(pos, max(n_pos, 1), rng)
    test_neg = system.release(neg, max(n_test - n_pos, 1), rng)
    ceiling = dp_accuracy_ceiling(system.claim.epsilon, system.claim.delta)
    # "all": the attacker sees every channel and uses the channel whose test scores best on its own
    # training releases (a single linear test on the concatenation lets the noisiest channel drown
    # an exact one).
    tests = {name: _linear_test(train_pos[name], train_neg[name]) for name in system.channels}
    best = max(system.channels, key=lambda n: _train_accuracy(tests[n], train_pos[n], train_neg[n]))
    claim = PrivacyClaim(epsilon=system.claim.epsilon, delta=system.claim.delta)
    rows = []
    for name in tuple(system.channels) + ("all",):
        source = best if name == "all" else name
        predict = tests[source]
        correct = int(predict(test_pos[source])[:n_pos].sum() + (1 - predict(test_neg[source])[: n_test - n_pos]).sum())
        lo, hi = proportion_confint(correct, n_test, alpha=1 - level, method="beta")
        target = schemas.BanditAttackTarget(
            system=system.name,
            pair=pair,
            channel=name,
            test_channel=source,
            covered_by_claim=name == "all" or name in system.claim.covers,
        )
        measured = schemas.BanditAttackAccuracy(
            accuracy=correct / n_test,
            interval=[float(lo), float(hi)],
            level=level,
            correct=correct,
            n_test=n_test,
            n_train_per_world=n_train,
        )
        reference = schemas.BanditAccuracyReference(
            chance=0.5,
            ceiling=float(ceiling),
            claim=claim,
            above_ceiling=bool(lo > ceiling),
            above_chance=bool(lo > 0.5),
        )
        rows.append(schemas.BanditAttackRow(target=target, measured=measured, reference=reference))
    return rows
