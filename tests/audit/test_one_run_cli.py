"""pgc train --canaries and pgc audit --one-run end to end, and their refusals of bad input."""

import json

from pgc.cli.main import main
from pgc.references import reference_path

CRAFTED = reference_path("audit/one-run/crafted_theta_5_15.npy")  # the committed crafted θ (shipped)


def test_train_with_crafted_canaries_then_one_run_audit(tmp_path, capsys, no_result_parsing):
    run = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--submissions",
                "30",
                "--canaries",
                "400",
                "--canary-pair",
                "5:15",
                "--canary-model",
                "crafted",
                "--canary-theta",
                str(CRAFTED),
                "--out",
                str(run),
                "--no-progress",
            ]
        )
        == 0
    )
    assert (run / "trial_000" / "canaries.npz").is_file()
    out = tmp_path / "audit.json"
    assert (
        main(
            [
                "audit",
                "--one-run",
                str(run),
                "--channels",
                "gradient",
                "--samples",
                "3000",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    report = json.loads(out.read_text())
    assert report["kind"] == "one-run-audit"
    assert report["run_config"]["canaries"] == 400  # the audited trial's configuration
    (row,) = report["channels"]
    assert row["scope"].startswith("one-run") and row["channel"] == "gradient" and row["canaries"] == 400
    assert 0.0 <= row["epsilon_lower_bound"] <= 1.0
    assert row["verdict"] == ("consistent" if row["epsilon_lower_bound"] > 0 else "inconclusive")


def test_bad_canary_input_is_refused_with_exit_2(tmp_path, capsys):
    run = tmp_path / "plain"
    assert main(["train", "--submissions", "20", "--out", str(run), "--no-progress"]) == 0
    assert main(["audit", "--one-run", str(run), "--out", str(tmp_path / "a.json")]) == 2
    assert "without canaries" in capsys.readouterr().err
    assert not (tmp_path / "a.json").exists()
    bad = tmp_path / "bad"
    assert main(["train", "--canaries", "10", "--out", str(bad)]) == 2  # no pair
    assert main(["train", "--canaries", "10", "--canary-pair", "5:15", "--no-transcript", "--out", str(bad)]) == 2
    assert (
        main(
            [
                "train",
                "--canaries",
                "10",
                "--canary-pair",
                "5:15",
                "--canary-model",
                "crafted",
                "--canary-theta",
                str(tmp_path / "missing.npy"),
                "--out",
                str(bad),
            ]
        )
        == 2
    )
    assert not bad.exists()
