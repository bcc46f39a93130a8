"""Audit chosen cells of ``pgc bench ldp`` (library, protocol, k, ε) with the bench's own cell function and write
them as one ldp-bench result: a quick check of the cells a full bench run listed as below a goal.

    python scripts/ldp_cells.py --samples 1000000 --out results/ldp/recheck.json \\
        --from-summary results/ldp/bench.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pgc.schemas as schemas
from pgc.benchmarks.ldp import FLOAT_SLACK, audit_cell, summary
from reports.files import write_json_atomic


def cells_from_summary(path: Path) -> list[tuple[str, str, int, float]]:
    """The cells a bench result lists as below LDP-Auditor's bound or below 0.9·ε."""
    summary = json.loads(path.read_text())["summary"]
    labels = sorted(set(summary["ours_below_reference"]) | set(summary["not_tight"]))
    cells = []
    for label in labels:
        m = re.fullmatch(r"(.+):(\w+) k=(\d+) ε=([\d.]+)", label)
        cells.append((m[1], m[2], int(m[3]), float(m[4])))
    return cells


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from-summary", type=Path, required=True, help="a pgc bench ldp result")
    p.add_argument("--samples", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    rows = []
    for library, protocol, k, epsilon in cells_from_summary(args.from_summary):
        c = audit_cell(library, protocol, k, epsilon, args.samples, 0.95, args.seed)
        rows.append(c)
        print(f"{library}:{protocol} k={k} ε={epsilon:g}: ours {c['epsilon_lower_bound']:.4f} [{c['statistic']}], "
              f"LDP-Auditor {c['reference_epsilon_lower_bound']:.4f}", flush=True)
    below = [r for r in rows if r["epsilon_lower_bound"] < r["reference_epsilon_lower_bound"] - FLOAT_SLACK]
    loose = [r for r in rows if r["epsilon_lower_bound"] < 0.9 * r["claimed_epsilon"]]
    print(f"{len(rows)} cells: {len(below)} below LDP-Auditor's bound, {len(loose)} below 0.9·ε")
    result = {"bench": "ldp", "command": "python scripts/ldp_cells.py " + " ".join(sys.argv[1:]),
              "settings": {"samples": args.samples, "confidence": 0.95, "seed": args.seed, "timing_samples": None},
              "cells": rows, "complete": True, "summary": summary(rows, [], 0.95)}
    write_json_atomic(args.out, schemas.dump("ldp-bench", result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
