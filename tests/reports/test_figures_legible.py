"""Every figure a report draws is legible at its default size, checked on the real figures the report code
builds (:func:`reports.figure_kit.keep_figures`) for the report kinds the project makes: the main job's (a
small training run, the audits and attacks of the pipeline, the committed references), the thesis' four
systems (results/thesis), Flower's client audits (results/flower) and the other result kinds (tuning,
replication, federated-bandit regret). With matplotlib's own layout boxes, for every figure:

1. no text (tick labels, axis labels, titles, legend entries, annotations) reaches outside the figure canvas;
2. no legend lies over plotted data (line points and the segments between them, scatter markers, bars and
   shaded boxes, error bars, bands, data labels) of any axes;
3. no two texts overlap (tick labels of one axis, a legend and a label beside it, two data labels).

Beside them: labels are whole (the headline names every summary row's observer and channel, the bounds
figure every row's subject and channel), and a report that holds several systems draws one panel per system.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from matplotlib.cbook import STEP_LOOKUP_MAP
from matplotlib.collections import PolyCollection
from matplotlib.path import Path as MplPath
from matplotlib.text import Text

from reports import build_report
from reports.figure_kit import keep_figures, new_figure

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
TOL = 1.0  # pixels: boxes that share an edge or overlap by less do not collide
# the pipeline's own results (copied: the run's own) and the committed references it adds
MAIN_OWN = (
    "audit/env-laplace-run.json",
    "audit/adversarial/laplace-eps4.json",
    "attack/run_paper_laplace_eps1.json",
    "attack/paper_setting.json",
)
MAIN_REFERENCES = (
    "audit/adversarial/curve.json",
    "audit/adversarial/laplace-eps1.json",
    "audit/adversarial/prs-eps1.json",
    "attack/active/laplace-eps1-5-10-15.json",
    "attack/active/paper-psi-score.json",
)
FLOWER = ("digits-replaced.json", "digits-removed.json", "localdp-update-level.json", "localdp-sensitivity-c.json")


def _train_run(folder: Path) -> Path:
    """A small `pgc train` run: two private and two non-private trials (learning curves, success ratio)."""
    from pgc.a3c.rundir import save_run
    from pgc.a3c.trainer import TrainConfig, train_batch

    configs = [TrainConfig(mechanism="laplace", epsilon=1.0, submissions=300, seed=s) for s in range(2)]
    configs += [TrainConfig(mechanism="none", epsilon=math.inf, submissions=300, seed=s) for s in range(2)]
    save_run(train_batch(configs), folder / "train", wall_time=0.0)
    return folder / "train"


def _inputs(kind: str, folder: Path) -> list[Path]:
    if kind == "main job":
        for rel in MAIN_OWN:
            shutil.copy(RESULTS / rel, folder / Path(rel).name)
        return [_train_run(folder), *(folder / Path(r).name for r in MAIN_OWN), *(RESULTS / r for r in MAIN_REFERENCES)]
    if kind == "thesis":
        return sorted((RESULTS / "thesis").glob("*.json"))
    if kind == "flower":
        return [RESULTS / "flower" / name for name in FLOWER]
    shutil.copy(RESULTS / "fedlinucb/regret.json", folder / "regret.json")  # without its PNG: the report draws it
    return [RESULTS / "tune/tune.json", RESULTS / "replicate/sampled/replicate.json", folder / "regret.json"]


KINDS = ("main job", "thesis", "flower", "other kinds")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Per report kind: its report.json and {figure file name: the open Figure the report saved}."""
    out = {}
    with keep_figures() as kept:
        for kind in KINDS:
            folder = tmp_path_factory.mktemp(kind.replace(" ", "-"))
            start = len(kept)
            build_report(_inputs(kind, folder), folder / "report")
            files = {p.read_bytes(): p.name for p in (folder / "report" / "figures").glob("*.png")}
            figures = {files[data]: fig for fig, data in kept[start:] if data in files}
            for fig in figures.values():
                fig.canvas.draw()
            out[kind] = (json.loads((folder / "report" / "report.json").read_text()), figures)
        yield out


