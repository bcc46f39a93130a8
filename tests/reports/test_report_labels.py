"""What a report says about each row is what the audit recorded: the observer, the θ file a row was
certified at, a legend entry for every bar colour, each bar's own claim."""

from __future__ import annotations

import json

import numpy as np
import pytest
from result_fixtures import audit_file

from pgc.schemas import AuditRow
from reports import build_report, load_sources, plots
from reports.content import BoundRow, summary_rows
from reports.sections.adversarial import adversarial_from_audit
from reports.sections.bounds import bounds_from_audit


def _one_run(tmp_path, model: str):
    row = {
        "scope": f"one-run {model} 5 vs 15",
        "channel": "gradient",
        "claimed_epsilon": 1.0,
        "audit": "one-run",
        "epsilon_lower_bound": 0.4,
        "verdict": "consistent",
        "covered": True,
        "confidence": 0.95,
    }
    path = tmp_path / f"{model}.json"
    path.write_text(
        json.dumps(
            audit_file("one-run-audit", [row], run="runs/c")
            | {"canary_setup": {**audit_file("one-run-audit", [])["canary_setup"], "canary_model": model}}
        )
    )
    return load_sources([path])[0]


def test_a_one_run_audit_names_the_observer_its_canaries_played_for(tmp_path):
    (crafted,) = bounds_from_audit(_one_run(tmp_path, "crafted"))
    (live,) = bounds_from_audit(_one_run(tmp_path, "live"))
    assert crafted.group == "adversarial aggregator (one run)" and "crafted" in crafted.subject
    assert live.group == "honest aggregator (one run)"


def test_each_adversarial_row_names_the_theta_it_was_certified_at(tmp_path):
    audit = {
        "psi": 5.0,
        "psi_prime": 15.0,
        "mechanism": "laplace",
        "search": {"objective": "gradient"},
        "theta_files": {"gradient": "a-theta-5-15-gradient.pt", "score": "a-theta-5-15-score.pt"},
        "theta_file": "a-theta-5-15-gradient.pt",
        "channels": [
            {"channel": c, "epsilon_lower_bound": 0.5, "crafted_for": o, "verdict": "consistent"}
            for c, o in (("gradient", "gradient"), ("score", "score"), ("all", "gradient"))
        ],
    }
    path = tmp_path / "a.json"
    path.write_text(json.dumps(audit_file("adversarial-audit", [], adversarial_audits=[audit])))
    rows = adversarial_from_audit(load_sources([path])[0]).audits
    assert [(r.channel, r.objective, r.theta_file) for r in rows] == [
        ("gradient", "gradient", "a-theta-5-15-gradient.pt"),
        ("score", "score", "a-theta-5-15-score.pt"),
        ("all", "gradient", "a-theta-5-15-gradient.pt"),
    ]
    build_report([path], tmp_path / "r")
    assert "a-theta-5-15-score.pt" in (tmp_path / "r" / "report.md").read_text()


def _row(channel, claimed, lb, verdict, k=None):
    row = AuditRow.make(
        channel,
        claimed_epsilon=claimed,
        epsilon_lower_bound=lb,
        confidence=0.95,
        max_certifiable_epsilon=8.0,
        samples_per_side=1000,
        claimed_delta=0.0,
        verdict=verdict,
    )
    return BoundRow(source="s", subject="m", row=row, k=k, group="honest aggregator")


def test_the_headline_draws_each_bar_against_its_own_claim_with_every_colour_in_the_legend(monkeypatch):
    rows = [
        _row("gradient", 5.0, 0.0, "consistent"),
        _row("gradient×3", 15.0, 6.0, "inconclusive", k=3),
        _row("score", 5.0, 1.2, "unprotected channel"),
        _row("timing", 5.0, 6.5, "violated"),
    ]
    summary = summary_rows(type("F", (), {"bounds": rows, "family": {}})())
    gradient = next(r for r in summary if r["family"] == "gradient")
    assert (
        gradient["claimed"] == 5.0 and gradient["worst_channel"] == "gradient×3" and gradient["worst_claimed"] == 15.0
    )
    monkeypatch.setattr(plots, "_png", lambda fig: fig)
    fig = plots.headline_figure(summary)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert set(labels) - {"claimed ε (of the row drawn)", "certifiable cap"} == {r["verdict"] for r in summary}
    assert "inconclusive" in labels
    bar_colours = {tuple(np.round(p.get_facecolor(), 3)) for p in ax.patches}
    legend_colours = {
        tuple(np.round(h.get_facecolor(), 3)) for h in ax.get_legend().legend_handles if type(h).__name__ == "Rectangle"
    }
    assert bar_colours <= legend_colours  # every bar colour drawn is explained
    claim_ticks = next(c.get_offsets() for c in ax.collections if c.get_label().startswith("claimed ε"))
    ys = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    tick_at = {y: x for x, y in claim_ticks}
    assert tick_at[ys["honest aggregator · gradient (gradient×3)"]] == 15.0  # the gradient×3 bar, its claim
    assert tick_at[ys["honest aggregator · score"]] == 5.0


def test_the_summary_groups_a_row_by_the_kind_its_producer_recorded_not_by_its_label():
    """A System's channel named "noise×2" that its producer recorded as two score submissions is grouped and
    labelled as a score row composing 2; a channel whose name holds "gradient" but that was recorded as timing is
    a timing row. The label's words are read only for rows that record no kind."""
    from pgc.schemas import ChannelFamily

    scored = _row("noise×2", 5.0, 0.4, "consistent", k=2)
    scored.row = scored.row.updated(channel_family=ChannelFamily.SCORE, composition=2, base_channel="noise")
    timed = _row("gradient-arrival", 5.0, 0.1, "consistent")
    timed.row = timed.row.updated(channel_family=ChannelFamily.TIMING, composition=1, base_channel="gradient-arrival")
    summary = summary_rows(type("F", (), {"bounds": [scored, timed], "family": {}})())
    assert {r["family"]: r["channel_label"] for r in summary} == {"score": "score (noise×2)", "timing": "timing"}
    unrecorded = _row("gradient×3", 15.0, 6.0, "inconclusive", k=3)
    assert (unrecorded.kind.family.value, unrecorded.kind.k, unrecorded.kind.base) == ("gradient", 3, "gradient")


def test_a_bound_rows_kind_is_read_once_per_row(monkeypatch):
    """BoundRow.kind reads the row's kind once and again only when the row is replaced; a row recording all three
    kind fields is not parsed from its label."""
    import pgc.schemas.channels as channels
    from pgc.schemas import ChannelFamily
    from reports import content

    calls = []
    monkeypatch.setattr(content, "channel_kind", lambda row: calls.append(row) or channels.channel_kind(row))
    bound = _row("gradient×3", 15.0, 6.0, "inconclusive", k=3)
    assert bound.kind is bound.kind and bound.kind.k == 3 and len(calls) == 1
    bound.row = bound.row.updated(channel_family=ChannelFamily.SCORE, composition=2, base_channel="noise")
    monkeypatch.setattr(channels, "kind_from_label", lambda label: pytest.fail(f"parsed {label!r}"))
    assert (bound.kind.family, bound.kind.k, bound.kind.base) == (ChannelFamily.SCORE, 2, "noise") and len(calls) == 2
