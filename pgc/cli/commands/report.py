"""``pgc report RUN_OR_RESULT... --out DIR``: privacy report (HTML, Markdown, JSON) from result files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pgc.errors import UserError
from pgc.options import add_force, add_out


class ReportCommand:
    help = "privacy report (HTML, Markdown, JSON) from result files"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "inputs",
            nargs="+",
            metavar="RUN_OR_RESULT",
            help="pgc train run folders and JSON results of replicate, audit, attack or tune",
        )
        add_out(p, default="runs/report", help="output folder (default runs/report)")
        add_force(p, help="replace an existing report folder (whole; only a folder pgc report wrote)")
        p.add_argument("--title", default="pgc-audit privacy report", help="page title")

    def run(self, args: argparse.Namespace) -> int:
        from pgc.a3c.rundir import check_output_dir, replace_directory_atomically
        from reports import ReportInputError, build_report

        out = Path(args.out)
        check_output_dir(out, force=args.force, command="report")  # absent or empty, or --force on a report folder
        try:
            with replace_directory_atomically(out, "report") as work:  # built beside, swapped in whole
                check_output_dir(out, force=args.force, command="report")
                written = {
                    name: out / path.relative_to(work)
                    for name, path in build_report(args.inputs, work, title=args.title).items()
                }
                summary = json.loads((work / "report.json").read_text())
        except ReportInputError as exc:
            raise UserError(str(exc)) from None
        _print_answer(summary)
        html = written["report.html"]
        print(
            f"wrote {html} ({html.stat().st_size / 1024:.0f} KiB, self-contained), {written['report.md']}, "
            f"{written['report.json']} and {sum(1 for k in written if k.startswith('figures'))} figure(s)"
        )
        return 0


SHOWN_ROWS = 8


def _print_answer(summary: dict) -> None:
    """The verdict line and the first rows of the summary table, as the report's first screen shows them."""
    import pgc.schemas as schemas
    from reports.content import fmt_eps

    print(f"verdict: {summary['verdict']}")
    rows = summary.get("summary") or []
    if not rows:
        return
    table = [["observer", "channel", "claimed ε", "audited ε ≥", "cap", "verdict", "after Holm"]]
    for r in rows[:SHOWN_ROWS]:
        table.append(
            [
                str(r["group"]),
                str(r.get("channel_label") or r["family"]),
                fmt_eps(schemas.number(r["claimed"])),
                fmt_eps(schemas.number(r["lower_bound"])),
                fmt_eps(schemas.number(r["cap"])),
                str(r["verdict"]),
                str(r.get("holm", "—")),
            ]
        )
    widths = [max(len(row[j]) for row in table) for j in range(len(table[0]))]
    for row in table:
        print(
            "  "
            + "  ".join(
                cell.ljust(w) if j in (0, 1, 5, 6) else cell.rjust(w)
                for j, (cell, w) in enumerate(zip(row, widths, strict=False))
            ).rstrip()
        )
    if len(rows) > SHOWN_ROWS:
        print(f"  … {len(rows) - SHOWN_ROWS} further row(s) in the report")
