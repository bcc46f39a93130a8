"""The references the package ships (pgc.references) are byte-for-byte the repository's committed results of the
same relative path, and every result among them loads with its schema and names only shipped θ files."""

from __future__ import annotations

import json
from pathlib import Path

import pgc.schemas as schemas
from pgc.references import SHIPPED, ReferenceMissingError, reference_path, root

ROOT = Path(__file__).resolve().parents[3]


def test_every_shipped_reference_is_the_committed_result():
    differ = [r for r in SHIPPED if reference_path(r).read_bytes() != (ROOT / "results" / r).read_bytes()]
    assert not differ, f"run python scripts/sync_references.py: {differ}"
    shipped = {
        p.relative_to(root()).as_posix()
        for p in root().rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    }
    assert shipped == set(SHIPPED)


def test_shipped_results_load_and_their_theta_files_ship_with_them():
    for relative in (r for r in SHIPPED if r.endswith(".json")):
        data = json.loads(reference_path(relative).read_text())
        schemas.load(data)
        named = set()

        def walk(obj):
            if isinstance(obj, dict):
                for key, value in obj.items():
                    if key in ("theta_file", "crafted_theta") and isinstance(value, str):
                        named.add(value)  # noqa: B023 called within the iteration
                    walk(value)
            elif isinstance(obj, list):
                for value in obj:
                    walk(value)

        walk(data)
        folder = Path(relative).parent
        assert all((folder / name).as_posix() in SHIPPED for name in named), (relative, named)


def test_a_reference_not_shipped_is_a_one_line_error():
    try:
        reference_path("audit/nothing-here.json")
    except ReferenceMissingError as exc:
        assert "no shipped reference results/audit/nothing-here.json" in str(exc)
    else:
        raise AssertionError("no error")
