"""pgc pipeline (the main job) end to end on tiny budgets: every step runs and the report shows all of them."""

from __future__ import annotations

import json
import re

from pgc_cli.main import main
from reports.browser import external_references


def test_pipeline_quick_train_audit_attack_report(tmp_path, capsys):
    out = tmp_path / "pipeline"
    assert main(["pipeline", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    # every step is printed whole: the audit's first lines (the mechanism, each pair's header) included
    assert re.search(r"^  Laplace\(epsilon=5\.0, clip=0\.01\) \[black-box\]: claimed ε = 5\.000", printed, re.M)
    assert re.search(r"^  environment ψ=9\.7 vs ψ'=9\.9 at the final model", printed, re.M)
    # results, manifest, report and console name the final folder, never the temporary one it was built in
    for path in [*out.glob("*.json"), *out.glob("report/report.*")]:
        assert ".partial" not in path.read_text(), path
    assert ".partial" not in printed and f"--out {out}/audit.json" in printed
    manifest = json.loads((out / "pipeline.json").read_text())
    assert manifest["kind"] == "pipeline"
    assert [s["step"] for s in manifest["steps"]] == ["train", "audit", "audit-adversarial", "attack",
                                                      "attack-sweep", "report"]
    assert all(s["exit_code"] in (0, 1) for s in manifest["steps"])
    assert not (tmp_path / "pipeline.partial").exists()

    summary = json.loads((out / "report" / "report.json").read_text())
    kinds = sorted({i["kind"] for i in summary["inputs"]})
    assert kinds == ["attack", "audit", "train"]
    # paths point at the final folder (or at the committed adversarial curve of the checkout)
    assert all(str(out) in i["path"] or "/results/" in i["path"] for i in summary["inputs"])
    adversarial = json.loads((out / "audit-adversarial.json").read_text())
    assert adversarial["mode"] == "adversarial" and adversarial["adversarial_audits"][0]["psi"] == 5.0
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
    assert main(["report", str(out / "pipeline.json"), "--out", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "report.json").read_text())
    assert len(again["inputs"]) == len(summary["inputs"])

    # a second run refuses to overwrite without --force, and leaves the first intact
    capsys.readouterr()
    assert main(["pipeline", "--quick", "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
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
