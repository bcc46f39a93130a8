"""Render report content as one self-contained HTML page, Markdown (with PNGs beside it) and a JSON summary.

The HTML page has no external resource at all: styles inline, figures as ``data:image/png;base64``,
no script. The Markdown references the same figures as files in ``DIR/figures/``.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from . import plots
from .content import ReportContent
from .document import Document, esc, md
from .report_json import report_json
from .sections import SECTIONS
from .summary import overall_verdict, summary_table, verdict_class

_CSS = """
body{font-family:-apple-system,'Segoe UI',Roboto,'DejaVu Sans',Arial,sans-serif;margin:0;background:#f8f9fa;\
color:#212529}
main{max-width:1100px;margin:0 auto;padding:24px 32px 64px;background:#fff;overflow-wrap:break-word}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;border-bottom:2px solid #dee2e6;padding-bottom:4px;margin-top:36px}
h3{font-size:16px;margin-top:22px}.sub{color:#6c757d;font-size:13px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:8px 0 14px}
th,td{border:1px solid #dee2e6;padding:4px 7px;text-align:left;vertical-align:top}
th{background:#f1f3f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.v-consistent{color:#2b8a3e;font-weight:600}.v-violated{color:#c92a2a;font-weight:700}
.v-unprotected{color:#e67700;font-weight:700}.v-inconclusive{color:#1971c2;font-weight:600}
.warn{border-left:5px solid #adb5bd;background:#f8f9fa;padding:8px 12px;margin:8px 0;font-size:14px}
.warn.critical{border-color:#c92a2a;background:#fff5f5}.warn.warning{border-color:#e67700;background:#fff9db}
.warn.info{border-color:#1971c2;background:#e7f5ff}.warn b{display:block;margin-bottom:2px}
figure{margin:10px 0 18px}figure img{max-width:100%;border:1px solid #e9ecef}
figcaption{font-size:12px;color:#6c757d}
.verdict-box{font-size:15px;padding:10px 14px;border-radius:4px;background:#f1f3f5;margin:12px 0}
code{background:#f1f3f5;padding:1px 4px;border-radius:3px;font-size:12px}
.first{display:grid;grid-template-columns:minmax(0,1.05fr) minmax(0,1fr);gap:18px;align-items:start}
.first table{font-size:12px;margin:0}.first th,.first td{padding:3px 6px}.first figure{margin:0}
.verdict-card{font-size:15px;padding:10px 14px;border-radius:6px;margin:10px 0 12px;border-left:6px solid #2b8a3e;
background:#ebfbee}.verdict-card.bad{border-color:#c92a2a;background:#fff5f5}
.verdict-card.side{border-color:#e67700;background:#fff9db}.verdict-card.none{border-color:#adb5bd;background:#f1f3f5}
.verdict-card small{display:block;color:#495057;font-size:12px;margin-top:3px}
details{border:1px solid #dee2e6;border-radius:4px;margin:8px 0;padding:0 12px}
details>summary{cursor:pointer;font-size:17px;font-weight:600;padding:8px 0}
details[open]>summary{border-bottom:1px solid #dee2e6;margin-bottom:8px}
details .lead{color:#495057;font-style:italic}
details.reference{background:#f8f9fa}
"""


def _first_screen(doc: Document, c: ReportContent, verdict: str) -> None:
    """Verdict card, summary table and headline figure: what a reader needs in the first minute."""
    f = c.own
    n_ref = sum(1 for s in c.sources if s.reference)
    note = f"From this run's {len(c.sources) - n_ref} input(s)" + (
        f"; {n_ref} committed reference result(s) are shown apart in the References section"
        + (
            " (federated-bandit results in their own section, marked reference)."
            if c.reference.bandit_regret or c.reference.bandit_attacks
            else "."
        )
        if n_ref
        else "."
    )
    doc.raw_html(
        f"<div class='verdict-card {verdict_class(verdict)}'><b>Verdict:</b> {esc(verdict)}"
        f"<small>{esc(note)}</small></div>"
    )
    doc.md.append(f"**Verdict:** {md(verdict)}\n\n*{md(note)}*\n")
    doc.raw_html("<div class='first'><div>")
    doc.md.append("\n## Summary\n")
    rows = summary_table(doc, f)
    doc.raw_html("</div><div>")
    if rows:
        system_of = {b.group or b.subject: b.system for b in f.bounds if b.system}
        doc.figure(
            "headline.png",
            plots.headline_figure(rows, system_of),
            "Per observer and channel: the largest audited ε lower bound (bar, colour = verdict), the claimed ε "
            "(black tick) and the largest ε the sample budget can certify (grey tick).",
        )
    doc.raw_html("</div></div>")


def render(c: ReportContent, out_dir: Path, title: str = "pgc-audit privacy report") -> tuple[str, str, dict, dict]:
    """Return (html, markdown, json summary, figures {name: png bytes})."""
    doc = Document(out_dir)
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    verdict = overall_verdict(c.own)
    doc.raw_html(f"<h1>{esc(title)}</h1><div class='sub'>generated {now} from {len(c.sources)} input(s)</div>")
    doc.md.append(f"# {md(title)}\n\n*generated {now} from {len(c.sources)} input(s)*\n")
    _first_screen(doc, c, verdict)
    for section in SECTIONS:
        section.render(doc, c)
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body><main>"
        + "\n".join(doc.html)
        + "</main></body></html>\n"
    )
    markdown = "\n".join(doc.md)
    summary = report_json(c, now, verdict, sorted(doc.figures))
    return page, markdown, summary.to_dict(), doc.figures
