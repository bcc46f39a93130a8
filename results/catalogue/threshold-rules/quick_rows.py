"""The score×3 row of run.sh's quick-start audits, one markdown row per seed: ε_LB read from each result file
RUN/NAME-SEED.json. Usage: python quick_rows.py RUN NAME"""

from __future__ import annotations

import argparse
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="the folder of the audits' result files")
    parser.add_argument("name", help="the variant's name, the files' prefix")
    args = parser.parse_args()
    from pgc.cli.main import report_exception
    from pgc.errors import UserError

    try:
        rows = []
        for seed in range(12):
            path = args.run / f"{args.name}-{seed}.json"
            if not path.is_file():
                raise UserError(f"no result file {path} (run.sh writes RUN/NAME-SEED.json for seeds 0–11)")
            found = bounds(json.loads(path.read_text()))
            if len(found) != 1:
                raise UserError(f"{path} holds {len(found)} distinct score×3 bounds, not one")
            rows.append(f"| {seed} | {found.pop():.3f} |")
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "quick_rows.py")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
