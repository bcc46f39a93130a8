"""The one record of a certified audit row and the one verdict type, shared by every audit path (mechanism,
system, PGC-A3C's environment and adversarial audits, one-run audits, sampling until decisive), the CLI and
the reports.

:class:`Verdict` — what one row (or a family of rows) shows:

* ``violated`` — a certified bound exceeds the claim, or the claim contradicts its own curve or accounting;
* ``unprotected channel`` — a channel the claim does not cover leaks (ε_LB > 0; a joint row the claim covers in
  part: ε_LB above the claim, more than its covered part may leak);
* ``inconclusive`` — nothing exceeds the claim, but the audit cannot say which leak it would have caught:
  its test did not separate the two secrets at all, or no leak through its test could exceed the claim;
* ``consistent`` — nothing exceeds the claim, and a leak of ``detectable_epsilon`` would have been caught.

:class:`AuditRow` — one channel of one audit. Stability policy (as dp-accounting states for its value
types): the fields named here keep their name, type and meaning within a ``format_version`` of the result
kinds that hold rows; a new field is optional and ignored by older readers (unknown keys travel in
``extra``); renaming or re-typing a field bumps the holding kinds' ``format_version``.

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from .base import Record


class Verdict(str, enum.Enum):
    """A row's or a family's verdict; its value is the word the JSON, the CLI and the reports show."""

    CONSISTENT = "consistent"
    INCONCLUSIVE = "inconclusive"
    UNPROTECTED = "unprotected channel"
    VIOLATED = "violated"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def severity(self) -> int:
        """Order for "the worst verdict": consistent < inconclusive < unprotected channel < violated."""
        return _SEVERITY[self]


_SEVERITY = {Verdict.CONSISTENT: 0, Verdict.INCONCLUSIVE: 1, Verdict.UNPROTECTED: 2, Verdict.VIOLATED: 3}


def worst(verdicts: Iterable[Verdict | str]) -> Verdict:
    """The most severe of ``verdicts`` (consistent when there are none)."""
    found = [Verdict(v) for v in verdicts]
    return max(found, key=lambda v: v.severity) if found else Verdict.CONSISTENT


@dataclass(frozen=True, kw_only=True)
class PlantedLeak(Record):
    """The smallest leak of one shape that the whole selection and certification flagged with probability ≥ 0.8 when
    planted in the audit's own training releases (:mod:`audit.shape_power`): ``smallest`` in the units ``parameter``
    names, None when even ``largest_tried`` was not flagged that often."""

    shape: str
    parameter: str  # what the size means, e.g. "noise scale × (1 + size)"
    smallest: float | None = None
    largest_tried: float
    repeats: int
    samples_per_side: int  # of each planted audit (the training releases re-used)

    def words(self) -> str:
        if self.smallest is None:
            return (
                f"a {self.shape} leak up to {self.parameter} at size {self.largest_tried:.3g} was not flagged "
                f"w.p. ≥ 0.8 ({self.repeats} planted audits at {self.samples_per_side:,} per side)"
            )
        return (
            f"a planted {self.shape} leak of {self.parameter} at size {self.smallest:.3g} was flagged w.p. ≥ 0.8 "
            f"({self.repeats} planted audits at {self.samples_per_side:,} per side)"
        )


@dataclass(frozen=True, kw_only=True)
class AuditRow(Record):
    """One certified channel of one audit: what was audited, the claim, the certified bounds with the counts
    behind them, the power of the test that ran, and the verdict of the one rule (:func:`audit.verdicts.decide`).
    """

    # --- what was audited
    channel: str
    epsilon_lower_bound: float
    verdict: Verdict | None = None
    verdict_reason: str | None = None  # the verdict in words: what exceeded what, or what the audit could not show
    scope: str | None = None  # the audited subject: "mechanism", "environment 5 vs 15", a system's name, ...
    broadcast: str | None = None  # what the observer sent: honest, given, crafted, searched
    model: str | None = None  # PGC-A3C's audits: the model the channel was audited at (final, initial, adversarial)
    crafted_for: str | None = None  # PGC-A3C's adversarial audits: the channel the crafted model was searched for
    theta_file: str | None = None  # the crafted model this row was certified at, beside the result file
    mechanism: str | None = None
    statistic: str | None = None
    threshold: float | None = None  # the certified test is [statistic ≥ threshold]
    hypothesis: str | None = None  # the canary pair or secrets the certified test told apart
    note: str | None = None
    protect: list[str] | None = None  # PGC-A3C's mitigations of the audited configuration
    # --- the claim (the claimant's promise, never read back from the implementation)
    claimed_epsilon: float | None = None
    claimed_delta: float | None = None
    covered: bool | None = None  # the claim covers this channel
    held_to_claim: bool | None = None  # an uncovered channel of a participant promised the claim as a whole
    # the joint row of a claim that covers some of its channels: a leak up to the claim may be the covered part's
    partly_covered: bool | None = None
    claimed_mu: float | None = None  # the claim's μ-GDP curve on this channel, if it states one
    claim_contradiction: str | None = None  # the claim's own curve or accounting implies more than its (ε, δ)
    accountant_epsilon: float | None = None  # ε at the claimed δ of the noise the system declares
    # --- certified bounds and the counts behind them
    confidence: float | None = None  # of the row as a whole (its tests' α shares add up to 1 − confidence)
    test_confidence: float | None = None  # the threshold test's own share: ε_LB and δ_LB hold at it
    curve_confidence: float | None = None  # the curve test's own share: μ_LB (or the profile point) holds at it
    samples_per_side: int | None = None
    false_positives: int | None = None
    false_negatives: int | None = None
    fp_share: float | None = None
    max_certifiable_epsilon: float | None = None
    delta_lower_bound: float | None = None  # at the claimed ε
    mu_lower_bound: float | None = None  # the curve test's certified μ
    curve_epsilon: float | None = None  # ε at the claimed δ that μ_LB implies if the privacy curve is Gaussian
    curve_false_positives: int | None = None
    curve_false_negatives: int | None = None
    profile_delta: float | None = None  # a claimed privacy profile: the point δ_i closest to (or past) its ε_i,
    profile_claimed_epsilon: float | None = None  # the ε_i claimed there,
    profile_epsilon_lower_bound: float | None = None  # and the ε certified there
    gdp_mu_estimate: float | None = None  # an estimate assuming a Gaussian curve; never used for a verdict
    ratio: float | None = None  # ε_LB / claimed ε
    # --- p-values (Holm) of "the claim holds" and of "the channel does not leak"
    p_value: float | None = None
    p_value_leak: float | None = None
    holm_rejected: bool | None = None
    # --- power of the test that ran (audit.power)
    separated: bool | None = None  # the certified test told the two secrets apart at the row's confidence
    detectable_epsilon: float | None = None  # a leak this large through the certified test is flagged w.p. ≥ 0.8
    detectable_delta: float | None = None  # the smallest point mass (δ-type leak) this audit flags w.p. ≥ 0.8
    point_mass_search: bool | None = None  # a δ test searched the releases for point masses
    samples_to_decide: int | None = None  # samples per side from which the row would be decisive (not inconclusive)
    power_basis: str | None = None  # how the power was computed, in words
    shapes_searched: list[str] | None = None  # leak shapes of the statistics the test was chosen among
    planted_power: list[PlantedLeak] | None = None  # per shape, the smallest planted leak the audit flagged
    # --- the one-run audit's counts
    canaries: int | None = None
    guesses: int | None = None
    correct: int | None = None
    accuracy: float | None = None
    # --- the self-test's case
    true_epsilon: float | None = None
    correct_mechanism: bool | None = None
    passed: bool | None = None

    def leak_p_value(self) -> float | None:
        """The p-value an uncovered row's leak is tested by: of "no leak" (``p_value_leak``), or for a partly covered
        joint row with a claimed ε, of "no leak beyond the claim" (``p_value``)."""
        if self.partly_covered and self.claimed_epsilon is not None:
            return self.p_value
        return self.p_value_leak

    def finding_p_value(self) -> float | None:
        """The p-value of the finding the row's verdict states: its leak (:meth:`leak_p_value`) for an uncovered row
        that is not held to the claim, or held and an unprotected channel; the claim (``p_value``) otherwise."""
        held = self.covered is not False or bool(self.held_to_claim)
        if not held or self.verdict == Verdict.UNPROTECTED:
            return self.leak_p_value()
        return self.p_value
