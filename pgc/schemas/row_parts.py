"""The small value types an audit row is composed of (:mod:`pgc.schemas.audit_rows` composes them into the row
kinds): the verdict, what was audited, the claim as the row holds it, the certificate, the power and the judgement,
a one-run audit's counts and a self-test's case. Each JSON key is unique across the parts of one row.

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base` and :mod:`pgc.schemas.channels`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .base import JsonObject, Record
from .channels import ChannelFamily


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
    """The smallest leak of one shape that the whole selection and certification flagged in at least ``flags_needed``
    of ``repeats`` audits when planted in the audit's own training releases (:mod:`audit.power.planted`):
    ``smallest`` in the units ``parameter`` names, None when even ``largest_tried`` was not flagged that often."""

    shape: str
    parameter: str  # what the size means, e.g. "noise scale × (1 + size)"
    smallest: float | None = None
    largest_tried: float
    repeats: int
    samples_per_side: int  # of each planted audit (the training releases re-used)
    flags_needed: int | None = None  # of the repeats, how many flagged count as flagged (None: ⌈0.8·repeats⌉)
    smallest_tried: float | None = None  # the grid's first size: a leak found there may be smaller still

    def words(self) -> str:
        need = self.flags_needed if self.flags_needed is not None else -(-4 * self.repeats // 5)
        audits = f"{self.repeats} planted audits at {self.samples_per_side:,} per side"
        if self.smallest is None:
            return (
                f"a planted {self.shape} leak up to size {self.largest_tried:.3g} — {self.parameter} — was flagged "
                f"in fewer than {need} of {audits}"
            )
        first = self.smallest_tried is not None and self.smallest <= self.smallest_tried
        return (
            f"a planted {self.shape} leak of size {self.smallest:.3g}{' (the smallest tried)' if first else ''} — "
            f"{self.parameter} — was flagged in at least {need} of {audits}"
        )


class Coverage(str, enum.Enum):
    """How far the claim covers a row's channel."""

    COVERED = "covered"
    UNCOVERED = "uncovered"
    PARTLY = "partly covered"  # a joint row of channels the claim covers some of

    def __str__(self) -> str:
        return self.value


def _json(name: str) -> Any:
    return field(default=None, metadata={"json": name})


@dataclass(frozen=True, kw_only=True)
class Audited(Record):
    """What the row audited: the subject and the channel's kind (:mod:`pgc.schemas.channels`)."""

    scope: str | None = None  # the audited subject: "mechanism", "environment 5 vs 15", a system's name, ...
    channel_family: ChannelFamily | None = None  # the family the channel belongs to (OTHER: none of them)
    composition: int | None = None  # k: the linked submissions of one participant the channel composes (1: one)
    base_channel: str | None = None  # the channel without its composition ("gradient" for "gradient×3")


@dataclass(frozen=True, kw_only=True)
class NotedAudited(Audited):
    """What the row audited, with a note: what the observer was promised, or what else the row needs said."""

    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class ChannelAudited(NotedAudited):
    """What a channel audit's row audited besides: what the observer sent, the model, the mechanism and the pair its
    test told apart."""

    broadcast: str | None = None  # what the observer sent: honest, given, crafted, searched
    mechanism: str | None = None
    hypothesis: str | None = None  # the canary pair or secrets the certified test told apart
    # how the channel's releases were read where they were not fixed-width numbers: absent entries as NaN, the
    # width variable-length releases were padded to, and how many longer ones were cut (None: fixed-width numbers)
    encoding: str | None = None


@dataclass(frozen=True, kw_only=True)
class MechanismAudited(NotedAudited):
    """What a mechanism audit audited: the mechanism and the pair its test told apart (an observer of a mechanism
    sends nothing)."""

    mechanism: str | None = None
    hypothesis: str | None = None  # the canary pair the certified test told apart