# ---------------------------------------------------------------------------------------------------------
# the checks, on one figure


def _in_view(ax, axis, loc) -> bool:
    """A tick at ``loc`` is drawn: it lies within the axes' span on screen."""
    if loc is None or not np.isfinite(loc):
        return False
    if axis is ax.xaxis:
        x = ax.transData.transform((loc, ax.get_ylim()[0]))[0]
        return ax.bbox.x0 - TOL <= x <= ax.bbox.x1 + TOL
    y = ax.transData.transform((ax.get_xlim()[0], loc))[1]
    return ax.bbox.y0 - TOL <= y <= ax.bbox.y1 + TOL


def drawn_texts(fig) -> list[Text]:
    """Every text the figure draws: visible, not empty, tick labels only of ticks within view."""
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not _in_view(ax, axis, tick.get_loc()):
                    hidden.update((id(tick.label1), id(tick.label2)))
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and id(t) not in hidden and t.figure is fig
    ]


def _name(t: Text) -> str:
    return repr(t.get_text().replace("\n", " ")[:60])


def texts_outside_canvas(fig) -> list[str]:
    """Check 1: texts whose box reaches outside the figure canvas."""
    r, canvas = fig.canvas.get_renderer(), fig.bbox
    out = []
    for t in drawn_texts(fig):
        b = t.get_window_extent(r)
        if b.x0 < canvas.x0 - TOL or b.y0 < canvas.y0 - TOL or b.x1 > canvas.x1 + TOL or b.y1 > canvas.y1 + TOL:
            out.append(
                f"{_name(t)} reaches outside the canvas ({b.x0:.0f}, {b.y0:.0f}, {b.x1:.0f}, {b.y1:.0f} "
                f"vs {canvas.width:.0f}×{canvas.height:.0f})"
            )
    return out


def _dense(points: np.ndarray, step: float = 2.0) -> np.ndarray:
    """A polyline's vertices with points every ``step`` pixels between them (a legend over a segment hides it)."""
    points = points[np.isfinite(points).all(axis=1)]
    if len(points) < 2:
        return points
    out = [points[:1]]
    for a, b in zip(points[:-1], points[1:], strict=True):
        n = int(min(2000, np.hypot(*(b - a)) // step)) + 1
        out.append(a + (b - a) * np.linspace(0, 1, n + 1)[1:, None])
    return np.concatenate(out)


def _line_points(line) -> np.ndarray:
    xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
    if line.get_drawstyle() not in (None, "default") and len(xy) > 1:
        xy = np.column_stack(STEP_LOOKUP_MAP[line.get_drawstyle()](*xy.T))
    return _dense(xy) if line.get_linestyle() not in ("None", "none", "", " ") else xy


def plotted_data(ax, renderer):
    """What an axes plots, on screen: points (N×2), boxes [(x0, y0, x1, y1)] and filled polygons."""
    points, boxes, polygons = [np.empty((0, 2))], [], []
    for line in ax.lines:
        if line.get_visible() and len(line.get_xydata()):
            points.append(_line_points(line))
            if line.get_marker() not in (None, "None", "none", ""):
                half = line.get_markersize() * ax.figure.dpi / 72 / 2
                xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
                boxes += [(x - half, y - half, x + half, y + half) for x, y in xy if np.isfinite([x, y]).all()]
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        offsets = np.asarray(coll.get_offsets(), float)
        sizes = coll.get_sizes() if hasattr(coll, "get_sizes") else []
        if len(offsets) and len(sizes):
            xy = coll.get_offset_transform().transform(offsets)
            sizes = np.broadcast_to(sizes, (len(xy),))
            half = np.sqrt(sizes) * ax.figure.dpi / 72 / 2
            boxes += [(x - h, y - h, x + h, y + h) for (x, y), h in zip(xy, half, strict=True)]
            continue
        for path in coll.get_paths():
            verts = coll.get_transform().transform(path.vertices)
            points.append(_dense(verts))
            if isinstance(coll, PolyCollection):
                polygons.append(MplPath(verts))
    for patch in ax.patches:
        if patch.get_visible():
            b = patch.get_window_extent(renderer)
            boxes.append((b.x0, b.y0, b.x1, b.y1))
    for t in ax.texts:
        if t.get_visible() and t.get_text().strip():
            b = t.get_window_extent(renderer)
            boxes.append((b.x0, b.y0, b.x1, b.y1))
    pts = np.concatenate(points)
    a = ax.bbox  # what lies outside the axes is clipped, not drawn
    pts = pts[(pts[:, 0] >= a.x0) & (pts[:, 0] <= a.x1) & (pts[:, 1] >= a.y0) & (pts[:, 1] <= a.y1)]
    boxes = [(max(x0, a.x0), max(y0, a.y0), min(x1, a.x1), min(y1, a.y1)) for x0, y0, x1, y1 in boxes]
    return pts, [b for b in boxes if b[2] > b[0] and b[3] > b[1]], polygons


def _overlap(a, b) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > TOL and min(a[3], b[3]) - max(a[1], b[1]) > TOL


def legends(fig) -> list:
    return [lg for lg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)] if lg is not None and lg.get_visible()]


