"""``pgc report RUN_OR_RESULT... --out DIR``: privacy report (HTML, Markdown, JSON) from result files."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..main import CLIError


class ReportCommand:
    help = "privacy report (HTML, Markdown, JSON) from result files"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("inputs", nargs="+", metavar="RUN_OR_RESULT",
                       help="pgc train run folders and JSON results of replicate, audit, attack or tune")
        p.add_argument("--out", default="runs/report", help="output folder (default runs/report)")
        p.add_argument("--title", default="pgc-audit privacy report", help="page title")

    def run(self, args: argparse.Namespace) -> int:
        from pgc.rundir import check_output_dir, output_lock, write_marker
        from reports import ReportInputError, build_report

        out = Path(args.out)
        check_output_dir(out, update=True)  # absent, empty or a report folder pgc wrote; writable
        try:
            with output_lock(out):
                check_output_dir(out, update=True)
                written = build_report(args.inputs, out, title=args.title)
                write_marker(out, command="report")
        except ReportInputError as exc:
            raise CLIError(str(exc)) from None
        html = written["report.html"]
        print(f"wrote {html} ({html.stat().st_size / 1024:.0f} KiB, self-contained), {written['report.md']}, "
              f"{written['report.json']} and {sum(1 for k in written if k.startswith('figures'))} figure(s)")
        return 0
