"""The docs stay true of any checkout: no absolute path of one machine, no temporary run folder, no "this
machine" (a measurement names the machine it ran on), and every repository path a doc links to exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]

MACHINE_BOUND = [
    (re.compile(r"(?<![\w.])/(?:work|root|home|Users)/\w"), "an absolute path of one machine"),
    (re.compile(r"(?<![\w.])/tmp/\w"), "a temporary folder"),
    (re.compile(r"pgc-\d{2,}-"), "a command's temporary output folder (a real process id)"),
    (re.compile(r"\bthis machine\b", re.I), '"this machine" (name the machine a measurement ran on)'),
]


def test_docs_name_no_machine_bound_path_or_this_machine():
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{doc.relative_to(ROOT)}:{number}: {why}: {line.strip()[:100]}"
                      for pattern, why in MACHINE_BOUND if pattern.search(line)]
    assert not found, "\n".join(found)


def test_every_linked_repository_path_exists():
    missing = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} links to {target}")
    assert not missing, "\n".join(missing)
