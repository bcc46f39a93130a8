"""The report's bar figures, built as matplotlib Figures (:mod:`reports.plots` saves them): the headline (the
largest certified ε lower bound of each summary row) and all audited bounds (one bar per audited output).
One panel per family of systems when the rows come from several, titled with the systems' whole names; every label
whole (wrapped at spaces and a long name after its separators, or a long pair named by a key letter under its
panel); the legend outside the bars."""

from __future__ import annotations

import math

import numpy as np

from .content import SUMMARY_MAX_ROWS, BoundRow
from .figure_kit import fit_titles, legend_below, new_figure, panels, system_family, wrap

BOUNDS_MAX_ROWS = 40  # bars per panel of the bounds figure; the rest are in the table above it
_VERDICT_COLOURS = {
    "consistent": "#2b8a3e",
    "violated": "#c92a2a",
    "unprotected channel": "#e67700",
    "inconclusive": "#1971c2",
}
_ROW_INCHES, _LINE_INCHES, _PANEL_INCHES = 0.3, 0.15, 0.75  # a bar row, a label line, a panel's title and axis
_TITLE_CHARS = 56  # a panel title's line: about the width of a headline panel's plot and labels at 8 points


def verdict_colour(verdict: str) -> str:
    if verdict.startswith("violated"):
        return _VERDICT_COLOURS["violated"]
    return _VERDICT_COLOURS.get(verdict, "#495057")


def verdict_legend(verdicts) -> list:
    """One legend patch per bar colour drawn, labelled with the verdicts drawn in it (every colour in the
    figure is in its legend, and nothing else)."""
    from matplotlib.patches import Patch

    by_colour: dict[str, list[str]] = {}
    for v in dict.fromkeys(verdicts):
        by_colour.setdefault(verdict_colour(v), []).append(v)
    order = ["consistent", "inconclusive", "unprotected channel", "violated"]

    def rank(item):
        return min((order.index(v) if v in order else len(order) for v in item[1]), default=len(order))

    return [Patch(color=colour, label=" / ".join(names)) for colour, names in sorted(by_colour.items(), key=rank)]


def drawable(values: list[float]) -> tuple[list[float], float]:
    """Bar lengths with infinite bounds drawn 15% beyond the largest finite value; that length."""
    finite = [v for v in values if math.isfinite(v)]
    far = 1.15 * max(finite, default=1.0) or 1.0
    return [v if math.isfinite(v) else far for v in values], far


def _lines(title: str, width: int) -> int:
    """The lines a title wrapped at ``width`` characters adds beyond its first (none without a title)."""
    return wrap(title, width).count("\n") if title else 0


def _rows_height(labels: list[str]) -> float:
    return sum(max(_ROW_INCHES, _LINE_INCHES * (label.count("\n") + 1) + 0.08) for label in labels)


def _ticks(ax, y, claims, caps, claim_label: str, cap_label: str, cap_colour: str) -> None:
    """The claim (black tick) and the certifiable cap (grey tick) of each bar row, where finite."""
    drawn = [(yy, c) for yy, c in zip(y, claims, strict=False) if c is not None and math.isfinite(c)]
    if drawn:
        ax.scatter(
            [c for _, c in drawn],
            [yy for yy, _ in drawn],
            marker="|",
            s=230,
            color="black",
            linewidths=2.5,
            label=claim_label,
            zorder=3,
        )
    drawn = [(yy, c) for yy, c in zip(y, caps, strict=False) if c is not None and math.isfinite(c)]
    if drawn:
        ax.scatter(
            [c for _, c in drawn],
            [yy for yy, _ in drawn],
            marker="|",
            s=180,
            color=cap_colour,
            linewidths=2,
            label=cap_label,
            zorder=2,
        )


def _bars(ax, labels: list[str], bounds: list[float], verdicts: list[str], fontsize: float) -> np.ndarray:
    """Horizontal bars top-down (∞ drawn past the largest finite bound and marked; a bound of 0, which has no
    bar, as a square of its verdict's colour at 0); the rows' y positions."""
    y = np.arange(len(labels))[::-1]
    bars, _ = drawable(bounds)
    ax.barh(y, bars, color=[verdict_colour(v) for v in verdicts], height=0.62)
    zero = [(yy, verdict_colour(v)) for yy, v, b in zip(y, verdicts, bounds, strict=False) if b == 0]
    if zero:
        ax.scatter(
            [0.0] * len(zero), [yy for yy, _ in zero], marker="s", s=40, c=[c for _, c in zero], zorder=3, clip_on=False
        )
    for yy, lb, b in zip(y, bounds, bars, strict=False):
        if not math.isfinite(lb):
            ax.text(b, yy, " ∞", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=fontsize)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    return y


def drawn_channel(row: dict) -> str:
    """`` (gradient×3)`` when the bar's row composes submissions and is not the family's own channel (its claim
    differs): the summary labels such a row by more than its family."""
    channel = str(row.get("worst_channel") or "")
    composed = row.get("channel_label", row["family"]) != row["family"]
    return f" ({channel})" if channel and channel != row["family"] and composed else ""


NO_SYSTEM = "PGC-A3C and mechanism audits"  # the panel of rows that name no System (pgc audit --run, --mechanism)


def panel_title(systems, note: str = "") -> str:
    """A panel's title: the whole names of the systems it draws (each once; :data:`NO_SYSTEM` for rows that name
    none), then ``note``."""
    names = "; ".join(dict.fromkeys(s or NO_SYSTEM for s in systems))
    return f"{names} {note}".strip()