@dataclass(frozen=True, kw_only=True)
class AdversarialAudited(NotedAudited):
    """What a PGC-A3C adversarial audit's row audited besides: what the aggregator sent, the pair its test told apart,
    the model, the crafted model's objective and the configuration's mitigations."""

    broadcast: str | None = None  # what the observer sent: crafted (or honest, on a curve's honest rows)
    hypothesis: str | None = None  # the secrets the certified test told apart
    model: str | None = None  # the model the channel was audited at (adversarial, honest)
    crafted_for: str | None = None  # the channel the crafted model was searched for
    protect: list[str] | None = None  # the mitigations of the audited configuration


@dataclass(frozen=True, kw_only=True)
class CraftedModelAudited(AdversarialAudited):
    """What an adversarial audit's row audited, with the file of the crafted model it was certified at (an
    adversarial curve saves none)."""

    theta_file: str | None = None  # beside the result file


@dataclass(frozen=True, kw_only=True)
class EnvironmentAudited(NotedAudited):
    """What a PGC-A3C environment audit's row audited besides: the pair its test told apart and the configuration's
    mitigations."""

    hypothesis: str | None = None  # the secrets or canary pair the certified test told apart
    protect: list[str] | None = None  # the mitigations of the audited configuration


@dataclass(frozen=True, kw_only=True)
class RunAudited(EnvironmentAudited):
    """What a PGC-A3C run audit's row audited (an environment audit at the run's model, or its mechanism's canary
    audit), with the canary row's mechanism."""

    mechanism: str | None = None


@dataclass(frozen=True, kw_only=True)
class RowClaim(Record):
    """The claim as this row holds it: the claimant's promise, never read back from the implementation."""

    epsilon: float | None = _json("claimed_epsilon")
    delta: float | None = _json("claimed_delta")
    coverage: Coverage | None = None  # None: the row does not say (a reader asks the claim's channels)
    mu: float | None = _json("claimed_mu")  # the claim's μ-GDP curve on this channel, if it states one
    contradiction: str | None = _json("claim_contradiction")  # the accountant's ε of the declared noise is more


@dataclass(frozen=True, kw_only=True)
class HeldClaim(RowClaim):
    """An environment or adversarial audit's claim: also whether an uncovered channel is held to the claim (the
    environment's releases declare no noise to an accountant)."""

    held_to_claim: bool | None = None  # an uncovered channel of a participant promised the claim as a whole


@dataclass(frozen=True, kw_only=True)
class ChannelClaim(HeldClaim):
    """A channel audit's claim: also the accountant's ε of the noise the system declares."""

    accountant_epsilon: float | None = None  # ε at the claimed δ of the noise the system declares


@dataclass(frozen=True, kw_only=True)
class MechanismClaim(RowClaim):
    """A mechanism audit's claim: also the accountant's ε of the noise the mechanism declares (no channel is left
    uncovered: the output is the mechanism's one channel)."""

    accountant_epsilon: float | None = None  # ε at the claimed δ of the noise the mechanism declares


@dataclass(frozen=True, kw_only=True)
class Certificate(Record):
    """The certified bound, its statistic, and the confidence and samples it holds at."""

    epsilon_lower_bound: float
    statistic: str | None = None
    threshold: float | None = None
    confidence: float | None = None  # of the row as a whole (its tests' α shares add up to 1 − confidence)
    test_confidence: float | None = None  # the threshold test's own share: ε_LB and δ_LB hold at it
    samples_per_side: int | None = None
    max_certifiable_epsilon: float | None = None
    delta_lower_bound: float | None = None  # at the claimed ε
    gdp_mu_estimate: float | None = None  # an estimate assuming a Gaussian curve; never used for a verdict


@dataclass(frozen=True, kw_only=True)
class ThresholdCertificate(Certificate):
    """The certified threshold test [statistic ≥ threshold] of a multi-sample audit: its counts and α split."""

    false_positives: int | None = None
    false_negatives: int | None = None
    fp_share: float | None = None  # the split certificate's α split; None where the paired one ran
    # the paired certificate (audit.certification.paired): [pairs with only the first secret's release in the
    # event, pairs with only the second's]
    discordant_pairs: list[int] | None = None
    ratio: float | None = None  # ε_LB / claimed ε
    event: str | None = None  # [statistic ≥ threshold] in words on the release, where the statistic says it


