"""The result of a mechanism's audit: its ε and δ tests (and curve test for Gaussian noise), the verdict
with the audit's power, and the claim's p-value."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .tester import EpsilonBound


@dataclass(frozen=True)
class DeltaTestResult:
    """The δ test: one point-mass event, chosen on a training split and counted on fresh samples.

    ``hits`` of ``samples_per_side`` outputs under the event's own hypothesis (``direction``
    "positive": x, "negative": x') fell in the event, ``false_hits`` under the other one.
    ``delta_lower_bound`` is the certified δ at ``claimed_epsilon`` (confidence
    ``confidence`` = 1 − α_δ on its own), ``epsilon_lower_bound`` the certified ε of the same counts
    at the claimed δ. ``certified`` is False when the training split showed no point mass worth
    certifying: then no fresh samples were drawn and both bounds are 0 (trivially valid).
    """

    hypothesis: str
    statistic: str
    direction: str
    certified: bool
    samples_per_side: int
    hits: int
    false_hits: int
    fp_share: float
    confidence: float
    claimed_epsilon: float
    claimed_delta: float
    delta_lower_bound: float
    epsilon_lower_bound: float
    smallest_detectable_delta: float
    projected_delta: float
    train_samples: int
    point_masses: int  # cells in the event (found on the fit half)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class MechanismAuditResult:
    """``epsilon_lower_bound`` vs ``claimed_epsilon`` and ``delta_lower_bound`` vs ``claimed_delta``.

    ``violation`` iff ε_LB > claimed ε or δ_LB > claimed δ; together at ``confidence`` (α split
    between the ε test, ``bound.confidence``, and the δ test, ``delta_test.confidence``).
    ``delta_test`` is None where no δ test ran (white-box audits, an infinite claim).
    """

    mechanism: str
    claimed_epsilon: float
    epsilon_lower_bound: float
    confidence: float
    violation: bool
    bound: EpsilonBound
    mode: str  # "black-box" or "white-box"
    wall_time_s: float
    candidates: list[dict] = field(default_factory=list)
    cpu_time_s: float = float("nan")  # process CPU time (the machine may be shared)
    claimed_delta: float = 0.0
    delta_test: DeltaTestResult | None = None
    delta_time_s: float = 0.0  # CPU seconds of the δ test (included in cpu_time_s)
    accountant_epsilon: float | None = None  # ε at the claimed δ of the noise added (Gaussian mechanisms)
    gdp_mu_estimate: float | None = None  # μ̂ from the certified rates; an estimate, never a verdict
    claimed_mu: float | None = None  # the μ-GDP curve of the mechanism's noise, audited by the curve test
    detectable_epsilon: float | None = None  # the smallest leak this audit flags w.p. ≥ 0.8 (audit.power)
    samples_to_decide: int | None = None  # inconclusive audits: samples per side from which a leak is flagged

    @property
    def mu_lower_bound(self) -> float | None:
        return self.bound.mu_lower_bound

    @property
    def curve_epsilon(self) -> float | None:
        """ε at the claimed δ that the certified μ implies, if the privacy curve is Gaussian."""
        if self.bound.mu_lower_bound is None or self.claimed_delta <= 0:
            return None
        from .curves import curve_epsilon

        return curve_epsilon(self.bound.mu_lower_bound, self.claimed_delta)

    @property
    def curve_violation(self) -> bool:
        return self.claimed_mu is not None and self.mu_lower_bound is not None and self.mu_lower_bound > self.claimed_mu

    @property
    def delta_lower_bound(self) -> float | None:
        return None if self.delta_test is None else self.delta_test.delta_lower_bound

    @property
    def epsilon_violation(self) -> bool:
        return self.epsilon_lower_bound > self.claimed_epsilon

    @property
    def delta_violation(self) -> bool:
        return self.delta_test is not None and self.delta_test.delta_lower_bound > self.claimed_delta

    @property
    def ratio(self) -> float:
        return self.epsilon_lower_bound / self.claimed_epsilon if math.isfinite(self.claimed_epsilon) else 0.0

    @property
    def verdict(self) -> str:
        """The one rule of :func:`audit.verdicts.row_verdict`: violated, inconclusive or consistent."""
        if self.violation:
            return "violated"
        if self.detectable_epsilon is not None and not math.isfinite(self.detectable_epsilon):
            return "inconclusive"
        return "consistent"

    @property
    def reason(self) -> str:
        parts = []
        if self.epsilon_violation:
            parts.append(f"ε_LB = {self.epsilon_lower_bound:.3f} > claimed ε = {self.claimed_epsilon:g} "
                         f"({self.bound.hypothesis} / {self.bound.statistic})")
        if self.delta_violation:
            d = self.delta_test
            kind = "pure ε-DP claimed" if self.claimed_delta == 0 else f"claimed δ = {self.claimed_delta:g}"
            parts.append(f"δ_LB = {d.delta_lower_bound:.3g} > {self.claimed_delta:g} at the claimed ε = "
                         f"{self.claimed_epsilon:g} ({kind}): {d.statistic} event hit {d.hits:,} of "
                         f"{d.samples_per_side:,} outputs under {'x' if d.direction == 'positive' else 'x′'} "
                         f"vs {d.false_hits:,} under {'x′' if d.direction == 'positive' else 'x'} ({d.hypothesis})")
        if self.curve_violation:
            parts.append(f"μ_LB = {self.mu_lower_bound:.3f} > the claimed curve's μ = {self.claimed_mu:.3f}")
        if not parts:
            return ("ε_LB ≤ claimed ε" + ("" if self.delta_test is None else " and δ_LB ≤ claimed δ")
                    + ("" if self.claimed_mu is None else " and μ_LB ≤ the claimed curve's μ"))
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "mode": self.mode, "claimed_epsilon": self.claimed_epsilon,
                "claimed_delta": self.claimed_delta, "epsilon_lower_bound": self.epsilon_lower_bound,
                "delta_lower_bound": self.delta_lower_bound, "confidence": self.confidence,
                "violation": self.violation, "epsilon_violation": self.epsilon_violation,
                "delta_violation": self.delta_violation, "verdict": self.verdict, "reason": self.reason,
                "ratio": self.ratio, "wall_time_s": self.wall_time_s, "cpu_time_s": self.cpu_time_s,
                "delta_time_s": self.delta_time_s, "accountant_epsilon": self.accountant_epsilon,
                "gdp_mu_estimate": self.gdp_mu_estimate, "claimed_mu": self.claimed_mu,
                "mu_lower_bound": self.mu_lower_bound, "curve_epsilon": self.curve_epsilon,
                "detectable_epsilon": self.detectable_epsilon, "samples_to_decide": self.samples_to_decide,
                "bound": self.bound.to_dict(),
                "delta_test": None if self.delta_test is None else self.delta_test.to_dict(),
                "candidates": self.candidates}


def claim_p_value(result: "MechanismAuditResult") -> float:
    """p-value of a mechanism audit's claim (ε, δ): its ε test and δ test split α (α_ε + α_δ = α), so
    min(p_ε·α/α_ε, p_δ·α/α_δ) is a valid p-value of "both hold" (union bound)."""
    from .bounds import counts_p_value, delta_claim_p_value

    p_eps = counts_p_value(result.bound, result.claimed_epsilon)
    b = result.bound
    if getattr(result, "claimed_mu", None) is not None and b.mu_lower_bound is not None:
        from .curves import curve_violation_pvalue, split_alpha

        share_threshold, share_curve = split_alpha(1.0)  # weighted Bonferroni within the ε test's α
        p_curve = curve_violation_pvalue(b.curve_false_positives, b.curve_false_negatives, b.samples_per_side,
                                         b.samples_per_side, result.claimed_mu)
        p_eps = min(1.0, p_eps / share_threshold, p_curve / share_curve)
    dt = getattr(result, "delta_test", None)
    if dt is None or not dt.certified:
        return p_eps  # the ε test had (all of, or its share of) α; a share-weighted p is ≥ this one
    a_eps, a_delta = 1.0 - result.bound.confidence, 1.0 - dt.confidence
    p_delta = delta_claim_p_value(dt.false_hits, dt.samples_per_side, dt.samples_per_side - dt.hits,
                                  dt.samples_per_side, dt.claimed_epsilon, dt.claimed_delta, dt.fp_share)
    return float(min(1.0, p_eps * (a_eps + a_delta) / a_eps, p_delta * (a_eps + a_delta) / a_delta))


def claimed_curve(mechanism, delta: float) -> float | None:
    """The μ-GDP curve of a mechanism with Gaussian noise (its noise and its stated sensitivity), for an
    (ε, δ) claim; None for any other mechanism, whose audit is unchanged."""
    if delta <= 0:
        return None
    from mechanisms.accounting import mechanism_gdp_mu

    return mechanism_gdp_mu(mechanism)


def power_fields(claimed: float, delta: float, samples: int, alpha: float, claimed_mu: float | None) -> dict:
    """What the ε test (with its curve test) could have detected; the samples that would decide when nothing."""
    from .power import detectable_epsilon, samples_to_leave_inconclusive

    if not math.isfinite(claimed):
        return {"claimed_mu": claimed_mu}
    detectable = detectable_epsilon(float(claimed), float(delta), int(samples), alpha, claimed_mu)
    decide = (samples_to_leave_inconclusive(float(claimed), float(delta), alpha, claimed_mu)
              if not math.isfinite(detectable) else None)
    return {"claimed_mu": claimed_mu, "detectable_epsilon": detectable, "samples_to_decide": decide}


def accounting_fields(mechanism, delta: float, bound: EpsilonBound) -> dict:
    """The accountant's ε at the claimed δ and the Gaussian-DP estimate μ̂, for an (ε, δ) claim."""
    if delta <= 0:
        return {}
    from mechanisms.accounting import mechanism_event

    from .accountant import accountant_epsilon, gdp_mu_estimate

    event = mechanism_event(mechanism)
    return {"accountant_epsilon": None if event is None else accountant_epsilon(event, delta),
            "gdp_mu_estimate": gdp_mu_estimate(bound.fpr_upper, bound.fnr_upper)}


def mechanism_claim_fields(mechanism, claimed: float, delta: float, bound: EpsilonBound, alpha: float) -> dict:
    """The accountant's ε, the μ estimate, the claimed curve and the audit's power, for a MechanismAuditResult."""
    return {**accounting_fields(mechanism, delta, bound),
            **power_fields(claimed, delta, bound.samples_per_side, alpha, claimed_curve(mechanism, delta))}
