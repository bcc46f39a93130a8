"""One verdict across channels (Holm over the rows with p-values) and attacker-defect rows."""

import json

from result_fixtures import audit_file

from reports import build_report


def _row(channel, lb, verdict, p=None, **kw):
    r = {
        "scope": "environment 5 vs 15",
        "channel": channel,
        "claimed_epsilon": 1.0,
        "epsilon_lower_bound": lb,
        "confidence": 0.95,
        "samples_per_side": 10_000,
        "verdict": verdict,
        **kw,
    }
    if p is not None:
        r["p_value"] = p
    return r


def _report(tmp_path, rows, extra=()):
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(audit_file("run-audit", rows)))
    build_report([path, *extra], tmp_path / "r")
    return (
        json.loads((tmp_path / "r" / "report.json").read_text()),
        (tmp_path / "r" / "report.md").read_text(),
        (tmp_path / "r" / "report.html").read_text(),
    )


def test_holm_keeps_a_lone_marginal_violation_out_of_the_verdict(tmp_path):
    """Ten rows; one 'violated' at p = 0.02 (significant alone at 5 %, not after Holm over 10)."""
    rows = [_row("gradient", 1.05, "violated", p=0.02)] + [
        _row(f"gradient{i}", 0.0, "consistent", p=1.0) for i in range(9)
    ]
    summary, md, page = _report(tmp_path, rows)
    assert summary["family"]["size"] == 10 and summary["family"]["significant"] == []
    assert summary["verdict"].startswith("CONSISTENT")
    assert summary["bounds"][0]["verdict"] == "violated"  # the row's own bound stays as it is
    assert "10 row(s) in the family" in md and "10 row(s) in the family" in page
    assert "valid alone at its own confidence" in md and "not kept" in md


def test_holm_significant_rows_drive_the_verdict_and_are_named(tmp_path):
    rows = [
        _row("gradient", 2.0, "violated", p=1e-6),
        _row("score", 1.7, "unprotected channel", p=0.9, p_value_leak=1e-5, covered=False),
        _row("timing", 0.1, "unprotected channel", p=1.0, p_value_leak=0.3, covered=False),
        _row("all", 0.0, "inconclusive"),
    ]
    summary, md, _ = _report(tmp_path, rows)
    fam = summary["family"]
    assert fam["size"] == 3 and fam["excluded"] == 1 and abs(fam["alpha"] - 0.05) < 1e-12
    assert [(s["channel"], s["verdict"]) for s in fam["significant"]] == [
        ("gradient", "violated"),
        ("score", "unprotected channel"),
    ]
    by_channel = {b["channel"]: b for b in summary["bounds"]}
    assert by_channel["score"]["p_value"] == 1e-5  # the leak p-value is used for unprotected rows
    assert by_channel["timing"]["holm_significant"] is False and by_channel["all"]["holm_significant"] is None
    assert summary["verdict"].startswith("VIOLATED")
    assert "excluded from the family-wise verdict" in md and "Findings Holm keeps: 2" in md


def test_rows_without_p_values_fall_back_to_their_own_verdicts(tmp_path):
    summary, md, _ = _report(tmp_path, [_row("gradient", 2.0, "violated")])
    assert summary["family"]["size"] == 0 and summary["verdict"].startswith("VIOLATED")
    assert "without a correction" in md


def test_attack_row_below_chance_is_an_attacker_defect_not_a_privacy_result(tmp_path):
    attack = tmp_path / "attack.json"
    rows = [
        {
            "attacker": "likelihood",
            "channels": ["gradient", "score"],
            "epsilon": "inf",
            "k": 10,
            "accuracy": 0.25,
            "ci": [0.192, 0.316],
            "chance": 1 / 3,
            "ceiling": 1.0,
            "verdict": "n/a",
            "model": "m",
        },
        {
            "attacker": "likelihood",
            "channels": ["gradient"],
            "epsilon": "inf",
            "k": 10,
            "accuracy": 0.34,
            "ci": [0.28, 0.41],
            "chance": 1 / 3,
            "ceiling": 1.0,
            "verdict": "n/a",
            "model": "m",
        },
    ]
    attack.write_text(json.dumps({"kind": "attack", "mode": "sweep", "candidates": [9.7, 9.8, 9.9], "rows": rows}))
    summary, md, page = _report(tmp_path, [_row("gradient", 0.0, "consistent", p=1.0)], extra=[attack])
    flags = [a["attacker_defect"] for a in summary["attacks"]]
    assert flags == [True, False]
    assert not summary["attacks"][0]["above_ceiling"]
    assert "Attacker defect: accuracy below chance" in {w["title"] for w in summary["warnings"]}
    assert "Attacker defects (not privacy results)" in md and "attacker defect" in page
    table = md.split("What an attacker learns")[1].split("Attacker defects")[0]
    assert "0.250" not in table and "0.340" in table  # never shown as a privacy result
