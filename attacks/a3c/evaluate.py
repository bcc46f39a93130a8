"""The evaluator: the only code that reads the ground truth. Scores attack predictions against it.

Classification: accuracy with an exact Clopper–Pearson interval, chance (1/|Ψ|), the best prior-only
guess (the most frequent true ψ — an upper bound on any data-free guess on this sample), advantage and
NRR-like normalized advantage over it, and the ε-LDP ceiling e^{kε}/(e^{kε}+|Ψ|−1).

Ceiling verdicts (``verdict``):

* ``"VIOLATION"`` — only ε-protected channels were used and the CI's lower end lies above the ceiling:
  the mechanism is not ε-LDP as claimed, or the evaluation is wrong. Flagged loudly.
* ``"unprotected-channel-above-ceiling"`` — same, but the attack used the score/timing channel,
  which the mechanism does not protect: a legitimate leak, not an evaluation bug.
* ``"attacker-defect"`` — the CI lies entirely BELOW chance. Under the uniform prior with balanced
  targets no guess can be worse than chance in expectation, so this is a defect of the attacker (or
  its likelihood estimate), never a privacy result; ``below_chance`` is then True as well.
* ``"ok"`` otherwise (``"n/a"`` for ε = ∞ or regression).

Every classification row carries ``chance`` (1/|Ψ|) and ``ceiling`` (e^{kε}/(e^{kε}+|Ψ|−1), 1 at ε = ∞).
Predictions and truth are compared by candidate INDEX (nearest candidate), never by a float tolerance,
so candidates closer than any tolerance (even equal physics under two names) stay distinct classes.
"""

from __future__ import annotations

import math

import numpy as np

from attacks.a3c.targets import TargetTruth
from attacks.bounds import chance_level, clopper_pearson, ldp_ceiling, normalized_advantage, regression_baseline
from pgc.errors import UserError


def evaluate_classification(
    predicted: np.ndarray,
    truth: TargetTruth,
    candidates,
    *,
    epsilon: float,
    k: int,
    protected_only: bool,
    confidence: float = 0.95,
) -> dict:
    pred = np.asarray(predicted, dtype=np.float64)
    true = np.asarray(truth.psi, dtype=np.float64)
    if pred.shape != true.shape:
        raise UserError("one prediction per target is needed")
    n = true.size
    cands = np.asarray(candidates, dtype=np.float64)
    pred_idx, true_idx = candidate_index(pred, cands), candidate_index(true, cands)
    correct = int(np.sum(pred_idx == true_idx))
    acc = correct / n
    lo, hi = clopper_pearson(correct, n, confidence)
    freq = np.bincount(true_idx, minlength=len(cands)) / n
    prior_best = float(freq.max())
    chance = chance_level(len(cands))
    ceiling = ldp_ceiling(epsilon, k, len(cands)) if math.isfinite(epsilon) else 1.0
    verdict = "n/a" if not math.isfinite(epsilon) else "ok"
    if math.isfinite(epsilon) and lo > ceiling:
        verdict = "VIOLATION" if protected_only else "unprotected-channel-above-ceiling"
    below = bool(hi < chance)
    if below:
        verdict = "attacker-defect"
    return {
        "n_targets": n,
        "correct": correct,
        "accuracy": acc,
        "ci": [lo, hi],
        "confidence": confidence,
        "chance": chance,
        "below_chance": below,
        "prior_best_guess": prior_best,
        "advantage": acc - prior_best,
        "normalized_advantage": normalized_advantage(acc, prior_best) if prior_best < 1 else 0.0,
        "ceiling": ceiling,
        "ceiling_applies": bool(protected_only and math.isfinite(epsilon)),
        "verdict": verdict,
    }


def candidate_index(values: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Index of the nearest candidate for each value (exact for values taken from ``candidates``)."""
    return np.abs(np.asarray(values, np.float64)[:, None] - np.asarray(candidates, np.float64)[None, :]).argmin(axis=1)


def evaluate_regression(predicted: np.ndarray, truth: TargetTruth, psi_range) -> dict:
    pred = np.asarray(predicted, dtype=np.float64)
    true = np.asarray(truth.psi, dtype=np.float64)
    err = pred - true
    base = regression_baseline(*psi_range)
    mae = float(np.abs(err).mean())
    rmse = float(np.sqrt((err**2).mean()))
    return {
        "n_targets": int(true.size),
        "mae": mae,
        "rmse": rmse,
        "prior_mae": base["mae"],
        "prior_rmse": base["rmse"],
        "mae_skill": 1.0 - mae / base["mae"],
        "rmse_skill": 1.0 - rmse / base["rmse"],
        "verdict": "n/a",
    }
