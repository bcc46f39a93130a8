"""Privacy reports: one self-contained HTML page, Markdown and a JSON summary from result files.

    from reports import build_report
    paths = build_report(["runs/train", "results/audit/audit.json"], "runs/report")

Inputs are read by :mod:`reports.loaders` through their typed schemas (:func:`pgc.schemas.load`); each
section of :mod:`reports.sections` (one module per section, declaring the result kinds it reads, its
extraction and its rendering) takes what it needs into the report's content (:mod:`reports.assemble`;
the run's own findings apart from committed references), and :mod:`reports.render` writes a verdict
card, a summary table and a headline figure first, then the sections, folded. Everything is computed before the first
byte is written; each file is then written atomically (temporary file + rename), so a bad input leaves
nothing half-written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pgc.files import json_safe, write_bytes_atomic

from .loaders import KINDS, ReportInputError, Source, load_sources

__all__ = ["KINDS", "ReportInputError", "Source", "build_report", "load_sources"]

HTML_FILE, MD_FILE, JSON_FILE, FIGURE_DIR = "report.html", "report.md", "report.json", "figures"


def build_report(
    inputs,
    out_dir: str | Path,
    *,
    title: str = "pgc-audit privacy report",
    shown_path: Callable[[Path], str] | None = None,
) -> dict[str, Path]:
    """Read ``inputs`` (run folders / result JSON files), write report.html, report.md, report.json
    and figures/*.png into ``out_dir``. Returns the written paths. Raises :class:`ReportInputError`.
    ``shown_path``: where the report says an input lies (inputs read from a folder that is moved later)."""
    from .assemble import build_content
    from .render import render

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ReportInputError(f"{out} exists and is not a folder")
    sources = load_sources(inputs)
    if shown_path is not None:
        for src in sources:
            src.shown_path = shown_path(src.path)
    content = build_content(sources)
    page, markdown, summary, figures = render(content, out, title=title)
    blobs = {Path(FIGURE_DIR) / name: png for name, png in figures.items()}
    blobs[Path(MD_FILE)] = markdown.encode()
    blobs[Path(JSON_FILE)] = (json.dumps(json_safe(summary), indent=2, ensure_ascii=False) + "\n").encode()
    blobs[Path(HTML_FILE)] = page.encode()  # last: its presence marks a finished report
    written = {}
    for rel, data in blobs.items():
        write_bytes_atomic(out / rel, data)
        written[str(rel)] = out / rel
    return written
