"""Privacy reports: one self-contained HTML page, Markdown and a JSON summary from result files.

    from reports import build_report
    paths = build_report(["runs/train", "results/audit/audit.json"], "runs/report")

Inputs are read by :mod:`reports.loaders` (keyed on the JSON ``"kind"``), turned into plain content by
:mod:`reports.content` and rendered by :mod:`reports.render`. Everything is computed before the first
byte is written; each file is then written atomically (temporary file + rename), so a bad input leaves
nothing half-written.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

from .loaders import KINDS, ReportInputError, Source, load_sources

__all__ = ["KINDS", "ReportInputError", "Source", "build_report", "load_sources"]

HTML_FILE, MD_FILE, JSON_FILE, FIGURE_DIR = "report.html", "report.md", "report.json", "figures"


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        try:
            obj = obj.item()
        except (AttributeError, ValueError):
            return str(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a report is meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def build_report(inputs, out_dir: str | Path, *, title: str = "pgc-audit privacy report") -> dict[str, Path]:
    """Read ``inputs`` (run folders / result JSON files), write report.html, report.md, report.json
    and figures/*.png into ``out_dir``. Returns the written paths. Raises :class:`ReportInputError`."""
    from .content import build_content
    from .render import render

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ReportInputError(f"{out} exists and is not a folder")
    sources = load_sources(inputs)
    content = build_content(sources)
    page, markdown, summary, figures = render(content, out, title=title)
    blobs = {Path(FIGURE_DIR) / name: png for name, png in figures.items()}
    blobs[Path(MD_FILE)] = markdown.encode()
    blobs[Path(JSON_FILE)] = (json.dumps(_json_safe(summary), indent=2, ensure_ascii=False) + "\n").encode()
    blobs[Path(HTML_FILE)] = page.encode()  # last: its presence marks a finished report
    written = {}
    for rel, data in blobs.items():
        _write_atomic(out / rel, data)
        written[str(rel)] = out / rel
    return written
