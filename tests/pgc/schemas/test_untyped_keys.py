"""Every key of every committed result is read into a typed field.

A record keeps the keys its fields do not read in ``extra`` (so that a newer file loads in older code); a key of a
committed result that lands there is data no type states. Each committed result (``results/`` and the references
the package ships) is loaded, migrations included, and every record reachable from it must leave ``extra`` empty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from result_fixtures import reachable_records
from test_schemas import _kind_for

import pgc.schemas as schemas

ROOT = Path(__file__).resolve().parents[3]


def untyped_keys(obj: Any, where: str) -> set[str]:
    """The "Type.key (where)" of every key some record reachable from ``obj`` keeps in ``extra``."""
    return {f"{type(r).__name__}.{key} ({where})" for r in reachable_records(obj) for key in r.extra}


def test_every_key_of_every_committed_result_is_read_into_a_typed_field():
    paths = sorted([*(ROOT / "results").rglob("*.json"), *(ROOT / "pgc" / "references").rglob("*.json")])
    assert len(paths) > 50
    found: set[str] = set()
    for path in paths:
        where = path.relative_to(ROOT).as_posix()
        data = json.loads(path.read_text())
        result = schemas.load(data, kind=_kind_for(path) if schemas.kind_of(data) is None else None, where=where)
        found |= untyped_keys(result, where)
    assert sorted(found) == []


def test_a_key_no_field_reads_is_kept_aside_and_found():
    row = schemas.AuditRow.from_dict({"channel": "c", "epsilon_lower_bound": 0.5, "newer_key": 1})
    assert untyped_keys(row, "here") == {"AuditRow.newer_key (here)"}
    assert row.to_dict()["newer_key"] == 1
