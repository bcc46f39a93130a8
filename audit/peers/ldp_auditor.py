"""LDP-Auditor's ε estimate (Arcolezi & Gambs, PETS 2024, Alg. 1), as a pure function of its counts.

The auditor runs the protocol N times on v and N times on v′, guesses the value from every report, and counts
the event "guess = v": TP times on v's reports, FP times on v′'s. With Clopper–Pearson bounds at α/2 each,

    ε_LB = ln((p̂₀ − δ) / p̂₁),   p̂₀ = lower bound of TP/N,   p̂₁ = upper bound of FP/N,

a lower bound on ε with confidence 1 − α (one event, fixed before the counts: no selection). The paper's code
calls ``proportion_confint(count, N, alpha/2, 'beta')`` and takes one end of that two-sided interval, i.e. each
end at α/4; this function reads Alg. 1 as written (each one-sided bound at α/2), the higher of the two readings,
which is the fairer one to compare against. A bound at or below 0 is reported as 0 (it certifies nothing).
"""

from __future__ import annotations

import math

from statsmodels.stats.proportion import proportion_confint

from pgc.errors import UserError


def ldp_auditor_epsilon(
    true_positives: int, n_pos: int, false_positives: int, n_neg: int, alpha: float, delta: float = 0.0
) -> float:
    """ε_LB of the event "guess = v" from its counts (module docstring); 0 when it certifies nothing."""
    if n_pos <= 0 or n_neg <= 0 or not (0 <= true_positives <= n_pos) or not (0 <= false_positives <= n_neg):
        raise UserError("counts must lie in 0..n with n > 0 on both sides")
    if not (0.0 < alpha < 1.0):
        raise UserError(f"alpha must lie in (0, 1), got {alpha!r}")
    # a two-sided interval at level α has each end at α/2
    tpr_lower = proportion_confint(true_positives, n_pos, alpha=alpha, method="beta")[0]
    fpr_upper = proportion_confint(false_positives, n_neg, alpha=alpha, method="beta")[1]
    if tpr_lower - delta <= 0.0 or fpr_upper <= 0.0:
        return 0.0
    return max(0.0, math.log((tpr_lower - delta) / fpr_upper))
