"""A report document built in HTML and Markdown side by side, and the text helpers every section
uses (escaping, numbers, verdict classes)."""

from __future__ import annotations

import base64
import contextlib
import html
import re
from pathlib import Path

from .content import fmt_eps
from .figure_kit import NAME_BREAK


def esc(x) -> str:
    return html.escape(str(x), quote=True)


LONG_WORD = 16  # characters: a longer word of a table cell gets line-break opportunities


def breakable(x) -> str:
    """``x`` escaped for HTML, with line-break opportunities (``<wbr>``) inside each word longer than
    :data:`LONG_WORD` characters: after each separator of a name (``- _ / : . =`` …) and every
    :data:`LONG_WORD` characters of a stretch without one. A long system name then wraps inside a narrow
    table column instead of widening the table; a composition ("score ×3") stays on its channel's line. The text
    itself is unchanged."""

    def word(w: str) -> str:
        if len(w) <= LONG_WORD:
            return esc(w)
        pieces = [p[i : i + LONG_WORD] for p in NAME_BREAK.split(w) if p for i in range(0, len(p), LONG_WORD)]
        return "<wbr>".join(esc(p) for p in pieces)

    text = "".join(word(w) if i % 2 == 0 else w for i, w in enumerate(re.split(r"(\s+)", str(x))))
    return re.sub(r" (?=×\d)", "&nbsp;", text)  # a composition ("score ×3") stays on the line of its channel


MD_SPECIAL = re.compile(r"([\\`*_|~])")


MD_LINK = re.compile(r"(\])([(:\[])|(!)(\[)")


MD_BLOCK_START = re.compile(r"^([#>+=-]|\d+[.)])(?=\s|$)")


def md(x) -> str:
    """Text copied into Markdown as text: one line, HTML special characters as entities, emphasis,
    code, table and escape characters backslash-escaped, link/image/reference syntax (``](``, ``]:``,
    ``![``) and block markers at the start broken: an input cannot inject links, images, raw HTML or
    new blocks."""
    text = " ".join(str(x).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = MD_SPECIAL.sub(r"\\\1", text)
    text = MD_LINK.sub(lambda m: (m.group(1) + "\\" + m.group(2)) if m.group(1) is not None else "!\\[", text)
    return MD_BLOCK_START.sub(r"\\\1", text)


def safe_name(name: str) -> str:
    """A figure file name made of safe characters only."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", str(name)).lstrip(".") or "figure"
    return name if name.lower().endswith(".png") else name + ".png"


def vclass(verdict: str) -> str:
    if verdict.startswith("violated"):
        return "v-violated"
    if verdict.startswith("unprotected"):
        return "v-unprotected"
    if verdict.startswith("inconclusive"):
        return "v-inconclusive"
    return "v-consistent"


def num(x, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, (int,)) and not isinstance(x, bool):
        return f"{x:,}"
    return fmt_eps(float(x), digits)


class Document:
    """Builds HTML and Markdown side by side."""

    def __init__(self, out_dir: Path):
        self.html: list[str] = []
        self.md: list[str] = []
        self.figures: dict[str, bytes] = {}
        self.out_dir = out_dir

    def heading(self, text: str, level: int = 2, anchor: str | None = None) -> None:
        aid = f' id="{anchor}"' if anchor else ""
        self.html.append(f"<h{level}{aid}>{esc(text)}</h{level}>")
        self.md.append(f"\n{'#' * level} {md(text)}\n")

    def para(self, text: str, cls: str | None = None) -> None:
        c = f' class="{cls}"' if cls else ""
        self.html.append(f"<p{c}>{esc(text)}</p>")
        self.md.append(md(text) + "\n")

    def table(
        self,
        header: list[str],
        rows: list[list],
        numeric: set[int] | None = None,
        classes: list[dict[int, str]] | None = None,
    ) -> None:
        numeric = numeric or set()
        h = ["<table><thead><tr>" + "".join(f"<th>{breakable(c)}</th>" for c in header) + "</tr></thead><tbody>"]
        for i, row in enumerate(rows):
            cells = []
            for j, cell in enumerate(row):
                cls = []
                if j in numeric:
                    cls.append("n")
                if classes and j in classes[i]:
                    cls.append(classes[i][j])
                attr = f' class="{" ".join(cls)}"' if cls else ""
                cells.append(f"<td{attr}>{breakable(cell)}</td>")
            h.append("<tr>" + "".join(cells) + "</tr>")
        h.append("</tbody></table>")
        self.html.append("".join(h))
        lines = ["| " + " | ".join(md(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        for row in rows:
            lines.append("| " + " | ".join(md(c) for c in row) + " |")
        self.md.append("\n".join(lines) + "\n")

    def figure(self, name: str, png: bytes, caption: str) -> None:
        name = safe_name(name)
        stem, n = name[:-4], 2
        while name in self.figures:  # two inputs with the same label: each figure keeps its own file
            name, n = f"{stem}_{n}.png", n + 1
        self.figures[name] = png
        b64 = base64.b64encode(png).decode("ascii")
        self.html.append(
            f'<figure><img alt="{esc(caption)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>"
        )
        self.md.append(f"![{md(caption)}](figures/{name})\n\n*{md(caption)}*\n")

    def warning(self, level: str, title: str, text: str) -> None:
        self.html.append(f'<div class="warn {esc(level)}"><b>{esc(title)}</b>{esc(text)}</div>')
        icon = {"critical": "🛑", "warning": "⚠️", "info": "ℹ️"}.get(level, "•")
        self.md.append(f"> {icon} **{md(title)}.** {md(text)}\n")

    def raw_html(self, text: str) -> None:
        self.html.append(text)

    @contextlib.contextmanager
    def section(self, title: str, lead: str, anchor: str, *, level: int = 2, cls: str = "", opened: bool = False):
        """A folded section: ``<details>`` whose summary is ``title``, opening with the one sentence
        ``lead`` that says what it shows; in Markdown a heading and the sentence."""
        c = f' class="{cls}"' if cls else ""
        o = " open" if opened else ""
        self.html.append(
            f'<details id="{esc(anchor)}"{c}{o}><summary>{esc(title)}</summary><p class="lead">{esc(lead)}</p>'
        )
        self.md.append(f"\n{'#' * level} {md(title)}\n\n*{md(lead)}*\n")
        try:
            yield
        finally:
            self.html.append("</details>")
