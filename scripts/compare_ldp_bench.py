"""Two runs of ``pgc bench ldp`` cell by cell: which cells' certified ε_LB lost more than a tolerance, which gained,
and the timing audits' wall time, the second run against the first.

    python scripts/compare_ldp_bench.py results/ldp/bench.json /tmp/ldp-rerun/bench.json --tolerance 0.02

Cells are matched by (library, protocol, k, ε, releases per side); a cell of one run missing from the other is
listed. A cell *lost* when its new ε_LB is below (1 − tolerance) × the old one; the timing ratio is the new audit's
wall time over the old one's, per timing audit (median and largest).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.files import read_json


def _bench(path: str) -> schemas.LdpBench:
    if not Path(path).is_file():
        raise UserError(f"no bench result at {path}")
    result = schemas.load(read_json(Path(path)), kind="ldp-bench", where=path)
    if not isinstance(result, schemas.LdpBench):
        raise UserError(f"{path}: not a pgc bench ldp result")
    return result


def _label(key: tuple[str, str, int, float, int]) -> str:
    library, protocol, k, epsilon, _ = key
    return f"{library}:{protocol} k={k} ε={epsilon:g}"


def _listed(keys: set[tuple[str, str, int, float, int]]) -> str:
    """A few cells by name, many by their count."""
    if not keys:
        return "none"
    return ", ".join(sorted(map(_label, keys))) if len(keys) <= 10 else f"{len(keys)} cells"


def compare(old: schemas.LdpBench, new: schemas.LdpBench, tolerance: float) -> list[str]:
    """The comparison's lines (Markdown)."""
    before = {c.key: c for c in old.cells}
    after = {c.key: c for c in new.cells}
    shared = [key for key in before if key in after]
    lost = [k for k in shared if after[k].epsilon_lower_bound < (1.0 - tolerance) * before[k].epsilon_lower_bound]
    gained = [k for k in shared if after[k].epsilon_lower_bound > before[k].epsilon_lower_bound]
    same = sum(after[k].epsilon_lower_bound == before[k].epsilon_lower_bound for k in shared)
    lines = [
        f"cells in both: {len(shared)}; identical ε_LB: {same}; higher: {len(gained)}; lower by more than "
        f"{tolerance:.0%}: {len(lost)}",
        f"only in the first: {_listed(set(before) - set(after))}; "
        f"only in the second: {_listed(set(after) - set(before))}",
        "",
        "| cell | first ε_LB | second ε_LB | ratio | first statistic | second statistic |",
        "|---|---|---|---|---|---|",
    ]
    for key in sorted(k for k in shared if after[k].epsilon_lower_bound != before[k].epsilon_lower_bound):
        b, a = before[key], after[key]
        ratio = a.epsilon_lower_bound / b.epsilon_lower_bound if b.epsilon_lower_bound > 0 else float("inf")
        mark = " (lost)" if key in lost else ""
        lines.append(
            f"| {_label(key)}{mark} | {b.epsilon_lower_bound:.4f} | {a.epsilon_lower_bound:.4f} | {ratio:.4f} | "
            f"{b.statistic} | {a.statistic} |"
        )
    timing_before = {c.key: c.wall_s for c in old.timing}
    ratios = [c.wall_s / timing_before[c.key] for c in new.timing if timing_before.get(c.key)]
    if ratios:
        lines += [
            "",
            f"timing audits ({len(ratios)} in both): wall time second / first, median {statistics.median(ratios):.2f}, "
            f"largest {max(ratios):.2f}",
        ]
    for run, bench in (("first", old), ("second", new)):
        if bench.summary is not None:
            bounds, flags = bench.summary.bounds, bench.summary.flags
            lines.append(
                f"{run}: {bounds.ours_at_least_reference} of {bounds.cells} at least LDP-Auditor's bound, "
                f"{bounds.tight} of {bounds.tightness_applies} at least 0.9·ε; broken flagged "
                f"{flags.broken_flagged} of {flags.broken_cells}; correct flagged after Holm "
                f"{len(flags.correct_flagged_after_holm_over_all_cells)}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", help="the earlier bench result (JSON)")
    parser.add_argument("second", help="the later bench result (JSON)")
    parser.add_argument("--tolerance", type=float, default=0.02, help="relative loss allowed per cell (default 0.02)")
    args = parser.parse_args(argv)
    if not 0.0 <= args.tolerance < 1.0:
        parser.error(f"--tolerance must lie in [0, 1), got {args.tolerance!r}")
    from pgc.cli.main import report_exception

    try:
        print("\n".join(compare(_bench(args.first), _bench(args.second), args.tolerance)))
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "compare_ldp_bench.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