def legends_over_data(fig) -> list[str]:
    """Check 2: legends whose box covers plotted data of any axes."""
    r = fig.canvas.get_renderer()
    out = []
    for lg in legends(fig):
        b = lg.get_window_extent(r)
        box = (b.x0, b.y0, b.x1, b.y1)
        inner = (b.x0 + TOL, b.y0 + TOL, b.x1 - TOL, b.y1 - TOL)
        for i, ax in enumerate(fig.axes):
            pts, boxes, polygons = plotted_data(ax, r)
            hit = (pts[:, 0] > inner[0]) & (pts[:, 0] < inner[2]) & (pts[:, 1] > inner[1]) & (pts[:, 1] < inner[3])
            probes = [(b.x0, b.y0), (b.x1, b.y1), (b.x0, b.y1), (b.x1, b.y0), ((b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2)]
            if (
                hit.any()
                or any(_overlap(box, d) for d in boxes)
                or any(p.contains_points(probes).any() for p in polygons)
            ):
                entries = ", ".join(_name(t) for t in lg.get_texts()[:2])
                out.append(f"legend [{entries}, …] lies over the data of axes {i} ({int(hit.sum())} points)")
    return out


def overlapping_texts(fig) -> list[str]:
    """Check 3: two texts that overlap: tick labels of one axis, labels, titles, data labels, and a legend
    over any text outside it."""
    r = fig.canvas.get_renderer()
    own = {id(t): i for i, lg in enumerate(legends(fig)) for t in [*lg.get_texts(), lg.get_title()]}
    items = [(_name(t), t.get_window_extent(r)) for t in drawn_texts(fig) if id(t) not in own]
    items += [(f"legend {i}", lg.get_window_extent(r)) for i, lg in enumerate(legends(fig))]
    out = []
    for (na, a), (nb, b) in combinations(items, 2):
        if _overlap((a.x0, a.y0, a.x1, a.y1), (b.x0, b.y0, b.x1, b.y1)):
            out.append(f"{na} overlaps {nb}")
    return out


CHECKS = {
    "text outside the canvas": texts_outside_canvas,
    "legend over data": legends_over_data,
    "overlapping texts": overlapping_texts,
}


# ---------------------------------------------------------------------------------------------------------
# the tests


def test_the_checks_catch_an_illegible_figure():
    """Each check finds its fault in a figure built to have it, and passes a figure that is laid out well."""
    import matplotlib.pyplot as plt

    fig, axes = new_figure(3, 2)
    ax = axes[0, 0]
    ax.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50), label="data")
    ax.legend(loc="center")  # over the line
    ax.set_yticks([0.5, 0.52])
    ax.set_yticklabels(["one tick label", "its neighbour"])  # 2 % of the height apart
    fig.text(0.9, 0.5, "a label that runs off the right edge")
    fig.canvas.draw()
    assert texts_outside_canvas(fig) and legends_over_data(fig) and overlapping_texts(fig)
    fig2, axes2 = new_figure(4, 2.5)
    ax2 = axes2[0, 0]
    ax2.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50), label="data")
    ax2.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig2.canvas.draw()
    assert not texts_outside_canvas(fig2) and not legends_over_data(fig2) and not overlapping_texts(fig2)
    plt.close(fig)
    plt.close(fig2)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("check", list(CHECKS))