def headline(summary: list[dict], system_of: dict[str, str] | None = None):
    """Per observer group and channel family: the largest certified ε lower bound (bar, coloured by verdict),
    the claim of the row that bound comes from (black tick; a k-submission row's own claim) and the certifiable
    cap (grey tick); one panel per family of systems (``system_of``: group → system name; the family:
    :func:`~reports.figure_kit.system_family`), titled with the whole names of its systems, each with at most
    :data:`~reports.content.SUMMARY_MAX_ROWS` rows like the summary table."""
    system_of = system_of or {}
    groups = panels(summary, lambda r: system_family(system_of.get(r["group"])))
    shown = [(rows[:SUMMARY_MAX_ROWS], len(rows) - SUMMARY_MAX_ROWS) for _, rows in groups]
    titles = [
        panel_title(
            [system_of.get(r["group"]) for r in rows],
            f"(first {len(rows)} of {len(rows) + more} rows)" if more > 0 else "",
        )
        if len(shown) > 1 or more > 0
        else ""
        for rows, more in shown
    ]
    labels = [[wrap(f"{r['group']} · {r['family']}{drawn_channel(r)}", 42) for r in rows] for rows, _ in shown]
    heights = [
        _rows_height(ls) + (0.45 if len(shown) > 1 else 0.25) + _LINE_INCHES * _lines(title, _TITLE_CHARS)
        for ls, title in zip(labels, titles, strict=True)
    ]
    fig, axes = new_figure(5.6, sum(heights) + 0.95, nrows=len(shown), gridspec_kw={"height_ratios": heights})
    for ax, (rows, _), ls, _ in zip(axes[:, 0], shown, labels, titles, strict=True):
        y = _bars(ax, ls, [r["lower_bound"] for r in rows], [r["verdict"] for r in rows], 8)
        _ticks(
            ax,
            y,
            [r.get("worst_claimed", r["claimed"]) for r in rows],
            [r["cap"] for r in rows],
            "claimed ε (of the row drawn)",
            "certifiable cap",
            "#868e96",
        )
    last = axes[-1, 0]
    last.set_xlabel("ε (audited lower bound: bar)", fontsize=8)
    handles = [h for ax in axes[:, 0] for h in ax.get_legend_handles_labels()[0]]
    handles = list({h.get_label(): h for h in handles}.values())
    handles += verdict_legend(r["verdict"] for rows, _ in shown for r in rows)
    legend_below(last, 0.42, handles=handles, ncol=2)
    fit_titles(fig, [(ax, title, 8) for ax, title in zip(axes[:, 0], titles, strict=True) if title], _TITLE_CHARS)
    return fig


def _bound_labels(rows: list[BoundRow]) -> tuple[list[str], str]:
    """Each bar's label, whole: a system's row is named by its system and channel with a key letter for the
    pair it was audited on (the key, returned, spells the pairs out); any other row by subject and channel."""
    keys: dict[str, str] = {}
    labels = []
    for r in rows:
        prefix = f"{r.system} · " if r.system else None
        if prefix and r.subject.startswith(prefix):
            pair = r.subject[len(prefix) :]
            key = keys.setdefault(pair, "abcdefghijklmnopqrstuvwxyz"[len(keys) % 26] * (1 + len(keys) // 26))
            labels.append(wrap(f"{r.system} · {r.channel} ({key})", 56))
        else:
            labels.append(wrap(f"{r.subject} · {r.channel}", 56))
    key_text = "; ".join(f"({k}) {pair}" for pair, k in keys.items())
    return labels, wrap("pairs: " + key_text, 84) if keys else ""


def bounds(rows: list[BoundRow]):
    """Per audited output: the observed ε lower bound (bar, colour = verdict), the claim (black tick) and the
    certifiable cap (grey tick); one panel per system, at most :data:`BOUNDS_MAX_ROWS` bars each."""
    groups = panels(rows, lambda r: system_family(r.system))
    shown = [(name, rs[:BOUNDS_MAX_ROWS], len(rs) - BOUNDS_MAX_ROWS) for name, rs in groups]
    labelled = [_bound_labels(rs) for _, rs, _ in shown]
    titles = [panel_title([r.system for r in rs]) if len(shown) > 1 else "" for _, rs, _ in shown]
    heights = [
        _rows_height(ls)
        + _PANEL_INCHES
        + _LINE_INCHES * (key.count("\n") + 1 if key else 0)
        + _LINE_INCHES * _lines(title, 84)
        for (ls, key), title in zip(labelled, titles, strict=True)
    ]
    fig, axes = new_figure(8.5, sum(heights) + 0.9, nrows=len(shown), gridspec_kw={"height_ratios": heights})
    for ax, (name, rs, more), (labels, key), _ in zip(axes[:, 0], shown, labelled, titles, strict=True):
        y = _bars(ax, labels, [r.lower_bound for r in rs], [r.verdict for r in rs], 7.5)
        _ticks(ax, y, [r.claimed for r in rs], [r.cap for r in rs], "claimed ε", "certifiable cap (budget)", "#adb5bd")
        note = (
            f"\n{more} further row(s) of {'these systems' if name else 'these audits'} are in the table above"
            if more > 0
            else ""
        )
        ax.set_xlabel("ε" + (f"\n{key}" if key else "") + note, fontsize=8, multialignment="left")
    handles = [h for ax in axes[:, 0] for h in ax.get_legend_handles_labels()[0]]
    handles = list({h.get_label(): h for h in handles}.values())
    handles += verdict_legend(r.verdict for _, rs, _ in shown for r in rs)
    fig.legend(
        handles=handles,
        loc="outside upper center",
        ncol=len(handles),
        fontsize=8,
        frameon=False,
        title="Claimed ε vs observed lower bound (bar colour = verdict)",
        title_fontsize=11,
    )
    fit_titles(fig, [(ax, title, 9) for ax, title in zip(axes[:, 0], titles, strict=True) if title], 84)
    return fig
