"""Adds ``covered`` to the rows of committed ``audit`` results that lack it, by PGC-A3C's own rule
(:func:`pgc.a3c.system.protected_channels`: the gradient and its compositions, and the channels the run's
mitigations protect; a mechanism's output and the self-test's rows are what their claim covers).

    .venv/bin/python scripts/add_covered.py results/audit/env-laplace-run.json ...

Each file is rewritten atomically (temporary file, then rename); rows that have ``covered`` are left
as they are, and nothing else in the file changes.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path

from pgc.a3c.system import protected_channels

COMPOSITION = re.compile(r"^(?:gradient|score)×(\d+)")


def row_covered(row: dict, result: dict) -> bool:
    scope = (row.get("scope") or result.get("mode") or "").split(" ")[0]
    if scope in ("mechanism", "self-test") or row.get("mechanism"):
        return True
    protect = row.get("protect") or (result.get("protection") or {}).get("protect") or ()
    match = COMPOSITION.match(row["channel"])
    return row["channel"] in protected_channels(protect, (int(match.group(1)),) if match else ())


def add_covered(path: Path) -> int:
    result = json.loads(path.read_text())
    if result.get("kind") != "audit":
        raise SystemExit(f"{path}: not an audit result (kind {result.get('kind')!r})")
    added = 0
    for row in result.get("channels", []):
        if "covered" not in row:
            row["covered"] = row_covered(row, result)
            added += 1
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, path)
    return added


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"{name}: covered added to {add_covered(Path(name))} row(s)")
