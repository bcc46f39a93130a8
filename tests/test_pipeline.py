"""pgc pipeline (the main job) end to end on tiny budgets: every step runs and the report shows all of them.
The quick pipeline itself runs in tests/test_newcomer.py, as the README's Commands say; its checks are here."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

from pgc.cli.main import main
from reports.browser import external_references


def check_quick_pipeline(out: Path, printed: str, scratch: Path) -> None:
    """What ``pgc pipeline --quick`` (run by tests/test_newcomer.py as the README's Commands say) must have
    left in ``out`` and printed: every step, whole, naming the final folder; a report of all of them.
    ``scratch``: an empty folder for the checks' own outputs."""
    # every step is printed whole: the audit's first lines (the mechanism, each pair's header) included
    assert re.search(r"^  Laplace\(epsilon=5\.0, clip=0\.01\) \[black-box\]: claimed ε = 5\.000", printed, re.M)
    assert re.search(r"^  environment ψ=9\.7 vs ψ'=9\.9 at the final model", printed, re.M)
    # results, manifest, report and console name the final folder, never the temporary one it was built in
    for path in [*out.glob("*.json"), *out.glob("report/report.*")]:
        assert ".partial" not in path.read_text(), path
    assert ".partial" not in printed and f"--out {out}/audit.json" in printed
    manifest = json.loads((out / "pipeline.json").read_text())
    assert manifest["kind"] == "pipeline"
    assert [s["step"] for s in manifest["steps"]] == [
        "train",
        "audit",
        "audit-adversarial",
        "attack",
        "attack-sweep",
        "report",
    ]
    assert all(s["exit_code"] in (0, 1) for s in manifest["steps"])
    assert not list(out.parent.glob("*.partial"))

    summary = json.loads((out / "report" / "report.json").read_text())
    kinds = sorted({i["kind"] for i in summary["inputs"]})
    audits = {"run-audit", "adversarial-audit"}  # the pipeline's own audits, beside the committed evidence it cites
    assert {"attack", "train", *audits} <= set(kinds) <= {"attack", "train", "adversarial-curve", *audits}
    # paths point at the final folder (or at the committed references the package ships)
    assert all(
        str(out) in i["path"] or "/results/" in i["path"] or "/pgc/references/" in i["path"] for i in summary["inputs"]
    )
    adversarial = json.loads((out / "audit-adversarial.json").read_text())
    assert adversarial["kind"] == "adversarial-audit" and adversarial["adversarial_audits"][0]["psi"] == 5.0
    assert {c["model"] for c in adversarial["channels"]} == {"adversarial"}
    assert all("p_value" in c for c in adversarial["channels"])
    assert summary["adversarial"]
    channels = {b["channel"] for b in summary["bounds"]}
    assert {"gradient", "score", "arrival", "all"} <= channels
    assert summary["attacks"] and summary["utility"]
    assert {"bounds.png", "attack.png", "learning_curves.png"} <= set(summary["figures"])
    page = (out / "report" / "report.html").read_text()
    assert external_references(page) == []
    # the pipeline manifest itself is a report input that expands to the results it lists
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(out / "pipeline.json"), "--out", str(scratch / "again")]) == 0
    again = json.loads((scratch / "again" / "report.json").read_text())
    assert len(again["inputs"]) == len(summary["inputs"])

    # a second run refuses to overwrite without --force, and leaves the first intact
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["pipeline", "--quick", "--out", str(out)]) == 2
    assert "--force" in err.getvalue()
    assert (out / "report" / "report.html").read_text() == page


def test_pipeline_force_never_deletes_the_working_folder_or_foreign_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.txt").write_text("keep me")
    assert main(["pipeline", "--quick", "--force", "--out", "."]) == 2
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me too")
    assert main(["pipeline", "--quick", "--force", "--out", str(foreign)]) == 2
    assert (tmp_path / "mine.txt").read_text() == "keep me" and (foreign / "notes.txt").read_text() == "keep me too"
    err = capsys.readouterr().err
    assert "working folder" in err and "not written by pgc" in err
