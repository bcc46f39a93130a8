"""What every report figure shares: saving as PNG bytes, a record of the figures a report draws
(:func:`keep_figures`, for checking their layout), and the layout rules that keep a figure legible at its
default size: a constrained layout, legends outside the plotted data, whole labels wrapped at spaces (a long name
after its separators), titles wrapped to the room they have, and one panel per system.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.transforms import ScaledTranslation  # noqa: E402

DPI = 96
_KEPT: contextvars.ContextVar[list | None] = contextvars.ContextVar("kept_figures", default=None)


def png(fig, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes (whitespace around it cropped). The figure is closed, unless
    :func:`keep_figures` is recording: then it stays open and is recorded with its bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    data = buf.getvalue()
    kept = _KEPT.get()
    if kept is None:
        plt.close(fig)
    else:
        kept.append((fig, data))
    return data


@contextlib.contextmanager
def keep_figures():
    """Record every figure saved through :func:`png` inside the block: a list of (Figure, PNG bytes), the
    figures left open for inspection (closed when the block ends)."""
    kept: list = []
    token = _KEPT.set(kept)
    try:
        with matplotlib.rc_context({"figure.max_open_warning": 0}):  # open on purpose, closed below
            yield kept
    finally:
        _KEPT.reset(token)
        for fig, _ in kept:
            plt.close(fig)


def new_figure(width: float, height: float, nrows: int = 1, ncols: int = 1, **kw):
    """A figure with a constrained layout (axes shrink to make room for labels, titles and outside legends),
    drawn at the DPI it is saved at; its axes as a 2-D array."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", dpi=DPI, squeeze=False, **kw)
    return fig, axes


# where a long name may break: after a separator (a dot not inside a number such as "v2.31")
NAME_BREAK = re.compile(r"(?<=[-_/:=,;+|])|(?<=\.)(?!\d)")


def _pieces(word: str, width: int) -> list[str]:
    """A word of at most ``width`` characters whole; a longer one (a long system name) in pieces of at most
    ``width`` characters, cut after the separators of the name (``- _ / : . =`` …) where it has them."""
    if len(word) <= width:
        return [word]
    out: list[str] = []
    for part in (p for p in NAME_BREAK.split(word) if p):
        while len(part) > width:
            out.append(part[:width])
            part = part[width:]
        if out and len(out[-1]) + len(part) <= width and not out[-1][-1:].isalnum():
            out[-1] += part  # after a separator: the next part joins the piece while it fits
        else:
            out.append(part)
    return out


def wrap(text: str, width: int) -> str:
    """``text`` whole, broken into lines of at most ``width`` characters: at spaces, and a word longer than
    ``width`` (a long name) after its separators (or, without one, every ``width`` characters). Joining the lines
    gives the text back: with a space where a line ends at a space, with nothing inside a word."""
    lines: list[str] = []
    line = ""
    for word in str(text).split():
        for i, piece in enumerate(_pieces(word, width)):
            glue = "" if i else " "
            if line and len(line) + len(glue) + len(piece) <= width:
                line += glue + piece
            else:
                if line:
                    lines.append(line)
                line = piece
    if line:
        lines.append(line)
    return "\n".join(lines) or str(text)


def fit_titles(fig, titles: list[tuple], width: int, smallest: float = 6.0) -> None:
    """Title each axes with its text (``titles``: (axes, text, font size)), wrapped at ``width`` characters; a
    title that, centred over its axes, would reach past an edge of the figure is wrapped narrower (then set
    smaller, down to ``smallest`` points) until it lies inside. A name is broken after its separators, never cut."""
    for ax, text, size in titles:
        ax.set_title(wrap(text, width), fontsize=size)
    if not titles:
        return
    fig.draw_without_rendering()  # the constrained layout places the axes, so the room of each title is known
    canvas = fig.bbox
    for ax, text, size in titles:
        chars = width
        for _ in range(12):
            box = ax.title.get_window_extent()
            if box.x0 >= canvas.x0 and box.x1 <= canvas.x1:
                break
            room = 2 * min((box.x0 + box.x1) / 2 - canvas.x0, canvas.x1 - (box.x0 + box.x1) / 2)
            widest = max(len(line) for line in ax.title.get_text().split("\n"))
            fitting = int(widest * room / box.width)
            if fitting >= 12:
                chars = min(chars - 1, fitting)
            else:
                size = max(smallest, size * 0.9)
            ax.title.set_text(wrap(text, chars))
            ax.title.set_fontsize(size)


def _entries(ax, kw: dict, width: int) -> tuple[list, list[str]]:
    """The legend's handles (``kw["handles"]``, else the axes' labelled artists) and their labels wrapped whole."""
    handles, labels = kw.pop("handles", None), kw.pop("labels", None)
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    elif labels is None:
        labels = [h.get_label() for h in handles]
    return handles, [wrap(t, width) for t in labels]


def legend_right(ax, fontsize: float = 7, width: int = 42, **kw):
    """The axes' legend to the right of its plot area (never over the data), labels wrapped whole."""
    handles, labels = _entries(ax, kw, width)
    if not handles:
        return None
    return ax.legend(
        handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=fontsize, **kw
    )


def legend_below(ax, below_inches: float, fontsize: float = 7, width: int = 42, **kw):
    """The axes' legend under its plot area, ``below_inches`` below the axes' bottom edge (clear of the tick
    labels and the x label), labels wrapped whole; the constrained layout makes room for it."""
    handles, labels = _entries(ax, kw, width)
    if not handles:
        return None
    where = ax.transAxes + ScaledTranslation(0, -below_inches, ax.figure.dpi_scale_trans)
    return ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        bbox_transform=where,
        borderaxespad=0.0,
        fontsize=fontsize,
        frameon=False,
        **kw,
    )


_FAMILY = re.compile(r"[^\s\-]+")


def system_family(name: str | None) -> str:
    """The system a name belongs to: its first word up to the first hyphen ("advising-teacher ε=1" and
    "advising-laplace-reference ε=1" → "advising"; "flower-localdp (1, 1e-05)" → "flower"); "" for none."""
    m = _FAMILY.match(name or "")
    return m.group(0) if m else ""


def panels(items: list, key) -> list[tuple[str, list]]:
    """``items`` grouped by ``key(item)`` in order of first appearance: one (name, items) per panel."""
    out: dict[str, list] = {}
    for it in items:
        out.setdefault(key(it), []).append(it)
    return list(out.items())
