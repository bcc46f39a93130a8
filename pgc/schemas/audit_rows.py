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

:class:`CertifiedRow` — one channel of one audit, composed of small value types: what was audited (:class:`Audited`),
the claim as the row holds it (:class:`RowClaim`, coverage as a :class:`Coverage`), the certificate
(:class:`Certificate`, and where a curve claim was tested :class:`CurveBound`), the power of the test (:class:`Power`)
and the judgement (:class:`Judgement`). Each kind of row holds what its audits fill: a channel audit's
:class:`AuditRow` (mechanism and system audits) the threshold test's counts (:class:`ThresholdCertificate`), what the
observer sent and the pair told apart (:class:`ChannelAudited`), the accountant's ε and whether an uncovered channel
is held to the claim (:class:`ChannelClaim`), the point-mass search's power (:class:`PointMassPower`), the row's
place in the Holm family (:class:`FamilyJudgement`) and a claimed profile's point (:class:`ProfilePoint`); a PGC-A3C
audit's :class:`A3CRow` holds the same but the Holm family and the profile, with the model, the crafted model and the
mitigations (:class:`A3CAudited`); a self-test's :class:`SelfTestRow` adds its case to a channel audit's
(:class:`SelfTestCase`); a one-run audit's :class:`OneRunRow` holds the common parts and its counts
(:class:`OneRunCounts`). A key of another kind's part reads as None on a row. In JSON the parts sit flat beside
``channel`` (each value type's JSON keys are unique across the row). The channel's kind
(``channel_family``, ``composition``, ``base_channel``: :mod:`pgc.schemas.channels`) is written only where it differs
from what the channel's label names; a row without them reads them off its label.

Stability policy (as dp-accounting states for its value types): the JSON keys named here keep their name, type and
meaning within a ``format_version`` of the result kinds that hold rows; a new key is optional and ignored by older
readers (unknown keys travel in ``extra``); renaming or re-typing a key bumps the holding kinds'
``format_version``, and :meth:`CertifiedRow.migrate` reads the older layout (format_version 2: the booleans
``covered`` / ``partly_covered`` instead of ``coverage``).

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base` and :mod:`pgc.schemas.channels`.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from .base import Record, flat_keys, is_flat, record_type, type_hints
from .channels import ChannelFamily, with_label_kind, without_label_kind


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
    planted in the audit's own training releases (:mod:`audit.power.planted`): ``smallest`` in the units ``parameter``
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
    """What the row audited: the subject, the channel's kind (:mod:`pgc.schemas.channels`) and a note."""

    scope: str | None = None  # the audited subject: "mechanism", "environment 5 vs 15", a system's name, ...
    channel_family: ChannelFamily | None = None  # the family the channel belongs to (OTHER: none of them)
    composition: int | None = None  # k: the linked submissions of one participant the channel composes (1: one)
    base_channel: str | None = None  # the channel without its composition ("gradient" for "gradient×3")
    note: str | None = None  # what the observer was promised, or what else the row needs said


@dataclass(frozen=True, kw_only=True)
class ChannelAudited(Audited):
    """What a channel audit's row audited besides: what the observer sent, the model, the mechanism and the pair its
    test told apart."""

    broadcast: str | None = None  # what the observer sent: honest, given, crafted, searched
    mechanism: str | None = None
    hypothesis: str | None = None  # the canary pair or secrets the certified test told apart


@dataclass(frozen=True, kw_only=True)
class A3CAudited(ChannelAudited):
    """What a PGC-A3C run or adversarial audit's row audited besides: the model, the crafted model's objective and
    file, and the configuration's mitigations."""

    model: str | None = None  # the model the channel was audited at (final, initial, adversarial, honest)
    crafted_for: str | None = None  # adversarial audits: the channel the crafted model was searched for
    theta_file: str | None = None  # the crafted model this row was certified at, beside the result file
    protect: list[str] | None = None  # the mitigations of the audited configuration


@dataclass(frozen=True, kw_only=True)
class RowClaim(Record):
    """The claim as this row holds it: the claimant's promise, never read back from the implementation."""

    epsilon: float | None = _json("claimed_epsilon")
    delta: float | None = _json("claimed_delta")
    coverage: Coverage | None = None  # None: the row does not say (a reader asks the claim's channels)
    mu: float | None = _json("claimed_mu")  # the claim's μ-GDP curve on this channel, if it states one
    contradiction: str | None = _json("claim_contradiction")  # its own curve or accounting implies more


@dataclass(frozen=True, kw_only=True)
class ChannelClaim(RowClaim):
    """A channel audit's claim: also whether an uncovered channel is held to the claim, and the accountant's ε."""

    held_to_claim: bool | None = None  # an uncovered channel of a participant promised the claim as a whole
    accountant_epsilon: float | None = None  # ε at the claimed δ of the noise the system declares


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
    fp_share: float | None = None
    ratio: float | None = None  # ε_LB / claimed ε


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
    fdp_epsilon_lower_bound: float | None = None  # the ε at the claimed δ that the f-DP μ_LB implies
    bounds: str | None = None  # which one-run bounds the row took the larger of, in words
    simulated_epsilon_lower_bound: float | None = None  # the same guesses' bound on releases the auditor simulated


@dataclass(frozen=True, kw_only=True)
class SelfTestCase(Record):
    """The self-test's case: the mechanism's true ε, whether it is correct, whether the audit judged it right."""

    true_epsilon: float | None = None
    correct_mechanism: bool | None = None
    passed: bool | None = None


def _part(required: bool = False) -> Any:
    if required:
        return field(metadata={"flat": True})
    return field(default=None, metadata={"flat": True})


_Row = TypeVar("_Row", bound="CertifiedRow")


@dataclass(frozen=True, kw_only=True)
class CertifiedRow(Record):
    """One certified channel of one audit, judged by the one rule (:func:`audit.verdicts.decide`): the parts every
    kind of row holds. Build one with :meth:`make` and change one with :meth:`updated` (both take the flat JSON
    keys); read its parts, or a flat key as an attribute of the same name (``row.epsilon_lower_bound`` is
    ``row.certificate.epsilon_lower_bound``; None for a key only another kind's row holds)."""

    channel: str
    certificate: Certificate = _part(required=True)
    audited: Audited | None = _part()
    claim: RowClaim | None = _part()
    curve: CurveBound | None = _part()
    power: Power | None = _part()
    judgement: Judgement | None = _part()

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        """format_version 2's ``covered`` / ``partly_covered`` booleans as ``coverage``; the channel's kind, where
        the row does not record it, from its label (:func:`pgc.schemas.channels.with_label_kind`)."""
        data = with_label_kind(data)
        if "covered" not in data and "partly_covered" not in data:
            return data
        out = {k: v for k, v in data.items() if k not in ("covered", "partly_covered")}
        coverage = _coverage(data.get("covered"), data.get("partly_covered"))
        if "coverage" not in out and coverage is not None:
            out["coverage"] = coverage.value
        return out

    def to_dict(self) -> dict[str, Any]:
        """The row's JSON object; the channel's kind only where it differs from what the label gives."""
        return without_label_kind(super().to_dict())

    @classmethod
    def make(cls: type[_Row], channel: str, extra: dict[str, Any] | None = None, **flat: Any) -> _Row:
        """A row from its flat keys (the JSON names; ``covered=`` / ``partly_covered=`` booleans are read as
        ``coverage``); ``extra``: keys beyond the row's parts, written as they are."""
        return cls(channel=channel, extra=extra or {}, **_parts(cls, None, _with_coverage(flat)))

    @classmethod
    def of(cls: type[_Row], row: CertifiedRow, **flat: Any) -> _Row:
        """``row`` as a row of this kind (its channel and parts kept, each as this kind's part type), with some flat
        keys set (a key set to None is cleared before the conversion, so it may be one this kind lacks); a TypeError
        where this kind cannot hold a part or field ``row`` sets."""
        types = part_types(cls)
        cleared = {key: None for key, value in flat.items() if value is None and key in flat_keys(type(row))}
        row = row.updated(**cleared) if cleared else row  # a key this kind lacks may be cleared on the way
        kept: dict[str, Any] = {"channel": row.channel, "extra": row.extra}
        for name, value in ((f.name, getattr(row, f.name)) for f in fields(row) if is_flat(f)):
            if name not in types:
                if value is not None:
                    raise TypeError(f"a row of type {cls.__name__} has no {name}")
                continue
            if value is not None and type(value) is not types[name]:
                value = _as_part(value, types[name])
            kept[name] = value
        return cls(**kept).updated(**flat)

    def updated(self: _Row, **flat: Any) -> _Row:
        """This row with some flat keys (``channel`` among them) changed; None clears one."""
        channel = flat.pop("channel", self.channel)
        return dataclasses.replace(self, channel=channel, **_parts(type(self), self, _with_coverage(flat, self)))

    def __getattr__(self, name: str) -> Any:
        """A flat key as an attribute (:meth:`Record.__getattr__`); None for a key only another kind's row holds
        (a one-run row's counts read on a mechanism's row)."""
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name in row_keys():
                return None
            raise

    @property
    def covered(self) -> bool | None:
        """The claim covers this channel whole (None: the row does not say)."""
        if self.claim is None or self.claim.coverage is None:
            return None
        return self.claim.coverage is Coverage.COVERED

    @property
    def partly_covered(self) -> bool:
        return self.claim is not None and self.claim.coverage is Coverage.PARTLY

    def leak_p_value(self) -> float | None:
        """The p-value an uncovered row's leak is tested by: of "no leak" (``p_value_leak``), or for a partly covered
        joint row with a claimed ε, of "no leak beyond the claim" (``p_value``)."""
        judgement = self.judgement or Judgement()
        if self.partly_covered and self.claim is not None and self.claim.epsilon is not None:
            return judgement.p_value
        return judgement.p_value_leak

    def finding_p_value(self) -> float | None:
        """The p-value of the finding the row's verdict states: its leak (:meth:`leak_p_value`) for an uncovered row
        that is not held to the claim, or held and an unprotected channel; the claim (``p_value``) otherwise."""
        judgement = self.judgement or Judgement()
        held = self.covered is not False or bool(self.held_to_claim)
        if not held or judgement.verdict == Verdict.UNPROTECTED:
            return self.leak_p_value()
        return judgement.p_value


@dataclass(frozen=True, kw_only=True)
class AuditRow(CertifiedRow):
    """A channel audit's row (mechanism, system, PGC-A3C's environment and adversarial audits): a threshold test
    certified on fresh releases, with its counts, what the observer sent, its point-mass search and its place in the
    audit's Holm family; a claimed privacy profile's point where the claim states one."""

    certificate: ThresholdCertificate = _part(required=True)
    audited: ChannelAudited | None = _part()
    claim: ChannelClaim | None = _part()
    profile: ProfilePoint | None = _part()
    power: PointMassPower | None = _part()
    judgement: FamilyJudgement | None = _part()


@dataclass(frozen=True, kw_only=True)
class A3CRow(CertifiedRow):
    """A PGC-A3C run, environment or adversarial audit's row: a channel audit's threshold test, point-mass search and
    claim (:class:`AuditRow`'s), with the model it was audited at, the crafted model's objective and file, and the
    mitigations; no Holm family (the run's channels are judged each against its own claim) and no privacy profile
    (PGC-A3C's claims state none)."""

    certificate: ThresholdCertificate = _part(required=True)
    audited: A3CAudited | None = _part()
    claim: ChannelClaim | None = _part()
    power: PointMassPower | None = _part()


@dataclass(frozen=True, kw_only=True)
class OneRunRow(CertifiedRow):
    """A one-run audit's row: the bound certified from guesses on the canaries of one run, with their counts."""

    one_run: OneRunCounts | None = _part()


@dataclass(frozen=True, kw_only=True)
class SelfTestRow(AuditRow):
    """A self-test's row: a case's certified row with the case (its true ε, whether the mechanism is correct,
    whether the audit judged it right); an honesty case's row says only whether it passed."""

    self_test: SelfTestCase | None = _part()


ROW_KINDS: tuple[type[CertifiedRow], ...] = (AuditRow, A3CRow, OneRunRow, SelfTestRow)


def _coverage(covered: bool | None, partly: bool | None) -> Coverage | None:
    if covered is None:
        return None
    if covered:
        return Coverage.COVERED
    return Coverage.PARTLY if partly else Coverage.UNCOVERED


def _with_coverage(flat: dict[str, Any], row: CertifiedRow | None = None) -> dict[str, Any]:
    """``flat`` with the booleans ``covered`` / ``partly_covered`` (either may be left to ``row``'s) as ``coverage``."""
    if "covered" not in flat and "partly_covered" not in flat:
        return flat
    out = {k: v for k, v in flat.items() if k not in ("covered", "partly_covered")}
    partly = flat["partly_covered"] if "partly_covered" in flat else (row is not None and row.partly_covered)
    covered = flat["covered"] if "covered" in flat else (None if row is None else row.covered)
    out["coverage"] = _coverage(False if partly and covered is None else covered, partly)
    return out


def _as_part(value: Record, tp: type[Record]) -> Record:
    """A part as another kind's part type: its fields the type holds, every other one unset (else a TypeError)."""
    own = {f.name for f in fields(tp)}
    lost = [f.name for f in fields(value) if f.name not in own and getattr(value, f.name) not in (None, {}, [])]
    if lost:
        raise TypeError(f"a {tp.__name__} has no {', '.join(lost)}")
    return tp(**{f.name: getattr(value, f.name) for f in fields(value) if f.name in own})


_PART_TYPES: dict[type[CertifiedRow], dict[str, type[Record]]] = {}  # per row type, filled on first use


def part_types(cls: type[CertifiedRow]) -> dict[str, type[Record]]:
    """A row type's parts (field name -> value type), read off its flat fields' annotations."""
    if cls not in _PART_TYPES:
        hints = type_hints(cls)
        _PART_TYPES[cls] = {f.name: record_type(hints[f.name]) for f in fields(cls) if is_flat(f)}
    return _PART_TYPES[cls]


@functools.cache
def row_keys() -> frozenset[str]:
    """Every flat JSON key a row of some kind (:data:`ROW_KINDS`) holds."""
    return frozenset(key for kind in ROW_KINDS for key in flat_keys(kind))


def _parts(cls: type[CertifiedRow], row: CertifiedRow | None, flat: dict[str, Any]) -> dict[str, Any]:
    """The parts of a row of type ``cls`` with the flat keys ``flat`` set: each touched part rebuilt, the others kept.
    A key only another kind's row holds may be cleared (None), not set."""
    keys, types = flat_keys(cls), part_types(cls)
    changes: dict[str, dict[str, Any]] = {}
    for key, value in flat.items():
        where = keys.get(key)
        if where is None:
            if value is None and key in row_keys():
                continue
            raise TypeError(f"a row of type {cls.__name__} has no key {key!r}")
        changes.setdefault(where[0], {})[where[1]] = value
    out: dict[str, Any] = {}
    for part, values in changes.items():
        old = None if row is None else getattr(row, part)
        tp = types[part]
        new = tp(**values) if old is None else dataclasses.replace(old, **values)
        empty = all(getattr(new, f.name) == f.default for f in fields(tp) if f.name != "extra")
        out[part] = None if empty and part != "certificate" else new
    return out
