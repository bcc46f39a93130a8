"""Typed schemas of every result file pgc writes: one frozen dataclass per kind, each with a ``kind``
and a ``format_version``.

    import pgc.schemas as schemas
    result = pgc.schemas.load(json.loads(text))          # -> schemas.SystemAuditResult, schemas.TrainRun, ...
    data = pgc.schemas.dump("train", {...})              # a dict from a script that has no type: checked
    pgc.schemas.validate(data)                            # raises schemas.SchemaError (one line)

Writers build a typed result and hand its ``to_dict()`` to the file (every command; a few benchmarks write their
own JSON, loaded as kind ``bench``); a script that assembles a
result as a dict passes it through :func:`dump`, which checks it;
readers (``reports``) go through :func:`load`. A file whose kind is unknown or whose ``format_version`` is not one
this code reads gets a one-line :class:`SchemaError` naming both. A kind's older versions that it names
(``OLDER_VERSIONS``) are read too, migrated to the current layout on parsing (each record's ``migrate``). A file
without ``format_version`` is read as version 1. A run folder's ``summary.json`` is recognised by
``"format": "pgc-run/1"``; a few benchmark files carry no kind and are loaded with ``kind=``. A file of the older
kind ``audit`` (every mechanism and PGC-A3C subcommand in one kind) loads as the kind its ``mode`` names
(:func:`pgc.schemas.audit_kinds.legacy_audit_kind`).

Pure Python: imports nothing from the project, so the cores and the CLI can both use it.
"""

from __future__ import annotations

from typing import Any

from pgc.files import json_number

from .audit_kinds import *  # noqa: F401,F403  (the schema classes)
from .audit_kinds import legacy_audit_kind
from .audit_rows import CertifiedRow
from .bandit_kinds import *  # noqa: F401,F403
from .base import Record, Result, SchemaError, json_ready, number
from .bench_kinds import *  # noqa: F401,F403
from .bench_library_results import *  # noqa: F401,F403
from .bench_results import *  # noqa: F401,F403
from .bench_study_results import *  # noqa: F401,F403
from .channels import ChannelFamily, ChannelKind, channel_kind, kind_from_label
from .check_kinds import *  # noqa: F401,F403
from .kinds import *  # noqa: F401,F403
from .kinds import SCHEMAS
from .opacus_kinds import *  # noqa: F401,F403
from .power_kinds import *  # noqa: F401,F403
from .replicate_kinds import *  # noqa: F401,F403
from .report_kind import *  # noqa: F401,F403
from .thesis_kinds import *  # noqa: F401,F403

__all__ = [
    "KINDS",
    "CertifiedRow",
    "ChannelFamily",
    "ChannelKind",
    "SCHEMAS",
    "Record",
    "Result",
    "SchemaError",
    "channel_kind",
    "dump",
    "json_number",
    "json_ready",
    "kind_of",
    "kind_from_label",
    "load",
    "number",
    "validate",
]

KINDS = tuple(SCHEMAS)
RUN_FORMAT = "pgc-run/1"
LEGACY_AUDIT_VERSIONS = (1, 2, 3)  # the older kind "audit": its format_versions, read as the kind its mode names


def kind_of(data: Any) -> str | None:
    """The kind a JSON object declares (``"kind"``, or ``"train"`` for a run summary); None if none."""
    if not isinstance(data, dict):
        return None
    declared = data.get("kind")
    if isinstance(declared, str):
        return declared
    if data.get("format") == RUN_FORMAT:
        return "train"
    return None


def load(data: Any, *, kind: str | None = None, where: str = "") -> Result:
    """The typed result of one parsed JSON file. ``kind`` is needed only for files that declare none;
    ``where`` (a file name) starts every error message."""
    prefix = f"{where}: " if where else ""
    if not isinstance(data, dict):
        raise SchemaError(f"{prefix}holds a JSON {type(data).__name__}, not a result object")
    declared = kind_of(data)
    if kind is not None and declared is not None and declared != kind:
        raise SchemaError(f"{prefix}is of kind {declared!r}, not {kind!r}")
    kind = declared or kind
    if kind is None:
        raise SchemaError(f"{prefix}has no 'kind' field; known kinds: {', '.join(KINDS)}")
    cls = SCHEMAS.get(kind)
    version = data.get("format_version", 1)
    if kind == "audit":
        cls = _legacy_audit(data, version, prefix)
    if cls is None:
        raise SchemaError(
            f"{prefix}kind {kind!r} (format_version {version}) is not a known result kind; "
            f"known kinds: {', '.join(KINDS)}"
        )
    if kind != "audit" and version != cls.FORMAT_VERSION and version not in cls.OLDER_VERSIONS:
        raise SchemaError(
            f"{prefix}kind {kind!r} format_version {version!r} is not supported "
            f"(this pgc reads {kind} format_version {cls.FORMAT_VERSION}"
            + "".join(f", {v} migrated" for v in cls.OLDER_VERSIONS)
            + ")"
        )
    try:
        return cls.from_dict({**data, "kind": cls.KIND, "format_version": cls.FORMAT_VERSION})  # migrated on parsing
    except SchemaError as exc:
        raise SchemaError(f"{prefix}kind {kind!r} format_version {version}: {exc}") from None


def _legacy_audit(data: dict[str, Any], version: Any, prefix: str) -> type[Result]:
    """The kind a file of the older kind ``audit`` is read as (one line naming what is wrong when none)."""
    if version not in LEGACY_AUDIT_VERSIONS:
        raise SchemaError(
            f"{prefix}kind 'audit' format_version {version!r} is not supported (this pgc reads audit format_version "
            f"{', '.join(map(str, LEGACY_AUDIT_VERSIONS))} as the kind its mode names)"
        )
    try:
        return legacy_audit_kind(data)
    except SchemaError as exc:
        raise SchemaError(f"{prefix}{exc}") from None


def validate(data: Any, *, kind: str | None = None, where: str = "") -> Any:
    """``data`` unchanged when it matches its schema; else :class:`SchemaError`."""
    load(data, kind=kind, where=where)
    return data


def dump(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as a result of ``kind`` ready to write: ``kind`` and ``format_version`` first, then the
    writer's own fields unchanged; checked against the schema first (:class:`SchemaError` if it does
    not match, so nothing malformed is written)."""
    cls = SCHEMAS.get(kind)
    if cls is None:
        raise SchemaError(f"no schema for kind {kind!r}; known kinds: {', '.join(KINDS)}")
    if data.get("kind", kind) != kind:
        raise SchemaError(f"a result of kind {data.get('kind')!r} cannot be written as kind {kind!r}")
    out = {
        "kind": kind,
        "format_version": cls.FORMAT_VERSION,
        **{k: v for k, v in data.items() if k not in ("kind", "format_version")},
    }
    load(out, where=f"{kind} result")
    return out
