"""``pgc train`` end to end: outputs, bad input → clear error and exit code 2, nothing half-written."""

import json
import subprocess
import sys

import numpy as np
import pytest

from pgc.a3c.rundir import load_run
from pgc.cli.main import main


def test_train_writes_run(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(
        [
            "train",
            "--mechanism",
            "prs",
            "--epsilon",
            "5",
            "--buffer",
            "10",
            "--submissions",
            "200",
            "--trials",
            "2",
            "--seed",
            "7",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    summary, trials = load_run(out)
    assert len(trials) == 2 and summary["wall_time_s"] > 0 and "torch" in summary["versions"]
    assert [t.summary["seed"] for t in trials] == [7, 8]
    assert trials[0].config.mechanism == "prs" and trials[0].config.buffer_size == 10
    tr = trials[0].transcript()
    assert len(tr) == 200
    np.testing.assert_array_equal(tr.thetas[-1], trials[0].theta())
    assert "FST=" in capsys.readouterr().out


def test_train_config_file(tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"mechanism": "laplace", "epsilon": 2.0, "submissions": 50, "workers": 3}))
    out = tmp_path / "run"
    assert main(["train", "--config", str(cfg), "--submissions", "30", "--out", str(out), "--no-progress"]) == 0
    c = load_run(out)[1][0].config
    assert (c.epsilon, c.submissions, c.workers) == (2.0, 30, 3)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epsilon", "0"], "must be > 0"),
        (["--epsilon", "nan"], "must be > 0"),
        (["--clip", "-1"], "must be > 0"),
        (["--mechanism", "gauss"], "invalid choice"),
        (["--buffer", "0"], "must be >= 1"),
        (["--reduced-dim", "200", "--mechanism", "prs"], "exceeds"),
        (["--config", "/nonexistent.json"], "does not exist"),
    ],
)
def test_train_bad_input(tmp_path, capsys, argv, message):
    out = tmp_path / "run"
    try:
        rc = main(["train", "--submissions", "5", "--out", str(out), *argv])
    except SystemExit as exc:  # argparse rejects malformed flags itself
        rc = exc.code
    assert rc == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob("*.partial"))


def test_train_bad_input_exit_code_in_a_real_process(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "pgc.cli", "train", "--epsilon", "-2", "--out", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "must be > 0" in proc.stderr and not out.exists()


def test_train_refuses_to_overwrite(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert main(["train", "--submissions", "5", "--out", str(out)]) == 2
    assert (out / "keep.txt").exists()


def test_bad_config_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["train", "--config", str(bad), "--out", str(tmp_path / "r")]) == 2
    bad.write_text(json.dumps({"epsilon": 1.0, "nonsense": 2}))
    assert main(["train", "--config", str(bad), "--out", str(tmp_path / "r")]) == 2


def test_bench_train_prints_both_references_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert (
        main(
            [
                "bench",
                "train",
                "--trials",
                "3",
                "--submissions",
                "30",
                "--naive-seconds",
                "0.3",
                "--processes",
                "1",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    numbers = json.loads(out.read_text())["numbers"]
    assert numbers["vectorised_agent_steps"] > 0 and numbers["naive_agent_steps"] > 0
    assert numbers["ratio"] == pytest.approx(numbers["vectorised_steps_per_s"] / numbers["naive_steps_per_s"])
    assert "naive reference" in capsys.readouterr().out
