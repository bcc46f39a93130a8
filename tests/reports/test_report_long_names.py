"""A report stays legible whatever its systems are called: with an 80-character system name (no space in it), in
headless Chromium at 1280 and 1920 pixels wide, the page never scrolls sideways, every table cell holds its text
(long names wrap, nothing is clipped), the summary table and the headline figure lie side by side without
overlapping, the figures' panel titles and bar labels name each system whole, and the library table shows the
parameters the library ran with. Its summary rows name their composition ("score ×3"), and its verdict card
names only channels whose verdict is violated or unprotected channel, each under its own verdict.

One report is built and measured once for the module (one Chromium run for both widths)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from result_fixtures import audit_file, system_audit_fixture

from reports import build_report
from reports.assemble import build_content
from reports.browser import chromium_path, fit
from reports.content import summary_rows
from reports.figure_kit import keep_figures
from reports.loaders import load_sources

ROOT = Path(__file__).resolve().parents[2]
LONG = "acme-federated-learning/secure-aggregation-with-local-differential-privacy:v2.31"
LIBRARY = "acme-federated-learning/secure-aggregation-with-local-differential-privacy:GRR"
WIDTHS = (1280, 1920)
FIRST = [".verdict-card", ".first table", ".first figure img"]


def _pgc_audit() -> dict:
    """A PGC-A3C channel audit as the README's quick start prints it: the score over three submissions exceeds
    the claim (violated), the score and the arrival time alone leak below it (unprotected channel)."""

    def row(channel, lb, verdict, covered, p):
        return {
            "scope": "environment 5 vs 15",
            "channel": channel,
            "claimed_epsilon": 1.0,
            "epsilon_lower_bound": lb,
            "confidence": 0.95,
            "samples_per_side": 20_000,
            "max_certifiable_epsilon": 8.6,
            "verdict": verdict,
            "covered": covered,
            "p_value": 1.0 if covered else None,
            "p_value_leak": None if covered else p,
        }

    return {
        **audit_file("run-audit", []),
        "confidence": 0.95,
        "channels": [
            row("gradient", 0.0, "inconclusive", True, None),
            row("score", 0.574, "unprotected channel", False, 1e-6),
            row("arrival", 0.574, "unprotected channel", False, 1e-6),
            row("score×3", 1.26, "violated", False, 1e-9),
        ],
    }


@pytest.fixture(scope="module")
def long_report(tmp_path_factory):
    """The report of a System with an 80-character name, a library audit of the same family and a PGC-A3C channel
    audit: its folder, report.json, and the figures it drew ({file name: open Figure})."""
    assert len(LONG) == 80 and " " not in LONG
    folder = tmp_path_factory.mktemp("long-names")
    system = system_audit_fixture()
    system["system"] = LONG
    library = json.loads((ROOT / "results/ldp/mfl-olh.json").read_text())
    library["system"] = LIBRARY
    library["library"].update(protocol="GRR", parameters={"k": 25, "epsilon": 1.0})  # (k, ε) and nothing else
    inputs = {"system.json": system, "library.json": library, "pgc.json": _pgc_audit()}
    for name, data in inputs.items():
        (folder / name).write_text(json.dumps(data))
    with keep_figures() as kept:
        build_report([folder / name for name in inputs], folder / "report")
        files = {p.read_bytes(): p.name for p in (folder / "report" / "figures").glob("*.png")}
        figures = {files[data]: fig for fig, data in kept if data in files}
        for fig in figures.values():
            fig.canvas.draw()
        yield folder / "report", json.loads((folder / "report" / "report.json").read_text()), figures


@pytest.fixture(scope="module")
def measured(long_report):
    assert chromium_path() is not None, "chromium must be installed"
    return fit(long_report[0] / "report.html", WIDTHS, FIRST)


def _overlap(a: dict, b: dict) -> bool:
    return min(a["right"], b["right"]) > max(a["left"], b["left"]) and min(a["bottom"], b["bottom"]) > max(
        a["top"], b["top"]
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_fits_its_window_and_every_cell_holds_its_text(measured, width):
    at = measured[str(width)]
    assert at["viewport"][0] == width
    assert at["page"]["scroll_width"] <= at["page"]["client_width"], at["page"]  # no sideways scroll
    assert at["cells"] > 50  # every section's tables, the folded ones opened
    assert at["overflowing_cells"] == [] and at["overflowing_tables"] == []
    boxes = at["elements"]
    assert all(boxes[sel] is not None and boxes[sel]["width"] > 100 for sel in FIRST), boxes
    table, figure = boxes[".first table"], boxes[".first figure img"]
    assert not _overlap(table, figure), (table, figure)
    assert table["right"] <= figure["left"] and figure["right"] <= width and table["left"] >= 0


def test_the_checks_catch_a_table_that_runs_under_the_figure(long_report, tmp_path):
    """The same report with its long names kept on one line (no break in a name, the observer column unwrapped) and
    the folded sections' tables cut to fixed columns: the fit probe finds the summary table wider than its half of
    the page, over the figure, and cells that clip their text."""
    page = (long_report[0] / "report.html").read_text().replace("<wbr>", "")
    page = page.replace(
        "</head>",
        "<style>main{overflow-wrap:normal}.first td:first-child{white-space:nowrap}"
        "details table{table-layout:fixed}details td{white-space:nowrap;overflow:hidden}"
        "</style></head>",
        1,
    )
    (tmp_path / "bad.html").write_text(page)
    at = fit(tmp_path / "bad.html", (1280,), FIRST)["1280"]
    assert at["overflowing_tables"] and at["overflowing_cells"]
    assert _overlap(at["elements"][".first table"], at["elements"][".first figure img"])


def _whole(text: str) -> str:
    return re.sub(r"\s", "", text)


def test_panel_titles_and_bar_labels_name_each_system_whole(long_report):
    _, _, figures = long_report
    for name in ("headline.png", "bounds.png"):
        fig = figures[name]
        titles = [_whole(ax.get_title()) for ax in fig.axes if ax.get_title()]
        assert any(_whole(LONG) in t and _whole(LIBRARY) in t for t in titles), (name, titles)
        labels = [_whole(t.get_text()) for ax in fig.axes for t in ax.get_yticklabels()]
        assert sum(_whole(LONG) in label for label in labels) >= 3, (name, labels)
        renderer, canvas = fig.canvas.get_renderer(), fig.bbox
        for ax in fig.axes:  # titles and labels wrapped inside the figure, none cut by its edge
            for text in [ax.title, *ax.get_yticklabels()]:
                box = text.get_window_extent(renderer)
                assert canvas.x0 - 1 <= box.x0 and box.x1 <= canvas.x1 + 1, (name, text.get_text())
                assert max(len(line) for line in text.get_text().split("\n")) <= 84, (name, text.get_text())


def test_the_library_table_shows_the_parameters_the_library_ran_with(long_report):
    md = (long_report[0] / "report.md").read_text()
    library = md.split("## Library audits")[1]
    assert "| GRR | k=25, epsilon=1 |" in library


def test_summary_rows_name_their_composition(long_report):
    folder, summary, _ = long_report
    score = next(r for r in summary["summary"] if r["group"] == "honest aggregator" and r["family"] == "score")
    assert score["worst_channel"] == "score×3" and score["channel_label"] == "score ×3"
    assert "| honest aggregator | score ×3 | 1 | 1.26 |" in (folder / "report.md").read_text()
    page = (folder / "report.html").read_text()
    assert "<td>score&nbsp;×3</td>" in page.split("<div class='first'>")[1].split("</table>")[0]
    # the committed channel audit behind the quick start: its score row is the three-submission one
    rows = summary_rows(build_content(load_sources([ROOT / "results/audit/env-laplace-run.json"])).own)
    assert [r["channel_label"] for r in rows if r["group"] == "honest aggregator"] == [
        "gradient",
        "score ×3",
        "timing",
        "all",
    ]


def test_the_verdict_card_names_each_channel_under_its_own_verdict(long_report):
    folder, summary, _ = long_report
    verdict = summary["verdict"]
    card = html.unescape(
        re.search(
            r"<div class='verdict-card[^']*'><b>Verdict:</b> (.*?)<small>", (folder / "report.html").read_text()
        ).group(1)
    )
    assert card == verdict and verdict.startswith("CLAIM EXCEEDED THROUGH SIDE CHANNELS")
    exceeded = re.search(r"\(violated: ([^;)]*)", verdict).group(1).split(", ")
    leaking = re.search(r"\(unprotected channel: ([^)]*)\)", verdict).group(1).split(", ")
    assert sorted(exceeded) == ["all", "score ×3"] and sorted(leaking) == ["score", "timing"], verdict
    kept = [b for b in summary["bounds"] if b["holm_significant"]]
    for b in kept:  # what the card says exceeds the claim does: a kept violated row certifies more than it
        if b["verdict"] == "violated":
            assert b["lower_bound"] > b["claimed"], b
    timing = next(r for r in summary["summary"] if r["group"] == "honest aggregator" and r["family"] == "timing")
    assert timing["verdict"] == "unprotected channel" and timing["lower_bound"] < timing["claimed"]
    assert "timing" not in exceeded and "the score, the timing" not in verdict