@dataclass(frozen=True, kw_only=True)
class FittedStatistic(Record):
    """The certified statistic as it was fitted (``witness``): its kind and parameters, arrays exact in base64
    (:mod:`audit.statistics.fitted`), so that its score of any release can be computed again without fitting. None
    where the statistic cannot be saved (one a system or a user brings)."""

    witness: JsonObject | None = None


@dataclass(frozen=True, kw_only=True)
class CurveBound(Record):
    """The curve test of a claimed μ-GDP curve (or of a profile point): its share of α, counts and μ_LB."""

    confidence: float | None = _json("curve_confidence")  # the curve test's own share: μ_LB holds at it
    mu_lower_bound: float | None = None
    epsilon: float | None = _json("curve_epsilon")  # ε at the claimed δ that μ_LB implies for a Gaussian curve
    false_positives: int | None = _json("curve_false_positives")
    false_negatives: int | None = _json("curve_false_negatives")


@dataclass(frozen=True, kw_only=True)
class ProfilePoint(Record):
    """A claimed privacy profile: the point δ_i closest to (or past) its ε_i, and the ε certified there."""

    delta: float | None = _json("profile_delta")
    claimed_epsilon: float | None = _json("profile_claimed_epsilon")
    epsilon_lower_bound: float | None = _json("profile_epsilon_lower_bound")


@dataclass(frozen=True, kw_only=True)
class Power(Record):
    """The power of the test that ran (:mod:`audit.power`)."""

    separated: bool | None = None  # the certified test told the two secrets apart at the row's confidence
    detectable_epsilon: float | None = None  # a leak this large through the certified test is flagged w.p. ≥ 0.8
    point_mass_search: bool | None = None  # a δ test searched the releases for point masses
    samples_to_decide: int | None = None  # samples per side from which the row would be decisive
    basis: str | None = _json("power_basis")  # how the power was computed, in words
    shapes_searched: list[str] | None = None  # leak shapes of the statistics the test was chosen among
    planted_power: list[PlantedLeak] | None = None  # per shape, the smallest planted leak the audit flagged


@dataclass(frozen=True, kw_only=True)
class PointMassPower(Power):
    """A multi-sample audit's power, with that of its point-mass search."""

    detectable_delta: float | None = None  # the smallest point mass (δ-type leak) this audit flags w.p. ≥ 0.8


@dataclass(frozen=True, kw_only=True)
class Judgement(Record):
    """The verdict of the one rule and the p-values (Holm) of "the claim holds" and "the channel does not leak"."""

    verdict: Verdict | None = None
    reason: str | None = _json("verdict_reason")  # the verdict in words: what exceeded what, or what was not shown
    p_value: float | None = None
    p_value_leak: float | None = None


@dataclass(frozen=True, kw_only=True)
class FamilyJudgement(Judgement):
    """A channel audit's judgement, with its row's place in the audit's Holm family."""

    holm_rejected: bool | None = None


@dataclass(frozen=True, kw_only=True)
class OneRunCounts(Record):
    """The one-run audit's counts (canaries inserted, guesses made, correct guesses) and the bounds it took the
    larger of: Steinke, Nasr and Jagielski's and the f-DP one (each at half the row's α)."""

    canaries: int | None = None
    guesses: int | None = None
    correct: int | None = None
    accuracy: float | None = None
    steinke_epsilon_lower_bound: float | None = None
    fdp_epsilon_lower_bound: float | None = None  # ε_LB at the claimed δ of the f-DP recursion on the (ε, δ) curve
    bounds: str | None = None  # which one-run bounds the row took the larger of, in words
    simulated_epsilon_lower_bound: float | None = None  # the same guesses' bound on releases the auditor simulated


@dataclass(frozen=True, kw_only=True)
class SelfTestCase(Record):
    """The self-test's case: the mechanism's true ε, whether it is correct, whether the audit judged it right."""

    true_epsilon: float | None = None
    correct_mechanism: bool | None = None
    passed: bool | None = None
