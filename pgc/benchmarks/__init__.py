"""The benchmarks of ``pgc bench``, one module per target, and what they share: the committed reference
files some of them read, and the exit code that names every goal missed."""

from __future__ import annotations

import sys
from pathlib import Path


def committed_file(relative: str) -> Path:
    """A committed reference under ``results/`` that ships with the package (a crafted θ a benchmark
    starts from), whatever the working folder: :func:`pgc.references.reference_path`."""
    from pgc.references import reference_path

    return reference_path(relative.removeprefix("results/"))


def goals_exit(missed: list[str]) -> int:
    """0 when every goal was met; else one line per goal missed on standard error, and 1."""
    for goal in missed:
        print(f"goal missed: {goal}", file=sys.stderr)
    return 1 if missed else 0
