"""The benchmarks of ``pgc bench``, one module per target, and what they share: the exit code that names every
goal missed. A benchmark that starts from a committed crafted θ reads the shipped copy
(:func:`pgc.references.reference_path`), whatever the working folder."""

from __future__ import annotations

import sys


def goals_exit(missed: list[str]) -> int:
    """0 when every goal was met; else one line per goal missed on standard error, and 1."""
    for goal in missed:
        print(f"goal missed: {goal}", file=sys.stderr)
    return 1 if missed else 0
