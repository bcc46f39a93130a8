"""Every key of every committed result is read into a typed field.

A record keeps the keys its fields do not read in ``extra`` (so that a newer file loads in older code); a key of a
committed result that lands there is data no type states. Each committed result (``results/`` and the references
the package ships) is loaded, migrations included, and every record reachable from it must leave ``extra`` empty."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from test_schemas import KINDLESS

import pgc.schemas as schemas
from pgc.schemas.base import Record

ROOT = Path(__file__).resolve().parents[3]


def untyped_keys(obj: Any, where: str, found: set[str]) -> set[str]:
    """ "Type.key" for every key some record reachable from ``obj`` keeps in ``extra``."""
    if isinstance(obj, Record):
        found |= {f"{type(obj).__name__}.{key} ({where})" for key in obj.extra}
        for f in dataclasses.fields(obj):
            if f.name != "extra":
                untyped_keys(getattr(obj, f.name), where, found)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            untyped_keys(item, where, found)
    elif isinstance(obj, dict):
        for item in obj.values():
            untyped_keys(item, where, found)
    return found


def test_every_key_of_every_committed_result_is_read_into_a_typed_field():
    paths = sorted([*(ROOT / "results").rglob("*.json"), *(ROOT / "pgc" / "references").rglob("*.json")])
    assert len(paths) > 50
    found: set[str] = set()
    for path in paths:
        where = path.relative_to(ROOT).as_posix()
        data = json.loads(path.read_text())
        kind = next((k for prefix, k in KINDLESS.items() if where.startswith(prefix)), None)
        result = schemas.load(data, kind=kind if schemas.kind_of(data) is None else None, where=where)
        untyped_keys(result, where, found)
    assert sorted(found) == []


def test_a_key_no_field_reads_is_kept_aside_and_found():
    row = schemas.AuditRow.from_dict({"channel": "c", "epsilon_lower_bound": 0.5, "newer_key": 1})
    assert untyped_keys(row, "here", set()) == {"AuditRow.newer_key (here)"}
    assert row.to_dict()["newer_key"] == 1
