"""The evaluator: the only code that reads the ground truth. Scores attack predictions against it.

Classification: accuracy with an exact Clopper–Pearson interval, chance (1/|Ψ|), the best prior-only
guess (the most frequent true ψ — an upper bound on any data-free guess on this sample), advantage and
NRR-like normalized advantage over it, and the ε-LDP ceiling e^{kε}/(e^{kε}+|Ψ|−1).

Ceiling verdicts (``verdict``):

* ``"VIOLATION"`` — only ε-protected channels were used and the CI's lower end lies above the ceiling:
  the mechanism is not ε-LDP as claimed, or the evaluation is wrong. Flagged loudly.
* ``"unprotected-channel-above-ceiling"`` — same, but the attack used the score/timing channel,
  which the mechanism does not protect: a legitimate leak, not an evaluation bug.
* ``"ok"`` otherwise (``"n/a"`` for ε = ∞ or regression).
"""

from __future__ import annotations

import math

import numpy as np

from .bounds import chance_level, clopper_pearson, ldp_ceiling, normalized_advantage, regression_baseline
from .targets import TargetTruth


def evaluate_classification(predicted: np.ndarray, truth: TargetTruth, candidates, *, epsilon: float, k: int,
                            protected_only: bool, confidence: float = 0.95) -> dict:
    pred = np.asarray(predicted, dtype=np.float64)
    true = np.asarray(truth.psi, dtype=np.float64)
    if pred.shape != true.shape:
        raise ValueError("one prediction per target is needed")
    n = true.size
    correct = int(np.sum(np.isclose(pred, true)))
    acc = correct / n
    lo, hi = clopper_pearson(correct, n, confidence)
    cands = np.asarray(candidates, dtype=np.float64)
    freq = np.array([np.sum(np.isclose(true, c)) for c in cands]) / n
    prior_best = float(freq.max())
    ceiling = ldp_ceiling(epsilon, k, len(cands)) if math.isfinite(epsilon) else 1.0
    verdict = "n/a" if not math.isfinite(epsilon) else "ok"
    if math.isfinite(epsilon) and lo > ceiling:
        verdict = "VIOLATION" if protected_only else "unprotected-channel-above-ceiling"
    return {"n_targets": n, "correct": correct, "accuracy": acc, "ci": [lo, hi], "confidence": confidence,
            "chance": chance_level(len(cands)), "prior_best_guess": prior_best,
            "advantage": acc - prior_best,
            "normalized_advantage": normalized_advantage(acc, prior_best) if prior_best < 1 else 0.0,
            "ceiling": ceiling, "ceiling_applies": bool(protected_only and math.isfinite(epsilon)),
            "verdict": verdict}


def evaluate_regression(predicted: np.ndarray, truth: TargetTruth, psi_range) -> dict:
    pred = np.asarray(predicted, dtype=np.float64)
    true = np.asarray(truth.psi, dtype=np.float64)
    err = pred - true
    base = regression_baseline(*psi_range)
    mae = float(np.abs(err).mean())
    rmse = float(np.sqrt((err ** 2).mean()))
    return {"n_targets": int(true.size), "mae": mae, "rmse": rmse, "prior_mae": base["mae"],
            "prior_rmse": base["rmse"], "mae_skill": 1.0 - mae / base["mae"], "rmse_skill": 1.0 - rmse / base["rmse"],
            "verdict": "n/a"}
