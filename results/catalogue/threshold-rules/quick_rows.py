"""The score×3 row of run.sh's quick-start audits, one markdown row per seed: ε_LB read from each result file
RUN/NAME-SEED.json. Usage: python quick_rows.py RUN NAME"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def bounds(node: object) -> set[float]:
    """Every certified ε_LB of a score×3 row in a result file's tree."""
    found: set[float] = set()
    if isinstance(node, dict):
        if node.get("channel") == "score×3" and "epsilon_lower_bound" in node:
            found.add(float(node["epsilon_lower_bound"]))
        for value in node.values():
            found |= bounds(value)
    elif isinstance(node, list):
        for value in node:
            found |= bounds(value)
    return found


def main() -> None:
    run, name = Path(sys.argv[1]), sys.argv[2]
    for seed in range(12):
        (bound,) = bounds(json.loads((run / f"{name}-{seed}.json").read_text()))
        print(f"| {seed} | {bound:.3f} |")


if __name__ == "__main__":
    main()
