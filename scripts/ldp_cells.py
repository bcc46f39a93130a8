"""Audit chosen cells of ``pgc bench ldp`` (library, protocol, k, ε) with the bench's own cell function and write
them as one ldp-bench result: a quick check of the cells a full bench run listed as below a goal.

    python scripts/ldp_cells.py --samples 1000000 --out results/ldp/recheck.json \\
        --from-summary results/ldp/bench.json
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pgc.schemas as schemas
from pgc.benchmarks.ldp import audit_cell, print_cell, summary
from pgc.errors import UserError
from pgc.files import read_json, write_json_atomic

LABEL = re.compile(r"(.+):(\w+) k=(\d+) ε=([\d.]+)")  # a cell as pgc bench ldp's summary names it


def cells_from_summary(path: Path) -> list[tuple[str, str, int, float]]:
    """The cells a bench result lists as below LDP-Auditor's bound or below 0.9·ε."""
    if not path.is_file():
        raise UserError(f"no bench result at {path}")
    result = schemas.load(read_json(path), kind="ldp-bench", where=str(path))
    if not isinstance(result, schemas.LdpBench) or result.summary is None:
        raise UserError(f"{path}: an unfinished bench (no summary)")
    goals = result.summary.bounds
    labels = sorted(set(goals.ours_below_reference) | set(goals.not_tight))
    cells = []
    for label in labels:
        m = LABEL.fullmatch(label)
        if m is None:
            raise UserError(f"{path}: the summary names a cell as {label!r}, not 'library:PROTOCOL k=K ε=E'")
        cells.append((m[1], m[2], int(m[3]), float(m[4])))
    return cells


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from-summary", type=Path, required=True, help="a pgc bench ldp result")
    p.add_argument("--samples", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    todo = cells_from_summary(args.from_summary)
    rows = []
    for i, (library, protocol, k, epsilon) in enumerate(todo, 1):
        rows.append(audit_cell(library, protocol, k, epsilon, args.samples, 0.95, args.seed))
        print_cell(rows[-1], i, len(todo))
    goals = summary(rows, [], 0.95)
    result = schemas.LdpBench(
        command="python scripts/ldp_cells.py " + " ".join(sys.argv[1:]),
        settings=schemas.LdpBenchSettings(samples=args.samples, confidence=0.95, seed=args.seed),
        cells=rows,
        complete=True,
        summary=goals,
    )
    print(
        f"{len(rows)} cells: {len(goals.bounds.ours_below_reference)} below LDP-Auditor's bound, "
        f"{len(goals.bounds.not_tight)} below 0.9·ε"
    )
    write_json_atomic(args.out, result.to_dict())
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except UserError as exc:  # bad input: one line, exit 2
        print(f"ldp_cells.py: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
