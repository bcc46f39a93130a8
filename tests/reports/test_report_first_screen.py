"""The report reads in a minute: verdict, summary table and headline figure on the first screen of a
1300×900 window (headless Chromium), everything else folded; the run's own results and committed
references never share a verdict or a warning; the coming result kinds render from small fixtures."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from result_fixtures import audit_file, bandit_attack_fixture, bandit_regret_fixture, system_audit_fixture

import reports.loaders
from reports import build_report
from reports.browser import chromium_path, layout

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "results" / "report"
FIRST_SCREEN = [".verdict-card", ".first table", ".first figure img"]


def _on_first_screen(html: Path) -> None:
    assert chromium_path() is not None, "chromium must be installed"
    found = layout(html, FIRST_SCREEN + ["details"], width=1300, height=900)
    height = found["viewport"][1]
    for sel in FIRST_SCREEN:
        box = found["elements"][sel]
        assert box is not None, sel
        assert box["top"] >= 0 and box["bottom"] <= height and box["height"] > 40, (sel, box)
        assert box["right"] <= found["viewport"][0], (sel, box)


@pytest.fixture(scope="module")
def main_job_like(tmp_path_factory) -> Path:
    """The main job's kinds of input: the run's own audits and attack (copies, so they are the run's),
    one committed reference, as the pipeline gives them."""
    own = tmp_path_factory.mktemp("own")
    for rel in (
        "audit/env-laplace-run.json",
        "audit/adversarial/laplace-eps4.json",
        "attack/run_paper_laplace_eps1.json",
    ):
        shutil.copy(ROOT / "results" / rel, own / Path(rel).name)
    out = tmp_path_factory.mktemp("report")
    build_report([*sorted(own.glob("*.json")), ROOT / "results/audit/adversarial/curve.json"], out)
    return out


def test_first_screen_of_a_fresh_report(main_job_like):
    summary = json.loads((main_job_like / "report.json").read_text())
    assert 1 <= len(summary["summary"]) <= 15
    assert [i["reference"] for i in summary["inputs"]] == [False, False, False, True]
    _on_first_screen(main_job_like / "report.html")
    page = (main_job_like / "report.html").read_text()
    body = page.split("</div></div>", 1)[1]  # after the first screen: only folded sections
    assert re.fullmatch(r"(\s*<details .*?</details>)+\s*</main></body></html>\s*", body, re.S) is not None
    for m in re.finditer(r'<details id="[^"]+"[^>]*><summary>[^<]+</summary><p class="lead">([^<]+)</p>', page):
        assert m.group(1).endswith(".") and m.group(1).count(". ") == 0  # one sentence opens each section


def test_committed_example_report_and_screenshots():
    summary = json.loads((EXAMPLE / "report.json").read_text())
    assert summary["kind"] == "report" and len(summary["summary"]) <= 15
    _on_first_screen(EXAMPLE / "report.html")
    for name in ("screenshot.png", "screenshot-warnings.png"):
        assert (EXAMPLE / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    own_eps = {b["claimed"] for b in summary["bounds"] if not b["reference"] and b["claimed"] is not None}
    for w in summary["warnings"]:  # an ε named in the run's warnings is one of the run's own claims
        for eps in re.findall(r"claimed ε = ([0-9.]+)", w["text"]):
            assert float(eps) in own_eps, w["text"]


def _audit(eps: float, lb: float, verdict: str, p: float) -> dict:
    return {
        **audit_file("run-audit", []),
        "confidence": 0.95,
        "channels": [
            {
                "scope": "environment 5 vs 15",
                "channel": ch,
                "claimed_epsilon": eps,
                "epsilon_lower_bound": lb,
                "confidence": 0.95,
                "samples_per_side": 10_000,
                "max_certifiable_epsilon": 8.0,
                "verdict": verdict,
                "p_value": p,
            }
            for ch in ("gradient", "gradient×3")
        ],
    }


def test_references_never_share_the_run_verdict_or_warnings(tmp_path, monkeypatch):
    ref_dir = tmp_path / "committed"
    ref_dir.mkdir()
    monkeypatch.setattr(reports.loaders, "COMMITTED_RESULTS", ref_dir.resolve())
    own, ref = tmp_path / "own.json", ref_dir / "eps1.json"
    own.write_text(json.dumps(_audit(5.0, 0.4, "consistent", 1.0)))
    ref.write_text(json.dumps(_audit(1.0, 3.1, "violated", 1e-12)))
    (ref_dir / "eps4.json").write_text(json.dumps(_audit(4.0, 3.9, "consistent", 0.6)))
    build_report([own, ref, ref_dir / "eps4.json"], tmp_path / "r")
    summary = json.loads((tmp_path / "r" / "report.json").read_text())
    md = (tmp_path / "r" / "report.md").read_text()
    assert summary["verdict"].startswith("CONSISTENT")
    assert summary["references"]["verdict"].startswith("VIOLATED")
    assert all("ε = 1" not in w["text"] and "3.1" not in w["text"] for w in summary["warnings"])
    assert any("3.1" in w["text"] for w in summary["references"]["warnings"])
    assert [r["claimed"] for r in summary["summary"]] == [5.0]
    # references audited at different claims are summarised in separate rows, never against one claim
    assert [(r["claimed"], r["lower_bound"], r["verdict"]) for r in summary["references"]["summary"]] == [
        (1.0, 3.1, "violated"),
        (4.0, 3.9, "consistent"),
    ]
    # the Markdown follows the page: verdict, summary, folded sections, references, inputs
    order = [
        md.index(x)
        for x in (
            "**Verdict:**",
            "## Summary",
            "## All audited bounds",
            "## References",
            "Reference verdict",
            "## Inputs",
        )
    ]
    assert order == sorted(order)


def test_committed_results_alone_are_the_report_subject(tmp_path):
    """Given only committed results, the report is about them: its verdict reads them, no reference section."""
    build_report([ROOT / "results/audit/adversarial/laplace-eps1.json"], tmp_path / "r")
    summary = json.loads((tmp_path / "r" / "report.json").read_text())
    assert summary["references"] is None and not any(i["reference"] for i in summary["inputs"])
    assert summary["verdict"].startswith("CLAIM EXCEEDED THROUGH SIDE CHANNELS") and summary["summary"]


def _bandit_inputs(tmp_path: Path) -> dict[str, Path]:
    bandit_audit = system_audit_fixture()
    bandit_audit.update(system="dp20-feducb", pair="a-toy-first-user", report_section="federated-bandits")
    files = {}
    for name, data in (
        ("system.json", system_audit_fixture()),
        ("regret.json", bandit_regret_fixture()),
        ("bandit-attack.json", bandit_attack_fixture()),
        ("bandit-audit.json", bandit_audit),
    ):
        files[name] = tmp_path / name
        files[name].write_text(json.dumps(data))
    return files


def test_system_audit_and_bandit_sections_render_only_when_given(tmp_path):
    files = _bandit_inputs(tmp_path)
    build_report(list(files.values()), tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    summary = json.loads((tmp_path / "r" / "report.json").read_text())
    systems, bandit = md.split("## System audits: claimed, accountant and audited ε")[1].split(
        "## Federated linear bandits"
    )
    assert "| gradient | 1 | 0.97 | 0.8 | 7.9 |" in systems  # claimed, accountant and audited side by side
    assert "| score | 1 | — | ∞ | ∞ |" in systems and "dp20-feducb" not in systems
    score = next(b for b in summary["bounds"] if b["channel"] == "score" and b["subject"].startswith("examples"))
    assert score["p_value"] == 1e-9 and score["covered"] is False  # the leak p-value of an uncovered channel
    assert "Channels outside the claim leak" in {w["title"] for w in summary["warnings"]}
    assert not any("episode" in w["text"] for w in summary["warnings"])  # no PGC-A3C wording for another system
    # one section for the bandits: regret, privacy cost and its fit, attacks, the bandit system's audit
    assert md.count("## Federated linear bandits") == 1
    assert "| Private-FedLinUCB eps=1, M=10 | 10 | 1 | 0.1 | 4.5 | 10 | 120 | [115, 125] |" in bandit
    assert "| FedLinUCB (non-private), M=10 | 10 | — | — | 0 | 10 | 20 | [15, 25] |" in bandit
    assert "| 4 | 1.4 | [1.26, 1.54] | 11.4 | 10 |" in bandit
    assert "fitted exponent b = 0.5 [0.4, 0.6]" in bandit
    assert "dp20 M^0.5 (inside the interval); zhou chowdhury M^0.75 (outside the interval)" in bandit
    assert (
        "| dp20-feducb | 1, 0.001 | a-toy-first-user | schedule | yes | 0.9 | [0.87, 0.93] | 0.5 | 0.731 | "
        "above the ceiling |"
    ) in bandit
    assert "| fedlinucb | ∞, 0 | a-toy-first-user | messages | yes | 1 | [0.99, 1] | 0.5 | 1 | above chance" in bandit
    assert "dp20-feducb (bandit-audit): pair a-toy-first-user" in bandit.split("### System audits of the bandit")[1]
    assert {"bandit_regret_regret.png", "bandit_cost_regret.png"} <= set(summary["figures"])
    # an attack whose interval lies above the (ε, δ) ceiling of a covered channel contradicts the claim
    assert summary["verdict"].startswith("VIOLATED")
    build_report([files["system.json"]], tmp_path / "only")
    alone = (tmp_path / "only" / "report.md").read_text()
    assert "Federated linear bandits" not in alone and "**Verdict:** CLAIM EXCEEDED THROUGH SIDE CHANNELS" in alone


def test_the_png_beside_a_regret_result_is_shown_instead_of_a_drawn_plot(tmp_path):
    files = _bandit_inputs(tmp_path)
    png = (ROOT / "results/fedlinucb/regret.png").read_bytes()
    (tmp_path / "regret.png").write_bytes(png)
    build_report([files["regret.json"]], tmp_path / "r")
    figures = json.loads((tmp_path / "r" / "report.json").read_text())["figures"]
    assert figures == ["bandit_regret_regret.png"]  # the writer's PNG draws the privacy cost as well
    assert (tmp_path / "r" / "figures" / "bandit_regret_regret.png").read_bytes() == png


def test_committed_bandit_results_and_a_system_audit_give_one_bandit_section(tmp_path):
    audit = system_audit_fixture()
    audit.update(system="private-fedlinucb", pair="b-first-user", report_section="federated-bandits")
    own = tmp_path / "private.json"
    own.write_text(json.dumps(audit))
    build_report([ROOT / "results/fedlinucb/regret.json", ROOT / "results/fedlinucb/attack.json", own], tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    bandit = md.split("## Federated linear bandits")[1].split("\n## ")[0]
    assert md.count("## Federated linear bandits") == 1 and "## System audits: claimed" not in md
    assert "fitted exponent b = 0.647 [0.634, 0.66]" in bandit and "regret (reference)" in bandit
    assert bandit.count("| attack (reference) |") == 15
    assert "private-fedlinucb (private): pair b-first-user" in bandit


def test_pgc_report_prints_the_verdict_and_the_summary_table(tmp_path, capsys):
    from pgc.cli.main import main

    files = _bandit_inputs(tmp_path)
    assert main(["report", str(files["system.json"]), "--out", str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    summary = json.loads((tmp_path / "r" / "report.json").read_text())
    assert lines[0] == f"verdict: {summary['verdict']}"
    assert lines[1].split() == [
        "observer",
        "channel",
        "claimed",
        "ε",
        "audited",
        "ε",
        "≥",
        "cap",
        "verdict",
        "after",
        "Holm",
    ]
    shown = [line.split() for line in lines[2 : 2 + len(summary["summary"])]]
    # observer, the channel's label (its composition named), ...
    for row, r in zip(shown, summary["summary"], strict=False):
        head = r["group"].split() + r["channel_label"].split()
        holm = r["holm"].split()
        assert row[: len(head)] == head and row[len(row) - len(holm) :] == holm, (row, r)
        assert row[-1 - len(holm)] == r["verdict"].split()[-1]
    assert any(row[2:4] == ["score", "1"] and row[4:6] == ["∞", "∞"] for row in shown)
    assert lines[-1].startswith("wrote ")
