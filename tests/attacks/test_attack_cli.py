"""``pgc attack``: JSON result, transcript target, bad input → exit code 2 and nothing written."""

import json

import pytest

from pgc.a3c.rundir import save_run
from pgc.a3c.trainer import TrainConfig, train
from pgc.cli.main import main


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("attack_cli") / "run"
    save_run([train(TrainConfig(submissions=120, seed=1), record_transcript=True)], out, wall_time=0.0)
    return out


def test_model_target_writes_attack_json(tmp_path, capsys, no_result_parsing):
    out = tmp_path / "a.json"
    rc = main(
        [
            "attack",
            "--model",
            "init:0",
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--candidates",
            "9.7",
            "9.8",
            "9.9",
            "--targets",
            "60",
            "--budget",
            "20",
            "--k",
            "1",
            "2",
            "--channels",
            "gradient,score",
            "--epochs",
            "3",
            "--seed",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "attack" and data["threat_model"]["channels"] == ["gradient", "score"]
    names = {(r["attacker"], r["k"]) for r in data["rows"]}
    assert names == {(a, k) for a in ("likelihood", "learned", "side-channel") for k in (1, 2)}
    for r in data["rows"]:
        assert {"accuracy", "ci", "chance", "ceiling", "advantage", "channels", "budget"} <= set(r)
    assert "acc" in capsys.readouterr().out


def test_run_target(tmp_path, run_dir, no_result_parsing):
    out = tmp_path / "r.json"
    rc = main(
        [
            "attack",
            "--run",
            str(run_dir),
            "--targets",
            "20",
            "--budget",
            "10",
            "--attackers",
            "likelihood",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert (
        data["mode"] == "run"
        and data["n_targets"] == 20
        and data["rows"][0]["ceiling"] == pytest.approx(0.576, abs=1e-3)
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "init:0", "--channels", "gradient,telepathy"],
        ["--model", "init:0", "--range", "20", "5"],
        ["--model", "init:0", "--candidates", "9.8"],
        ["--model", "init:0", "--attackers", "oracle"],
        ["--model", "init:0", "--budget", "1"],
        ["--model", "init:0", "--epsilon", "-1"],
        ["--model", "init:x"],
        ["--model", "/nonexistent/ckpt.pt"],
        ["--run", "/nonexistent/run"],
        ["--run", "RUN", "--epsilon", "2"],
        ["--run", "RUN", "--k", "5"],
        ["--model", "init:0", "--out", "x.txt"],
    ],
)
def test_bad_input_exit_code_2(tmp_path, run_dir, argv, capsys):
    out = tmp_path / "bad.json"
    argv = [str(run_dir) if a == "RUN" else a for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(out)]
    with pytest.raises(SystemExit) as exc:  # argparse errors exit 2 themselves
        raise SystemExit(main(["attack", "--targets", "6", "--no-progress", *argv]))
    assert exc.value.code == 2
    assert not out.exists()
    assert "error" in capsys.readouterr().err


def test_sweep_writes_json_and_plot_and_replots(tmp_path, no_result_parsing):
    out = tmp_path / "sweep.json"
    rc = main(
        [
            "attack",
            "--sweep",
            "--model",
            "init:0",
            "--epsilons",
            "1",
            "inf",
            "--k",
            "1",
            "2",
            "--targets",
            "30",
            "--budget",
            "10",
            "--epochs",
            "2",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "attack" and data["mode"] == "sweep" and data["violations"] == []
    assert {r["epsilon"] for r in data["rows"]} == {1.0, "inf"}
    png = out.with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    png.unlink()
    assert main(["attack", "--plot", str(out)]) == 0 and png.exists()
    assert main(["attack", "--plot", str(tmp_path / "missing.json")]) == 2