def test_every_figure_passes(reports, kind, check):
    _, figures = reports[kind]
    assert figures, f"the {kind} report drew no figure"
    problems = {name: CHECKS[check](fig) for name, fig in sorted(figures.items())}
    problems = {name: p for name, p in problems.items() if p}
    assert not problems, f"{kind} report, {check}:\n" + "\n".join(
        f"  {name}: {len(p)} problem(s), e.g. " + "; ".join(p[:3]) for name, p in problems.items()
    )


def test_every_figure_kind_is_checked(reports):
    drawn = {name for _, figures in reports.values() for name in figures}
    for name in (
        "headline.png",
        "bounds.png",
        "composition.png",
        "attack.png",
        "adversarial_curve.png",
        "learning_curves.png",
        "success_ratio.png",
        "tradeoff_curves.png",
        "pareto_tune.png",
        "replicate_figure3.png",
        "replicate_figure2.png",
        "bandit_regret_regret.png",
        "bandit_cost_regret.png",
    ):
        assert name in drawn or any(n.endswith(name) for n in drawn), (name, sorted(drawn))


def _joined(fig) -> str:
    return " | ".join(" ".join(t.get_text().split()) for t in drawn_texts(fig))


def test_the_headline_names_each_row_whole_with_one_panel_per_system(reports):
    for kind in ("main job", "thesis", "flower"):
        summary, figures = reports[kind]
        fig = figures["headline.png"]
        shown = [
            " ".join(t.get_text().split())
            for ax in fig.axes
            for t in ax.get_yticklabels()
            if _in_view(ax, ax.yaxis, t.get_position()[1])
        ]
        whole = {f"{r['group']} · {r['family']}" for r in summary["summary"]}
        whole |= {f"{r['group']} · {r['family']} ({r['worst_channel']})" for r in summary["summary"]}
        assert shown and set(shown) <= whole, sorted(set(shown) - whole)
    systems = {b["system"].split("-")[0] for b in reports["thesis"][0]["bounds"]}
    assert systems == {"advising", "dpdrl", "oneparam", "planning"}
    for name in ("headline.png", "bounds.png"):
        titles = [ax.get_title() for ax in reports["thesis"][1][name].axes]
        assert len(titles) == 4 and all(any(s in t for t in titles) for s in systems), (name, titles)


def test_the_bounds_figure_names_each_row_whole(reports):
    """Each row of the report's bounds is a bar of a bounds figure (its own, or the references'), named by its
    channel and its subject whole (or its system, with the pair spelt out in the panel's key); a panel that
    stops short says how many rows it leaves to the table."""
    for kind in ("main job", "thesis", "flower"):
        summary, figures = reports[kind]
        shown = [fig for name, fig in figures.items() if name.endswith("bounds.png")]
        text = " | ".join(_joined(fig) for fig in shown)
        bars = sum(len(ax.patches) for fig in shown for ax in fig.axes)
        left = sum(int(n) for n in re.findall(r"(\d+) further row\(s\)", text))
        assert bars + left == len(summary["bounds"]), (kind, bars, left, len(summary["bounds"]))
        named = 0
        for b in summary["bounds"]:
            system = b.get("system")
            pair = b["subject"][len(system) + 3 :] if system and b["subject"].startswith(system + " · ") else None
            keyed = bool(system and pair and system in text and pair in text)
            named += b["channel"] in text and (b["subject"] in text or keyed)
        assert named + left >= len(summary["bounds"]), (kind, named, left, len(summary["bounds"]))


def test_the_tradeoff_figure_draws_one_panel_per_system(reports):
    summary, figures = reports["flower"]
    systems = {h["system"] for h in summary["system_audits"] if h.get("curves")}
    axes = figures["tradeoff_curves.png"].axes
    assert len(systems) == 3 and sorted(" ".join(ax.get_title().split()) for ax in axes) == sorted(systems)
