"""`pgc audit`: bad input exits 2 with nothing written; good input writes one JSON of the subcommand's kind."""

import json

import pytest

from pgc.cli.main import main


@pytest.mark.parametrize(
    "argv",
    [
        [],  # no mode
        ["--mechanism", "laplace"],  # no --epsilon
        ["--mechanism", "nosuch", "--epsilon", "1"],
        ["--mechanism", "laplace", "--epsilon", "0"],
        ["--mechanism", "laplace", "--epsilon", "1", "--confidence", "1.5"],
        ["--mechanism", "laplace", "--epsilon", "1", "--white-box"],  # Laplace has no (ũ, M)
        ["--mechanism", "none", "--epsilon", "1"],
        ["--mechanism", "laplace", "--epsilon", "1", "--self-test"],  # two modes
        ["--run", "/nonexistent/run"],
        ["--mechanism", "laplace", "--epsilon", "1", "--seed", "-1"],
    ],
)
def test_bad_input_exits_2_and_writes_nothing(argv, tmp_path, capsys):
    out = tmp_path / "a.json"
    try:
        code = main(["audit", *argv, "--out", str(out)])
    except SystemExit as exc:  # argparse rejects malformed values itself
        code = exc.code
    assert code == 2
    assert not out.exists()
    assert "error" in capsys.readouterr().err


def test_mechanism_mode_writes_json(tmp_path, capsys, no_result_parsing):
    out = tmp_path / "sub" / "audit.json"
    assert (
        main(
            [
                "audit",
                "--mechanism",
                "laplace",
                "--epsilon",
                "2",
                "--samples",
                "5000",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    assert data["kind"] == "mechanism-audit"
    (row,) = data["channels"]
    assert row["claimed_epsilon"] == 2.0 and 0 < row["epsilon_lower_bound"] <= 2.0
    assert row["verdict"] == "consistent" and row["samples_per_side"] == 5000
    assert row["max_certifiable_epsilon"] > row["epsilon_lower_bound"]
    assert "CONSISTENT" in capsys.readouterr().out
    assert not list(out.parent.glob("*.tmp"))


def test_run_mode_audits_channels(tmp_path, capsys, no_result_parsing):
    run = tmp_path / "run"
    assert main(["train", "--submissions", "30", "--out", str(run), "--no-progress"]) == 0
    out = tmp_path / "run-audit.json"
    assert (
        main(
            [
                "audit",
                "--run",
                str(run),
                "--initial",
                "--samples",
                "1000",
                "--mechanism-samples",
                "2000",
                "--pairs",
                "5:15",
                "--compositions",
                "2",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    scopes = {(r["scope"], r["channel"]) for r in data["channels"]}
    assert ("environment 5 vs 15", "gradient") in scopes and ("environment 5 vs 15", "score") in scopes
    assert {r["verdict"] for r in data["channels"]} <= {"consistent", "inconclusive", "violated", "unprotected channel"}
    assert all(r["verdict_reason"] for r in data["channels"])  # every row says why, in words
    assert data["model"] == "initial" and data["mechanism_source"] == "run"
    # the audited trial's configuration, as its run recorded it
    recorded = json.loads((run / "summary.json").read_text())["trials"][0]["config"]
    assert data["run_config"] == recorded and data["run_config"]["submissions"] == 30
    # each row's channel kind as its producer recorded it is the one its label names: no row writes it
    names = {r["channel"] for r in data["channels"]}
    assert {"canary (black-box)", "gradient×2", "gradient×2 split", "score×2"} <= names
    assert not any(key in r for r in data["channels"] for key in ("channel_family", "composition", "base_channel"))
    assert main(["audit", "--run", str(run), "--trial", "3", "--out", str(tmp_path / "x.json")]) == 2


def test_an_audit_estimated_beyond_the_bound_is_refused_unless_allowed(tmp_path, capsys):
    out = tmp_path / "a.json"
    assert main(["audit", "--mechanism", "laplace", "--epsilon", "1", "--samples", "1e10", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "--allow-long" in captured.err and "would take about" in captured.err
    assert "estimated time" not in captured.out and not out.exists()


def test_progress_off_a_terminal_is_plain_dated_lines():
    import io

    from audit.engine.progress import LineProgress

    stream = io.StringIO()
    bar = LineProgress(1000, "output", "certified test", interval=0.0, stream=stream)
    bar.update(250)
    bar.update(750)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and "started, 1,000 outputs" in lines[0]
    assert "25% (250/1,000 outputs)" in lines[1] and "left" in lines[1] and "\r" not in stream.getvalue()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--mechanism", "laplace", "--epsilon", "1", "--samples", "3"], "at least 100 samples per side"),
        (
            ["--mechanism", "laplace", "--epsilon", "1", "--mechanism-samples", "50", "--run", "nowhere"],
            "at least 100 samples per side",
        ),
        (["--mechanism", "prs", "--epsilon", "5", "--delta", "1e-5"], "pure epsilon-DP"),
        (["--mechanism", "laplace", "--epsilon", "1", "--run", "nowhere"], "is not a folder"),
    ],
)
def test_input_is_checked_once_and_before_any_estimate(argv, message, tmp_path, capsys):
    try:
        code = main(["audit", *argv, "--out", str(tmp_path / "a.json")])
    except SystemExit as exc:  # a value refused while the options are parsed
        code = exc.code
    assert code == 2
    captured = capsys.readouterr()
    assert message in captured.err and len(captured.err.strip().splitlines()) == 1
    assert "estimated time" not in captured.out and not (tmp_path / "a.json").exists()


def test_estimates_follow_the_audited_models_episode_length():
    from audit.power.planning import environment_audit_seconds, mechanism_audit_seconds

    falls, balances = (environment_audit_seconds(20_000, 1, steps) for steps in (20.0, 200.0))
    assert 3 < balances / falls < 8  # CartPole steps are the work: a balancing model costs several times more
    assert environment_audit_seconds(20_000, 2, 20.0) == pytest.approx(2 * falls)
    assert environment_audit_seconds(20_000, 1, None) == balances  # unknown model: the slow case
    assert mechanism_audit_seconds(100_000, prs=True, reduced_dim=20) > 5 * mechanism_audit_seconds(100_000)


@pytest.mark.parametrize("epsilon", ["800", "1e6"])
def test_an_extreme_but_valid_epsilon_is_audited_in_one_run(epsilon, tmp_path, capsys):
    out = tmp_path / "a.json"
    assert (
        main(
            [
                "audit",
                "--mechanism",
                "laplace",
                "--epsilon",
                epsilon,
                "--samples",
                "2000",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    row = json.loads(out.read_text())["channels"][0]
    assert row["claimed_epsilon"] == float(epsilon) and row["verdict"] in ("consistent", "inconclusive")
    assert "Traceback" not in capsys.readouterr().err
