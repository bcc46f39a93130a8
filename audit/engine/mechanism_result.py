"""The result of a mechanism's audit: its ε and δ tests (and curve test for a stated Gaussian curve) in one
judged :class:`pgc.schemas.audit_rows.MechanismRow` (:func:`mechanism_row`), beside the tests' own records."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from audit.certification.tester import EpsilonBound
from pgc.contracts import PrivacyClaim
from pgc.schemas.audit_rows import MechanismRow, Verdict
from pgc.schemas.channels import ChannelFamily, ChannelKind


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
    """A mechanism's audit: its judged :attr:`row` (claim, bounds, power, verdict) and the records of its
    tests: ``bound`` (the ε test, with the curve test's counts for a stated curve) and ``delta_test`` (None
    where no δ test ran: white-box audits, an infinite claim)."""

    mechanism: str
    row: MechanismRow
    bound: EpsilonBound
    mode: str  # "black-box" or "white-box"
    wall_time_s: float
    candidates: list[dict] = field(default_factory=list)
    cpu_time_s: float = float("nan")  # process CPU time (the machine may be shared)
    delta_test: DeltaTestResult | None = None
    delta_time_s: float = 0.0  # CPU seconds of the δ test (included in cpu_time_s)

    # the row's fields, read through the result
    claimed_epsilon = property(lambda self: self.row.claimed_epsilon)
    claimed_delta = property(lambda self: self.row.claimed_delta or 0.0)
    epsilon_lower_bound = property(lambda self: self.row.epsilon_lower_bound)
    confidence = property(lambda self: self.row.confidence)
    verdict = property(lambda self: self.row.verdict)
    reason = property(lambda self: self.row.verdict_reason)
    accountant_epsilon = property(lambda self: self.row.accountant_epsilon)
    claimed_mu = property(lambda self: self.row.claimed_mu)
    mu_lower_bound = property(lambda self: self.row.mu_lower_bound)
    curve_epsilon = property(lambda self: self.row.curve_epsilon)
    detectable_epsilon = property(lambda self: self.row.detectable_epsilon)
    detectable_delta = property(lambda self: self.row.detectable_delta)
    samples_to_decide = property(lambda self: self.row.samples_to_decide)
    claim_contradiction = property(lambda self: self.row.claim_contradiction)

    @property
    def violation(self) -> bool:
        return self.row.verdict == Verdict.VIOLATED

    @property
    def delta_lower_bound(self) -> float | None:
        return None if self.delta_test is None else self.delta_test.delta_lower_bound

    @property
    def ratio(self) -> float:
        return self.epsilon_lower_bound / self.claimed_epsilon if math.isfinite(self.claimed_epsilon) else 0.0

    def to_dict(self) -> dict:
        return {
            "mechanism": self.mechanism,
            "mode": self.mode,
            "row": self.row.to_dict(),
            "wall_time_s": self.wall_time_s,
            "cpu_time_s": self.cpu_time_s,
            "delta_time_s": self.delta_time_s,
            "bound": self.bound.to_dict(),
            "delta_test": None if self.delta_test is None else self.delta_test.to_dict(),
            "candidates": self.candidates,
        }


def delta_test_p_value(dt: DeltaTestResult) -> float:
    """p-value of "(ε, δ) holds" from the δ test's counts (1 where it certified nothing)."""
    if not dt.certified:
        return 1.0
    from audit.certification.bounds import delta_claim_p_value

    return delta_claim_p_value(
        dt.false_hits,
        dt.samples_per_side,
        dt.samples_per_side - dt.hits,
        dt.samples_per_side,
        dt.claimed_epsilon,
        dt.claimed_delta,
        dt.fp_share,
    )


def combined_p_value(p_eps: float, eps_alpha: float, p_delta: float | None, delta_alpha: float) -> float:
    """p-value of "the claim holds" when the ε test (at α_ε) and the δ test (at α_δ) split α: the union bound
    gives min(p_ε·α/α_ε, p_δ·α/α_δ)."""
    if p_delta is None:
        return p_eps
    total = eps_alpha + delta_alpha
    return float(min(1.0, p_eps * total / eps_alpha, p_delta * total / delta_alpha))


def mechanism_row(
    description: str,
    claim: PrivacyClaim,
    bound: EpsilonBound,
    confidence: float,
    mode: str,
    accountant: float | None,
    delta_test: DeltaTestResult | None = None,
    point_mass_power: float | None = None,
) -> MechanismRow:
    """The judged row of a mechanism's audit (channel ``output``): the ε test's certified bound (at its share
    of α, ``bound.confidence``), the curve test's for a stated curve, the δ test's δ_LB and its point-mass
    power, the claim's contradictions, and the verdict of the one rule."""
    from audit.certification.claims import MECHANISM_CHANNEL, contradiction
    from audit.verdicts import bound_fields, judge, measured_power_fields

    eps, delta = claim.epsilon, claim.delta
    curve_mu = claim.gdp_mu if delta > 0 and bound.mu_lower_bound is not None else None
    fields = bound_fields(bound, (eps, delta), bound.confidence, curve_mu, None)
    if delta_test is not None:
        fields["p_value"] = combined_p_value(
            fields["p_value"], 1.0 - bound.confidence, delta_test_p_value(delta_test), 1.0 - delta_test.confidence
        )
        fields["delta_lower_bound"] = max(fields["delta_lower_bound"] or 0.0, delta_test.delta_lower_bound)
    row = MechanismRow.make(
        channel=MECHANISM_CHANNEL,
        scope="mechanism",
        mechanism=description,
        note=mode,
        claimed_epsilon=eps,
        claimed_delta=delta,
        covered=True,
        accountant_epsilon=accountant,
        claim_contradiction=contradiction(claim, accountant),
        point_mass_search=delta_test is not None,
        detectable_delta=point_mass_power,
        witness=bound.witness,
        **{**fields, "confidence": confidence},
        ratio=bound.epsilon_lower_bound / eps if math.isfinite(eps) else 0.0,
        **ChannelKind.single(ChannelFamily.OUTPUT, MECHANISM_CHANNEL).fields(),
    )
    if row.claimed_mu is None and claim.gdp_mu is not None:
        row = row.updated(claimed_mu=claim.gdp_mu)
    row = row.updated(**measured_power_fields(row))
    return judge(row)
