"""Recertifying a recorded row: its certified bounds recomputed from the counts it records, its power measured
from them and its verdict decided again by the one rule.

A row written by any audit path records what its bounds came from: the threshold test's counts (false
positives and negatives out of n per side, the α split ``fp_share`` or the paired certificate's discordant pairs,
the confidence it ran at), the curve
test's counts, a one-run audit's guesses. :func:`recertify` recomputes every bound from them — a committed
result recertifies bit for bit when the recomputed bounds equal the recorded ones
(:func:`recomputed_bounds`) — and judges the row again (:func:`audit.verdicts.judge`). A row without counts
keeps its recorded bounds and cannot state power.
"""

from __future__ import annotations

import math

from audit.certification import bounds
from audit.certification.curves import curve_epsilon, mu_lower_bound, profile_excess
from audit.certification.paired import certified_epsilon
from audit.verdicts import judge, measured_power_fields, test_alphas
from pgc.schemas.audit_rows import AuditRow


def recomputed_bounds(row: AuditRow, claimed_profile: tuple | None = None) -> dict:
    """The certified bounds of ``row`` recomputed from its counts (empty where it records none): ε_LB at the
    claimed δ and δ_LB at the claimed ε from the threshold test, μ_LB (or the profile point) from the curve test."""
    n, fp, fn = row.samples_per_side, row.false_positives, row.false_negatives
    pairs = None if row.discordant_pairs is None else (row.discordant_pairs[0], row.discordant_pairs[1])
    if not n or fp is None or fn is None or (row.fp_share is None and pairs is None) or row.claimed_epsilon is None:
        return {}
    threshold_alpha, curve_alpha = test_alphas(row)
    delta, eps = row.claimed_delta or 0.0, row.claimed_epsilon
    out = {"epsilon_lower_bound": certified_epsilon(fp, fn, n, threshold_alpha, delta, row.fp_share, pairs)}
    if math.isfinite(eps) and row.fp_share is not None:
        out["delta_lower_bound_threshold"] = bounds.delta_lower_bound(fp, n, fn, n, threshold_alpha, eps, row.fp_share)
    if curve_alpha is not None and row.curve_false_positives is not None:
        cfp, cfn = row.curve_false_positives, row.curve_false_negatives
        if row.claimed_mu is not None:
            out["mu_lower_bound"] = float(mu_lower_bound(cfp, cfn, n, n, curve_alpha))
            if delta > 0:
                out["curve_epsilon"] = curve_epsilon(out["mu_lower_bound"], delta)
        elif claimed_profile is not None:
            excess, delta_i, eps_i = profile_excess(cfp, cfn, n, n, curve_alpha, claimed_profile)
            out.update(
                profile_delta=delta_i,
                profile_claimed_epsilon=eps_i,
                profile_epsilon_lower_bound=max(0.0, eps_i + excess),
            )
    return out


def recertify(row: AuditRow, claimed_profile: tuple | None = None) -> tuple[AuditRow, bool]:
    """``row`` with its bounds recomputed from its counts, its measured power and the one rule's verdict, and
    whether the recomputed bounds equal the recorded ones bit for bit (True for a row without counts, whose
    recorded bounds are kept)."""
    recomputed = recomputed_bounds(row, claimed_profile)
    threshold_delta = recomputed.pop("delta_lower_bound_threshold", None)
    identical = all(getattr(row, k) is None or getattr(row, k) == v for k, v in recomputed.items())
    fields = dict(recomputed)
    if threshold_delta is not None:  # a mechanism's δ test may have certified more than the threshold test
        fields["delta_lower_bound"] = max(threshold_delta, row.delta_lower_bound or 0.0)
    row = row.updated(**fields)
    if row.false_positives is not None or row.detectable_epsilon is None:
        power = measured_power_fields(row, claimed_profile)
        if power["detectable_epsilon"] is not None or row.false_positives is not None:
            row = row.updated(**power)
    return judge(row), identical
