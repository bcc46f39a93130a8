"""Membership inference against a classifier behind the one-parameter defence (thesis ch. 6, §6.5).

The ML-Leaks attack (Salem et al. 2019, adversary 1, as Table 6.2 uses it): the attacker trains a shadow model
on data from the same distribution, labels the shadow model's confidence vectors on its own training set
"member" and on held-out data "non-member", and trains an attack classifier on the three largest confidences.
The attack classifier is then applied to the target's confidence vectors on the target's members and
non-members (a balanced set: chance is 0.5).

Attackers:

* ``ml-leaks`` — the attack classifier trained on the shadow model's undefended confidences (the thesis' setting);
* ``ml-leaks-adaptive`` — trained on the shadow model's confidences passed through the same defence, on
  features the defence cannot hide: the sorted confidences mapped back through eq. 6.2 (2/ε · ln z, centred),
  which recovers the phase-1 scores y' up to a constant;
* ``label-only`` — "member" when the (defended) label is correct: the defence keeps every score's rank, so
  it cannot move this attack.

Data: scikit-learn's digits (1,797 8×8 images, 10 classes), split by a seeded permutation into four disjoint
quarters (target members, target non-members, shadow members, shadow non-members). Models: a one-hidden-layer
MLP (scikit-learn), trained to fit its members.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attacks.bounds import clopper_pearson
from pgc.errors import UserError

ATTACKERS = ("ml-leaks", "ml-leaks-adaptive", "label-only")
TABLE_6_2: dict = {"none": 70.4, 0.1: 49.8, 2.0: 52.0}  # ML-Leaks accuracy (%) on MNIST, Table 6.2


@dataclass(frozen=True)
class MembershipSettings:
    epsilons: tuple[float, ...] = (0.1, 0.7, 1.4, 2.0)  # §6.5 with k = 10
    hidden: int = 128
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not self.epsilons or any(not (e > 0 and math.isfinite(e)) for e in self.epsilons):
            raise UserError("epsilons are positive finite numbers")
        if self.hidden < 1 or not (0 < self.confidence < 1):
            raise UserError("hidden >= 1 and confidence in (0, 1)")


def digits_quarters(seed: np.random.SeedSequence):
    """(x, y) for target members, target non-members, shadow members, shadow non-members."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    order = np.random.Generator(np.random.PCG64(seed)).permutation(len(y))
    quarters = np.array_split(order, 4)
    return [(x[q] / 16.0, y[q]) for q in quarters]


def train_classifier(x, y, hidden: int, seed: int):
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(hidden_layer_sizes=(hidden,), alpha=1e-6, max_iter=2000, tol=1e-7, random_state=seed).fit(x, y)


def top_features(scores: np.ndarray, count: int = 3) -> np.ndarray:
    """The ``count`` largest confidences, largest first (ML-Leaks' features)."""
    return -np.sort(-scores, axis=1)[:, :count]


def inverted_features(scores: np.ndarray, epsilon: float, count: int = 3) -> np.ndarray:
    """Eq. 6.2 inverted: 2/ε · ln z recovers y' up to a constant; the ``count`` largest, centred on the row's
    median."""
    logits = 2.0 / epsilon * np.log(np.maximum(scores, 1e-300))
    logits -= np.median(logits, axis=1, keepdims=True)
    return top_features(logits, count)


def attack_accuracy(predicted_member: np.ndarray, is_member: np.ndarray, confidence: float) -> dict:
    correct = int(np.sum(predicted_member == is_member))
    n = int(is_member.size)
    low, high = clopper_pearson(correct, n, confidence)
    return {"accuracy": correct / n, "ci": [float(low), float(high)], "n": n, "chance": 0.5}


def _fit_attack(features: np.ndarray, labels: np.ndarray, seed: int):
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(random_state=seed).fit(features, labels)


def run_membership(
    settings: MembershipSettings,
    defend: Callable[[np.ndarray, float, np.random.Generator], np.ndarray],
    progress: Callable[[str], None] = lambda text: None,
) -> dict:
    """Every attacker against the undefended target and against the defence at each ε. ``defend(y, ε, rng)``
    maps confidence vectors (rows) to the released vectors."""
    data_seq, defence_seq = np.random.SeedSequence(settings.seed).spawn(2)
    (tx_in, ty_in), (tx_out, ty_out), (sx_in, sy_in), (sx_out, sy_out) = digits_quarters(data_seq)
    target = train_classifier(tx_in, ty_in, settings.hidden, settings.seed)
    shadow = train_classifier(sx_in, sy_in, settings.hidden, settings.seed + 1)
    t_scores = np.vstack([target.predict_proba(tx_in), target.predict_proba(tx_out)])
    t_labels, t_member = np.concatenate([ty_in, ty_out]), np.r_[np.ones(len(ty_in)), np.zeros(len(ty_out))]
    s_scores = np.vstack([shadow.predict_proba(sx_in), shadow.predict_proba(sx_out)])
    s_member = np.r_[np.ones(len(sy_in)), np.zeros(len(sy_out))]
    models = {
        "train_accuracy": float(target.score(tx_in, ty_in)),
        "test_accuracy": float(target.score(tx_out, ty_out)),
        "members": int(len(ty_in)),
        "non_members": int(len(ty_out)),
    }
    undefended_attack = _fit_attack(top_features(s_scores), s_member, settings.seed)
    rows = [
        _row("none", None, "ml-leaks", undefended_attack.predict(top_features(t_scores)), t_member, settings),
        _row("none", None, "label-only", t_scores.argmax(1) == t_labels, t_member, settings),
    ]
    progress(f"undefended: ML-Leaks accuracy {rows[0]['accuracy']:.3f}")
    for eps, seq in zip(settings.epsilons, defence_seq.spawn(len(settings.epsilons)), strict=True):
        t_rng, s_rng = (np.random.Generator(np.random.PCG64(s)) for s in seq.spawn(2))
        t_def, s_def = defend(t_scores, eps, t_rng), defend(s_scores, eps, s_rng)
        adaptive = _fit_attack(inverted_features(s_def, eps), s_member, settings.seed)
        rows += [
            _row("one-parameter", eps, "ml-leaks", undefended_attack.predict(top_features(t_def)), t_member, settings),
            _row(
                "one-parameter",
                eps,
                "ml-leaks-adaptive",
                adaptive.predict(inverted_features(t_def, eps)),
                t_member,
                settings,
            ),
            _row("one-parameter", eps, "label-only", t_def.argmax(1) == t_labels, t_member, settings),
        ]
        progress(f"ε = {eps:g}: " + ", ".join(f"{r['attacker']} {r['accuracy']:.3f}" for r in rows[-3:]))
    return {"models": models, "rows": rows}


def _row(defence: str, epsilon, attacker: str, predicted, is_member, settings: MembershipSettings) -> dict:
    return {
        "defence": defence,
        "epsilon": epsilon,
        "attacker": attacker,
        **attack_accuracy(np.asarray(predicted, dtype=float), is_member, settings.confidence),
    }
