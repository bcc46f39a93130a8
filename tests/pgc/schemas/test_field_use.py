"""Which fields every result of one audit kind leaves unset.

For each kind of :data:`pgc.schemas.audit_kinds.AUDIT_KINDS`, the committed results of that kind (``results/``
and the references the package ships; a kind with none committed is produced here at a tiny size) are loaded, and
every field of the records reachable from them that is None (or its empty default) in all of them is listed. Such a
field is pinned below with the configuration that sets it, which no committed file ran
(:data:`SET_IN_OTHER_CONFIGURATIONS`); a field the kind never sets has no place there: its record type holds only
what the kind's audits fill. A field that becomes set, or a new field no result of a kind sets, fails the test
until the table says why."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from result_fixtures import reachable_records

import pgc.schemas as schemas
from pgc.schemas.audit_kinds import AUDIT_KINDS

ROOT = Path(__file__).resolve().parents[3]

# the CLI's provenance fields, written by every audit command since they were added; the committed audits
# predate them (the mechanism audit produced here has them)
_PROVENANCE = {
    "Invocation.argv": "written by every audit command now; the committed audits predate it",
    "Invocation.provenance": "written by every audit command now; the committed audits predate it",
    "Invocation.estimated_seconds": "set when the CLI estimated the audit's time before a long run",
}
# a row's optional outcomes that depend on the claim or the audit's options, in every kind that holds rows
_ROW_OPTIONS = {
    "RowClaim.contradiction": "set only when the claimant's own accounting contradicts the claim",
    "Power.planted_power": "set only with planted-leak power (--shape-power)",
    "Power.shapes_searched": "set when the selection ranks statistics of several leak shapes",
    "Certificate.threshold": "recorded by threshold tests that keep one threshold; committed rows predate it",
}
# the certified event in words, said by every statistic of the audit's own; committed rows of a likelihood-ratio
# statistic predate it
_EVENT = {"ThresholdCertificate.event": "set when the certified statistic says its event; committed rows predate it"}
# the paired certificate's counts, on a row of a pure ε claim whose chosen test projects more paired than split
_PAIRED = {
    "ThresholdCertificate.discordant_pairs": "set where the paired certificate ran (a pure ε claim whose chosen test "
    "projects more by it); the committed rows predate it or ran the split one"
}
# the certified statistic as fitted, saved on each row whose statistic can be (audit.statistics.fitted)
_WITNESS = "written by every audit now (the row's statistic as fitted); the committed rows predate it"
_GAUSSIAN = {
    "RowClaim.mu": "set when the audited mechanism's claim states a μ-GDP curve (a Gaussian mechanism)",
    "CertifiedRow.curve": "set when the claim states a μ-GDP curve (a Gaussian mechanism)",
    "Certificate.gdp_mu_estimate": "set when the claim has δ > 0 (a Gaussian mechanism)",
}

SET_IN_OTHER_CONFIGURATIONS: dict[str, dict[str, str]] = {
    "mechanism-audit": {  # produced here by the current CLI: provenance, selection and δ test recorded
        **_PAIRED,
        **{k: _ROW_OPTIONS[k] for k in ("RowClaim.contradiction", "Power.planted_power")},
        **_GAUSSIAN,
        "Power.samples_to_decide": "set when the row is undecided and its power says how many samples would decide",
        "MechanismClaim.accountant_epsilon": "set when an accountant reads the mechanism's noise at the claimed δ > 0",
    },
    "self-test": {  # the Gaussian cases' file is written by the current CLI: provenance and thresholds recorded
        **_PAIRED,
        "AuditRow.fitted": _WITNESS,
        "MechanismRow.fitted": _WITNESS,
        "Invocation.estimated_seconds": _PROVENANCE["Invocation.estimated_seconds"],
        "Power.planted_power": _ROW_OPTIONS["Power.planted_power"],
        "ChannelAudited.encoding": "set where a channel's releases hold absent entries or rows of different lengths",
        "AuditRow.profile": "set for a case whose claim states a privacy profile",
        "HeldClaim.held_to_claim": "set for an honesty case audited with held_to_claim",
    },
    "run-audit": {
        **_PAIRED,
        **_EVENT,
        "EnvironmentRow.fitted": _WITNESS,
        "MechanismRow.fitted": _WITNESS,
        **_PROVENANCE,
        "ChannelClaim.accountant_epsilon": "the canary row's accountant, for a Gaussian run at δ > 0",
        "MechanismClaim.accountant_epsilon": "the mechanism audit's accountant, for a Gaussian run at δ > 0",
        **_ROW_OPTIONS,
        **_GAUSSIAN,
    },
    "one-run-audit": {
        **_PROVENANCE,
        **_ROW_OPTIONS,
        **_GAUSSIAN,
        "OneRunCounts.bounds": "set when the claim states no curve but δ > 0 (the f-DP bound beside Steinke's)",
        "OneRunCounts.fdp_epsilon_lower_bound": "set when the f-DP bound is computed (a curve or δ > 0)",
        "OneRunCounts.steinke_epsilon_lower_bound": "set when the f-DP bound is computed (a curve or δ > 0)",
        "Certificate.delta_lower_bound": "set by one-run rows at a claimed δ > 0",
        "Power.samples_to_decide": "set when the row's power says how many samples would decide it",
        "AuditedRun.config": "the run's configuration, written by the one-run audit; the committed ones predate it",
    },
    "adversarial-audit": {  # the worst-pair file is written by the current CLI: provenance, hypothesis recorded
        **_PAIRED,
        **_EVENT,
        "AdversarialRow.fitted": _WITNESS,
        **{k: _ROW_OPTIONS[k] for k in ("RowClaim.contradiction", "Power.planted_power")},
        **_GAUSSIAN,
        "Protection.claim_covers": "set when --run names a protected run that records its claim's channels",
        "Protection.metrics_from": "set when --run names a protected run that records where its metrics came from",
        "PointMassPower.detectable_delta": "set when a δ test searched the releases (a claim with δ > 0)",
        "Power.samples_to_decide": "set when the row's power says how many samples would decide it",
    },
    "adversarial-curve": {
        **_PAIRED,
        **_EVENT,
        "AdversarialRow.fitted": _WITNESS,
        "EnvironmentRow.fitted": _WITNESS,
        **_PROVENANCE,
        "AdversarialAudited.hypothesis": "written by the current audit (pair, channel); the committed ones predate it",
        "EnvironmentAudited.hypothesis": "written by the current audit (pair, channel); the committed ones predate it",
        "EnvironmentAudited.protect": "set on the honest rows of a protected configuration's curve",
        **_ROW_OPTIONS,
        **_GAUSSIAN,
        "AdversarialAudited.protect": "set on the rows of a protected configuration's curve",
        "EnvironmentAudit.protection": "set for a protected configuration's curve",
        "CraftedPairAudit.protection": "set for a protected configuration's curve",
        "Power.point_mass_search": "set when a δ test searched the releases (a claim with δ > 0)",
        "PointMassPower.detectable_delta": "set when a δ test searched the releases (a claim with δ > 0)",
    },
}


def _committed(kind: type[schemas.RowsAudit]) -> list[schemas.Result]:
    """The committed results (and shipped references) of ``kind``, loaded."""
    out = []
    for path in sorted([*(ROOT / "results").rglob("*.json"), *(ROOT / "pgc" / "references").rglob("*.json")]):
        data = json.loads(path.read_text())
        if schemas.kind_of(data) not in (kind.KIND, "audit"):
            continue
        result = schemas.load(data, where=str(path))
        if type(result) is kind:
            out.append(result)
    return out


def _mechanism_audit(folder: Path) -> schemas.Result:
    """``pgc audit mechanism`` at a tiny size (seconds): no mechanism audit is committed."""
    from pgc.cli.main import main

    out = folder / "mechanism.json"
    argv = ["audit", "--mechanism", "laplace", "--epsilon", "2", "--samples", "5000", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    return schemas.load(json.loads(out.read_text()))


def _empty(value: Any, f: dataclasses.Field[Any]) -> bool:
    if value is None:
        return True
    return f.default_factory is not dataclasses.MISSING and value == f.default_factory()


def _declaring(tp: type, name: str) -> str:
    """The class that declares the field ``name``: a row kind's own part by its kind, a shared field by AuditRow."""
    return next(c.__name__ for c in reversed(tp.__mro__) if name in getattr(c, "__dataclass_fields__", {}))


