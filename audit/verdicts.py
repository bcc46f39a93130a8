"""Rows of a certified audit and the one verdict rule, with the power of the audit stated.

A row holds one channel's certified bounds: ε_LB at the claimed δ and δ_LB at the claimed ε from the
threshold test; for a claim with a μ-GDP curve also μ_LB from the curve test (α split between the two
tests, :func:`audit.curves.split_alpha`) and ``curve_epsilon``, the ε at the claimed δ that μ_LB implies *if the privacy curve
is Gaussian*; for a claim with a privacy profile, the curve test's certified ε at the profile point where
it comes closest to (or exceeds) the claimed ε_i. Every covered row also states its power: ``detectable_epsilon``, the smallest leak this
audit (its n and α) flags with probability ≥ 0.8 (:mod:`audit.power`).

Verdicts (:func:`row_verdict`):

* ``violated`` — a certified bound exceeds the claim (ε_LB > ε, δ_LB > δ, μ_LB > the claimed μ, or the
  certified ε at a profile point's δ_i > its ε_i);
* ``unprotected channel`` — a channel the claim does not cover leaks at all (ε_LB > 0);
* ``inconclusive`` — nothing exceeds the claim, but no leak of any size would have been flagged with
  probability ≥ 0.8 at this n: the data cannot decide (``samples_to_decide``: the samples per side from
  which a leak would be flagged; a consistent verdict that catches 1.1 × the claim may need more, which
  sampling until decisive, :mod:`audit.sequential`, finds);
* ``consistent`` — nothing exceeds the claim, and a leak of ``detectable_epsilon`` would have been caught.

The overall verdict applies Holm's step-down procedure (statsmodels ``multipletests``) to the covered
rows' p-values of "the claim holds" (a row with a curve: the smaller of its two tests' p-values, each
divided by its share of α: weighted Bonferroni within the row), then to the uncovered rows' p-values of "no leak".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from . import bounds
from .accountant import gdp_mu_estimate
from .curves import curve_epsilon, curve_violation_pvalue, profile_violation_pvalue, split_alpha
from .power import detectable_epsilon, samples_to_leave_inconclusive
from .tester import EpsilonBound


@dataclass(frozen=True)
class SystemAuditRow:
    channel: str
    claimed_epsilon: float
    claimed_delta: float
    epsilon_lower_bound: float  # at the claimed δ
    delta_lower_bound: float  # at the claimed ε
    p_value: float  # of H0 "the claim holds on this channel"
    verdict: str
    statistic: str
    samples_per_side: int
    max_certifiable_epsilon: float
    confidence: float
    covered: bool
    false_positives: int
    false_negatives: int
    fp_share: float
    p_value_leak: float  # of H0 "the channel does not leak" (ε ≤ 0)
    accountant_epsilon: float | None = None
    gdp_mu_estimate: float | None = None  # an estimate assuming a Gaussian curve; never used for a verdict
    broadcast: str = "honest"
    holm_rejected: bool = False
    claimed_mu: float | None = None
    mu_lower_bound: float | None = None
    curve_epsilon: float | None = None  # if the privacy curve is Gaussian
    detectable_epsilon: float | None = None
    samples_to_decide: int | None = None
    curve_false_positives: int | None = None  # the curve test's counts (its certified region)
    curve_false_negatives: int | None = None
    # a claimed privacy profile: the point (δ_i, ε_i) where the certified ε (profile_epsilon_lower_bound)
    # most exceeds, or comes closest to, the ε_i claimed there
    profile_delta: float | None = None
    profile_claimed_epsilon: float | None = None
    profile_epsilon_lower_bound: float | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def row_verdict(claimed_epsilon: float, epsilon_lb: float, covered: bool, delta_lb: float = 0.0,
                claimed_delta: float = 0.0, *, held_to_claim: bool = False, mu_lb: float | None = None,
                claimed_mu: float | None = None, detectable: float | None = None,
                profile_excess: float | None = None) -> str:
    """The one verdict rule of a certified row.

    A covered channel is ``violated`` when a bound exceeds the claim (ε_LB > ε, δ_LB > δ at the claimed
    ε, μ_LB > μ of a claimed curve, or a certified ε above a claimed privacy profile's: ``profile_excess``
    > 0). A channel the claim does not cover is an ``unprotected channel``
    when it leaks at all (ε_LB > 0), whatever its size — unless ``held_to_claim``: a participant whose
    whole release is promised the claim (PGC-A3C's agent: ε per submission) is ``violated`` by an
    uncovered channel that leaks more than it. A covered row whose ``detectable`` ε is infinite (no
    leak would have been flagged at this n) is ``inconclusive``. Else ``consistent``."""
    if covered or held_to_claim:
        if epsilon_lb > claimed_epsilon or (covered and delta_lb > claimed_delta):
            return "violated"
        if covered and mu_lb is not None and claimed_mu is not None and mu_lb > claimed_mu:
            return "violated"
        if covered and profile_excess is not None and profile_excess > 0.0:
            return "violated"
    if not covered and epsilon_lb > 0:
        return "unprotected channel"
    if covered and detectable is not None and not math.isfinite(detectable):
        return "inconclusive"
    return "consistent"


def holm_verdict(rows: Sequence[SystemAuditRow], alpha: float) -> tuple[str, list[bool]]:
    """The overall verdict with Holm's procedure: over the covered rows' p-values of "the claim holds"
    (violated), then over the uncovered rows' p-values of "no leak" (unprotected channel); with no
    rejection, ``inconclusive`` when a covered row is. Returns the verdict and, per row, whether Holm
    rejects its claim."""
    from schemas.shared import holm  # statsmodels multipletests, without its full garbage collection

    covered = [r for r in rows if r.covered]
    flags = holm([r.p_value for r in covered], alpha=alpha)[0]
    by_row = dict(zip((id(r) for r in covered), flags))
    rejected = [bool(by_row.get(id(r), False)) for r in rows]
    if any(rejected):
        return "violated", rejected
    uncovered = [r for r in rows if not r.covered]
    if uncovered and any(holm([r.p_value_leak for r in uncovered], alpha=alpha)[0]):
        return "unprotected channel", rejected
    if any(r.verdict == "inconclusive" for r in covered):
        return "inconclusive", rejected
    return "consistent", rejected


def power_fields(claimed_epsilon: float, claimed_delta: float, n: int, alpha: float, claimed_mu: float | None,
                 covered: bool, claimed_profile: tuple | None = None) -> dict:
    """``detectable_epsilon`` of a covered row (None otherwise)."""
    if not covered or not math.isfinite(claimed_epsilon):
        return {"detectable_epsilon": None}
    return {"detectable_epsilon": detectable_epsilon(float(claimed_epsilon), float(claimed_delta), int(n), alpha,
                                                     claimed_mu, claimed_profile=claimed_profile)}


def make_row(channel: str, b: EpsilonBound, claim: tuple[float, float], covered: bool, confidence: float,
             accountant: float | None = None, broadcast: str = "honest", claimed_mu: float | None = None,
             held_to_claim: bool = False, claimed_profile: tuple | None = None) -> SystemAuditRow:
    """One certified row: its bounds, p-values, power and verdict."""
    alpha = 1.0 - confidence
    eps, delta = claim
    n = b.samples_per_side
    gdp = claimed_mu is not None and b.mu_lower_bound is not None
    profile = claimed_profile is not None and b.profile_excess is not None
    curve = gdp or profile
    threshold_alpha = split_alpha(alpha)[0] if curve else alpha
    delta_lb = (bounds.delta_lower_bound(b.false_positives, n, b.false_negatives, n, threshold_alpha, eps, b.fp_share)
                if math.isfinite(eps) else 0.0)
    p = bounds.claim_p_value(b.false_positives, n, b.false_negatives, n, eps, delta, b.fp_share)
    if curve:  # weighted Bonferroni within the row: each test at its share of α
        counts = (b.curve_false_positives, b.curve_false_negatives, n, n)
        p_curve = (curve_violation_pvalue(*counts, claimed_mu) if gdp
                   else profile_violation_pvalue(*counts, claimed_profile))
        share_threshold, share_curve = split_alpha(1.0)
        p = min(1.0, p / share_threshold, p_curve / share_curve)
    p_leak = bounds.claim_p_value(b.false_positives, n, b.false_negatives, n, 0.0, delta, b.fp_share)
    mu_estimate = gdp_mu_estimate(b.fpr_upper, b.fnr_upper) if delta > 0 else None
    extra = power_fields(eps, delta, n, alpha, claimed_mu if gdp else None, covered,
                         claimed_profile if profile else None)
    if curve:
        extra.update(curve_false_positives=b.curve_false_positives, curve_false_negatives=b.curve_false_negatives)
    if gdp:
        extra.update(claimed_mu=float(claimed_mu), mu_lower_bound=b.mu_lower_bound,
                     curve_epsilon=curve_epsilon(b.mu_lower_bound, delta) if delta > 0 else None)
    if profile:
        extra.update(profile_delta=b.profile_delta, profile_claimed_epsilon=b.profile_claimed_epsilon,
                     profile_epsilon_lower_bound=max(0.0, b.profile_claimed_epsilon + b.profile_excess))
    verdict = row_verdict(eps, b.epsilon_lower_bound, covered, delta_lb, delta, held_to_claim=held_to_claim,
                          mu_lb=extra.get("mu_lower_bound"), claimed_mu=extra.get("claimed_mu"),
                          detectable=extra["detectable_epsilon"], profile_excess=b.profile_excess if profile else None)
    if verdict == "inconclusive":
        extra["samples_to_decide"] = samples_to_leave_inconclusive(float(eps), float(delta), alpha,
                                                                   claimed_mu if gdp else None,
                                                                   claimed_profile=claimed_profile if profile else None)
    return SystemAuditRow(channel, eps, delta, b.epsilon_lower_bound, delta_lb, p, verdict, b.statistic, n,
                          b.max_certifiable_epsilon, confidence, covered, b.false_positives, b.false_negatives,
                          b.fp_share, p_leak, accountant, mu_estimate, broadcast, **extra)


def make_rows(bounds_by_channel: Mapping[str, EpsilonBound], claims: Mapping[str, tuple[float, float]],
              covered: Mapping[str, bool], confidence: float, accountant: Mapping[str, float | None],
              broadcast_labels: Mapping[str, str],
              claimed_mus: Mapping[str, float | None] | None = None,
              claimed_profiles: Mapping[str, tuple | None] | None = None,
              held_to_claim: bool = False) -> tuple[list[SystemAuditRow], str]:
    """The rows of a system audit and the overall verdict (Holm over the rows)."""
    mus, profiles = claimed_mus or {}, claimed_profiles or {}
    rows = [make_row(ch, b, claims[ch], covered[ch], confidence, accountant.get(ch),
                     broadcast_labels.get(ch, "honest"), mus.get(ch), held_to_claim, claimed_profile=profiles.get(ch))
            for ch, b in bounds_by_channel.items()]
    verdict, rejected = holm_verdict(rows, 1.0 - confidence)
    return [SystemAuditRow(**{**r.__dict__, "holm_rejected": bool(x)}) for r, x in zip(rows, rejected)], verdict
