"""Hostile report inputs and tuning workers that die or start together."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import optuna
import pytest

from pgc.cli.main import main

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def _replicate_json(folder, images):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "replicate.json"
    path.write_text(
        json.dumps({"kind": "replicate", "notes": ["see the figures"], "plots": [{"file": name} for name in images]})
    )
    return path


@pytest.mark.slow
def test_report_embeds_only_png_files_inside_the_input_folder(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0")
    folder = tmp_path / "res"
    folder.mkdir()
    (folder / "good.png").write_bytes(PNG)
    (folder / "link.png").symlink_to(secret)
    (folder / "renamed.png").write_text("root:x:0:0 not a png")
    outside = tmp_path / "outside.png"
    outside.write_bytes(PNG)
    os.mkfifo(folder / "fifo.png")
    src = _replicate_json(
        folder, ["good.png", "link.png", "renamed.png", str(outside), "../outside.png", "fifo.png", "/dev/zero.png"]
    )
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "pgc.cli", "report", str(src), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert figures == ["replicate_good.png"]
    assert "root:x" not in (out / "report.html").read_text()


@pytest.mark.parametrize("make", ["fifo", "device"])
def test_report_refuses_non_regular_inputs_without_hanging(tmp_path, make):
    path = tmp_path / "in.json"
    if make == "fifo":
        os.mkfifo(path)
    else:
        path = "/dev/zero"
    proc = subprocess.run(
        [sys.executable, "-m", "pgc.cli", "report", str(path), "--out", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "regular file" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_report_markdown_escapes_copied_text(tmp_path):
    folder = tmp_path / "res"
    folder.mkdir()
    path = folder / "replicate.json"
    path.write_text(
        json.dumps(
            {
                "kind": "replicate",
                "notes": [
                    "[click](http://evil.example) ![x](http://evil.example/p.png) <script>alert(1)</script>",
                    "# fake heading",
                ],
            }
        )
    )
    out = tmp_path / "report"
    assert main(["report", str(path), "--out", str(out), "--title", "<b>t</b> [a](b)"]) == 0
    md = (out / "report.md").read_text()
    assert "](http://evil" not in md and "<script>" not in md and "<b>" not in md and "\n# fake" not in md
    assert "&lt;script&gt;" in md


def test_report_refuses_a_foreign_output_folder(tmp_path, capsys):
    folder = tmp_path / "res"
    src = _replicate_json(folder, [])
    user = tmp_path / "docs"
    user.mkdir()
    (user / "thesis.md").write_text("mine")
    assert main(["report", str(src), "--out", str(user)]) == 2
    assert "not written by pgc" in capsys.readouterr().err
    assert sorted(p.name for p in user.iterdir()) == ["thesis.md"]
    out = tmp_path / "r"
    assert main(["report", str(src), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["report", str(src), "--out", str(out)]) == 2  # a report folder: replaced only with --force
    assert "use --force" in capsys.readouterr().err
    (out / "figures" / "old-run.png").parent.mkdir(exist_ok=True)
    (out / "figures" / "old-run.png").write_bytes(b"an earlier report's figure")
    assert main(["report", str(src), "--out", str(out), "--force"]) == 0
    assert not (out / "figures" / "old-run.png").exists()  # replaced whole: nothing of the old report is kept
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())  # as mkdir makes folders


def test_report_never_writes_into_a_folder_another_command_wrote(tmp_path, capsys):
    src = _replicate_json(tmp_path / "res", [])
    run = tmp_path / "run"
    assert main(["train", "--submissions", "20", "--workers", "2", "--no-progress", "--out", str(run)]) == 0
    before = sorted(p.name for p in run.iterdir())
    for force in ([], ["--force"]):
        capsys.readouterr()
        assert main(["report", str(src), "--out", str(run), *force]) == 2
        assert "written by pgc train, not pgc report" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir()) == before
    assert oct(run.stat().st_mode & 0o777) == oct(0o777 & ~_umask())  # run and report folders alike


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------------------------------------
# tune
# ---------------------------------------------------------------------------------------------


def _settings(seed=3):
    from pgc.tuning import Evaluation, SearchSpace, StudySettings

    return StudySettings(
        space=SearchSpace(mechanisms=("laplace",)), evaluation=Evaluation(submissions=100), sampler="random", seed=seed
    )


def test_dead_workers_trials_fail_at_once_and_are_retried_once(tmp_path):
    from pgc.tuning.storage import make_storage
    from pgc.tuning.study import open_study
    from pgc.tuning.workers import claim, fail_dead_workers, worker_identity

    storage = make_storage(f"sqlite:///{tmp_path / 's.db'}", heartbeat_interval=60, grace_period=600)
    study = open_study("s", storage, _settings())
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    killed = study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)})
    storage.record_heartbeat(killed._trial_id)  # fresh heartbeat: fail_stale_trials would not touch it
    killed.set_user_attr("worker", {**worker_identity(), "pid": dead.pid, "start": "1", "trial": killed.number})
    alive = study.ask()
    claim(alive)
    optuna.storages.fail_stale_trials(study)
    assert fail_dead_workers(study, storage) == [killed.number]
    states = {t.number: t.state for t in study.get_trials()}
    assert states[killed.number] == optuna.trial.TrialState.FAIL
    assert states[alive.number] == optuna.trial.TrialState.RUNNING
    retries = [t for t in study.get_trials() if t.system_attrs.get("failed_trial") == killed.number]
    assert len(retries) == 1 and retries[0].params == killed.params
    assert fail_dead_workers(study, storage) == []  # once


def test_the_same_seed_asks_the_same_trials_on_any_machine(tmp_path, monkeypatch):
    """The sampler's seed comes from the study seed and the trials stored, never from the host or process."""
    import socket

    from pgc.tuning.study import next_sampler_seed, run_study

    params = []
    for host in ("machine-a", "machine-b"):
        monkeypatch.setattr(socket, "gethostname", lambda host=host: host)
        (tmp_path / host).mkdir()
        study = run_study(
            "s", f"sqlite:///{tmp_path / host / 's.db'}", _settings(), n_trials=4, batch=2, log=lambda message: None
        )
        params.append([(t.number, t.params, t.user_attrs["sampler_seed"]) for t in study.get_trials()])
    assert params[0] == params[1] and len(params[0]) == 4
    assert len({seed for _, _, seed in params[0]}) == 4
    assert next_sampler_seed(_settings(), 2) == params[0][2][2]
    assert next_sampler_seed(_settings(seed=4), 2) != params[0][2][2]