def _seen(obj: Any, seen: dict[str, bool]) -> None:
    """For each field of every record reachable from ``obj`` ("Type.field"): whether some instance sets it."""
    for record in reachable_records(obj):
        for f in dataclasses.fields(record):
            if f.name != "extra":
                key = f"{_declaring(type(record), f.name)}.{f.name}"
                seen[key] = seen.get(key, False) or not _empty(getattr(record, f.name), f)


def never_set(results: list[schemas.Result]) -> set[str]:
    """The fields ("Type.field") of the records reachable from ``results`` that none of them sets."""
    seen: dict[str, bool] = {}
    for result in results:
        _seen(result, seen)
    return {key for key, used in seen.items() if not used}


@pytest.mark.parametrize("kind", AUDIT_KINDS, ids=lambda k: k.KIND)
def test_every_field_unset_in_a_whole_kind_says_why(kind, tmp_path):
    results = _committed(kind) or ([_mechanism_audit(tmp_path)] if kind is schemas.MechanismAudit else [])
    assert results, f"no result of kind {kind.KIND} to read"
    pinned = set(SET_IN_OTHER_CONFIGURATIONS[kind.KIND])
    unset = never_set(results)
    assert sorted(unset - pinned) == [], "unset in every result of the kind, and no reason given"
    assert sorted(pinned - unset) == [], "set by some result now: drop it from the tables"


def test_the_channel_kind_is_set_in_every_result_of_every_kind():
    """The row's channel kind: set by its producer, or for older files read off the label."""
    for kind in AUDIT_KINDS:
        for result in _committed(kind):
            for row in result.channels:
                assert row.channel_family is not None and row.composition and row.base_channel, row.channel


def test_an_older_row_reads_its_kind_off_its_label_and_writes_back_unchanged():
    from pgc.schemas.audit_rows import AuditRow
    from pgc.schemas.channels import ChannelFamily, ChannelKind, channel_kind

    old = {"channel": "gradient×3 split", "epsilon_lower_bound": 0.5}
    row = AuditRow.from_dict(old)
    assert channel_kind(row) == ChannelKind(ChannelFamily.GRADIENT, 3, "gradient split")
    assert row.channel_family is ChannelFamily.GRADIENT and row.to_dict() == old
    assert AuditRow.from_dict({"channel": "update", "epsilon_lower_bound": 0.0}).channel_family is ChannelFamily.OTHER
    # a producer's kind that differs from the label's is written, and read back as written
    declared = row.updated(channel_family=ChannelFamily.SCORE, composition=1)
    assert declared.to_dict() == {**old, "channel_family": "score", "composition": 1}
    assert channel_kind(AuditRow.from_dict(declared.to_dict())) == ChannelKind(ChannelFamily.SCORE, 1, "gradient split")
    # a row built in memory without a kind: the label's
    assert channel_kind(AuditRow.make("canary (black-box)", epsilon_lower_bound=0.1)).family_name == "output"
    assert ChannelKind.single(ChannelFamily.OTHER, "update").family_name == "update"
