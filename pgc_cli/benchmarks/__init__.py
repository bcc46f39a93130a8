"""The benchmarks of ``pgc bench``, one module per target, and what they share: the committed reference
files some of them read, and the exit code that names every goal missed."""

from __future__ import annotations

import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]  # the repository a development install runs from


def committed_file(relative: str) -> Path:
    """A file the repository commits under ``results/`` (a crafted θ a benchmark starts from), found from
    the installed code, whatever the working folder; a one-line error where the install has no checkout."""
    from ..main import CLIError

    path = CHECKOUT / relative
    if not path.is_file():
        raise CLIError(f"this benchmark reads {relative}, which ships with the repository, not the installed "
                       "package: run it from a checkout installed with pip install -e")
    return path


def goals_exit(missed: list[str]) -> int:
    """0 when every goal was met; else one line per goal missed on standard error, and 1."""
    for goal in missed:
        print(f"goal missed: {goal}", file=sys.stderr)
    return 1 if missed else 0
