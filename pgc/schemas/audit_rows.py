"""The one record of a certified audit row and the one verdict type, shared by every audit path (mechanism,
system, PGC-A3C's environment and adversarial audits, one-run audits, sampling until decisive), the CLI and
the reports.

:class:`Verdict` — what one row (or a family of rows) shows:

* ``violated`` — a certified bound exceeds the claim, or the claimant's own accounting contradicts it;
* ``unprotected channel`` — a channel the claim does not cover leaks (ε_LB > 0; a joint row the claim covers in
  part: ε_LB above the claim, more than its covered part may leak);
* ``inconclusive`` — nothing exceeds the claim, but the audit cannot say which leak it would have caught:
  its test did not separate the two secrets at all, or no leak through its test could exceed the claim;
* ``consistent`` — nothing exceeds the claim, and a leak of ``detectable_epsilon`` would have been caught.

:class:`CertifiedRow` — one channel of one audit, composed of small value types: what was audited (:class:`Audited`),
the claim as the row holds it (:class:`RowClaim`, coverage as a :class:`Coverage`), the certificate
(:class:`Certificate`, and where a curve claim was tested :class:`CurveBound`), the power of the test (:class:`Power`)
and the judgement (:class:`Judgement`). Each kind of row holds what its audits fill:

* a system audit's :class:`AuditRow`: the threshold test's counts (:class:`ThresholdCertificate`), what the observer
  sent and the pair told apart (:class:`ChannelAudited`), the accountant's ε and whether an uncovered channel is held
  to the claim (:class:`ChannelClaim`), the point-mass search's power (:class:`PointMassPower`), the row's place in
  the Holm family (:class:`FamilyJudgement`), a claimed profile's point (:class:`ProfilePoint`) and the certified
  statistic as it was fitted (:class:`FittedStatistic`, the ``witness``);
* a mechanism audit's :class:`MechanismRow`: the same but what only a system's observer has — no broadcast, no
  uncovered channel, no profile (:class:`MechanismAudited`, :class:`MechanismClaim`) — and the Holm family (its
  audit has one row); its fitted statistic where it can be saved;
* a PGC-A3C environment audit's :class:`EnvironmentRow`: the system audit's parts but the Holm family, the profile,
  the broadcast and the accountant (:class:`HeldClaim`), with the mitigations (:class:`EnvironmentAudited`) and the
  fitted statistic; a run
  audit's :class:`RunRow` adds its canary row's mechanism and accountant (:class:`RunAudited`, :class:`ChannelClaim`);
* a PGC-A3C adversarial curve's :class:`AdversarialRow`: an environment row with the model, the crafted model, the
  mitigations (:class:`AdversarialAudited`) and the fitted statistic; an adversarial audit's
  :class:`AdversarialModelRow` adds the crafted model's file (:class:`CraftedModelAudited`);
* a self-test's :class:`SelfTestRow`: a system audit's parts and its case (:class:`SelfTestCase`);
* a one-run audit's :class:`OneRunRow`: the common parts and its counts (:class:`OneRunCounts`); an observer's
  (Flower's) :class:`ObserverOneRunRow` adds what it was promised (:class:`NotedAudited`).

A key of another kind's part reads as None on a row. In JSON the parts sit flat beside ``channel`` (each value type's
JSON keys are unique across the row). The channel's kind
(``channel_family``, ``composition``, ``base_channel``: :mod:`pgc.schemas.channels`) is written only where it differs
from what the channel's label names; a row without them reads them off its label.

Stability policy (as dp-accounting states for its value types): the JSON keys named here keep their name, type and
meaning within a ``format_version`` of the result kinds that hold rows; a new key is optional and ignored by older
readers (unknown keys travel in ``extra``); renaming or re-typing a key bumps the holding kinds'
``format_version``, and :meth:`CertifiedRow.migrate` reads the older layout (format_version 2: the booleans
``covered`` / ``partly_covered`` instead of ``coverage``).

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base`, :mod:`pgc.schemas.channels` and the
parts' module :mod:`pgc.schemas.row_parts`.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from .base import Record, flat_keys, is_flat, record_type, type_hints
from .channels import with_label_kind, without_label_kind
from .row_parts import (
    AdversarialAudited,
    Audited,
    Certificate,
    ChannelAudited,
    ChannelClaim,
    Coverage,
    CraftedModelAudited,
    CurveBound,
    EnvironmentAudited,
    FamilyJudgement,
    FittedStatistic,
    HeldClaim,
    Judgement,
    MechanismAudited,
    MechanismClaim,
    NotedAudited,
    OneRunCounts,
    PlantedLeak,
    PointMassPower,
    Power,
    ProfilePoint,
    RowClaim,
    RunAudited,
    SelfTestCase,
    ThresholdCertificate,
    Verdict,
    worst,
)

__all__ = [  # the row kinds, and the parts (:mod:`.row_parts`) every user of a row reads from here
    "AdversarialAudited",
    "AdversarialModelRow",
    "AdversarialRow",
    "CraftedModelAudited",
    "EnvironmentAudited",
    "EnvironmentRow",
    "FittedStatistic",
    "HeldClaim",
    "AuditRow",
    "Audited",
    "Certificate",
    "CertifiedRow",
    "ChannelAudited",
    "ChannelClaim",
    "Coverage",
    "CurveBound",
    "FamilyJudgement",
    "Judgement",
    "MechanismAudited",
    "MechanismClaim",
    "MechanismRow",
    "NotedAudited",
    "ObserverOneRunRow",
    "OneRunCounts",
    "OneRunRow",
    "PlantedLeak",
    "PointMassPower",
    "Power",
    "ProfilePoint",
    "ROW_KINDS",
    "RowClaim",
    "RunAudited",
    "RunRow",
    "SelfTestCase",
    "SelfTestRow",
    "ThresholdCertificate",
    "Verdict",
    "part_types",
    "row_keys",
    "worst",
]


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
    fitted: FittedStatistic | None = _part()
    audited: ChannelAudited | None = _part()
    claim: ChannelClaim | None = _part()
    profile: ProfilePoint | None = _part()
    power: PointMassPower | None = _part()
    judgement: FamilyJudgement | None = _part()


@dataclass(frozen=True, kw_only=True)
class MechanismRow(CertifiedRow):
    """A mechanism audit's row (black-box or white-box canaries, channel ``output``): a channel audit's threshold
    test and point-mass search (:class:`AuditRow`'s), without what only a system's observer has (a broadcast, an
    uncovered channel held to the claim, a claimed privacy profile) and without a Holm family (the audit's one row)."""

    certificate: ThresholdCertificate = _part(required=True)
    fitted: FittedStatistic | None = _part()
    audited: MechanismAudited | None = _part()
    claim: MechanismClaim | None = _part()
    power: PointMassPower | None = _part()


@dataclass(frozen=True, kw_only=True)
class EnvironmentRow(CertifiedRow):
    """A PGC-A3C environment audit's row (at a run's model, or a curve's honest one): a channel audit's threshold
    test, point-mass search and claim, with the pair and the mitigations; no Holm family (each channel is judged
    against its own claim), no privacy profile (PGC-A3C's claims state none) and no accountant (the environment's
    releases declare no noise)."""

    certificate: ThresholdCertificate = _part(required=True)
    fitted: FittedStatistic | None = _part()
    audited: EnvironmentAudited | None = _part()
    claim: HeldClaim | None = _part()
    power: PointMassPower | None = _part()


@dataclass(frozen=True, kw_only=True)
class RunRow(EnvironmentRow):
    """A PGC-A3C run audit's row: its environment rows and its mechanism's canary row, whose mechanism and whose
    accountant's ε (of a mechanism that declares its noise) the row records."""

    audited: RunAudited | None = _part()
    claim: ChannelClaim | None = _part()


@dataclass(frozen=True, kw_only=True)
class AdversarialRow(CertifiedRow):
    """A PGC-A3C adversarial curve's row: an environment audit's row certified at a crafted model (or at the honest
    one), with what the aggregator sent, the model, the crafted model's objective and the mitigations."""

    certificate: ThresholdCertificate = _part(required=True)
    fitted: FittedStatistic | None = _part()
    audited: AdversarialAudited | None = _part()
    claim: HeldClaim | None = _part()
    power: PointMassPower | None = _part()


@dataclass(frozen=True, kw_only=True)
class AdversarialModelRow(AdversarialRow):
    """A PGC-A3C adversarial audit's row: an adversarial curve's row with the file of the crafted model it was
    certified at, saved beside the result."""

    audited: CraftedModelAudited | None = _part()


@dataclass(frozen=True, kw_only=True)
class OneRunRow(CertifiedRow):
    """A one-run audit's row: the bound certified from guesses on the canaries of one run, with their counts."""

    one_run: OneRunCounts | None = _part()


@dataclass(frozen=True, kw_only=True)
class ObserverOneRunRow(OneRunRow):
    """A one-run row of an observer held to a promise (a Flower run's server, peer or client): the promise in words
    in its note."""

    audited: NotedAudited | None = _part()


@dataclass(frozen=True, kw_only=True)
class SelfTestRow(AuditRow):
    """A self-test's row: a case's certified row with the case (its true ε, whether the mechanism is correct,
    whether the audit judged it right); an honesty case's row says only whether it passed."""

    self_test: SelfTestCase | None = _part()


ROW_KINDS: tuple[type[CertifiedRow], ...] = (
    AuditRow,
    MechanismRow,
    EnvironmentRow,
    RunRow,
    AdversarialRow,
    AdversarialModelRow,
    OneRunRow,
    ObserverOneRunRow,
    SelfTestRow,
)


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