def test_four_workers_end_with_exactly_the_trials_asked_and_none_failed(tmp_path, capsys, no_result_parsing):
    out = tmp_path / "t"
    argv = [
        "tune",
        "--trials",
        "8",
        "--workers",
        "4",
        "--batch",
        "1",
        "--runs-per-trial",
        "1",
        "--submissions",
        "30",
        "--rungs",
        "1",
        "--sampler",
        "random",
        "--mechanisms",
        "laplace",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    counts = json.loads((out / "tune.json").read_text())["counts"]
    assert counts.get("COMPLETE", 0) + counts.get("PRUNED", 0) == 8 and set(counts) <= {"COMPLETE", "PRUNED"}
    capsys.readouterr()
    assert main(argv) == 0  # the same command again: nothing to run, and it says so
    assert "study complete: 8 trials; use a new --out or --trials" in capsys.readouterr().out


def test_tune_rejects_bad_storage_and_budget_before_creating_anything(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["tune", "--out", str(out), "--storage", "mysql://u:pw@localhost/db", "--trials", "1"]) == 2
    err = capsys.readouterr().err
    assert "driver" in err and "pw" not in err and len(err.strip().splitlines()) == 1
    assert main(["tune", "--out", str(out), "--submissions", "100000000", "--trials", "1"]) == 2
    assert "10,000,000" in capsys.readouterr().err
    assert not out.exists()
