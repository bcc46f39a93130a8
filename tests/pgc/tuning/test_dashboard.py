"""optuna-dashboard serves our studies (SQLite and PostgreSQL): study, trials, privacy vs utility."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest

from pgc.tuning import Evaluation, SearchSpace, StudySettings, run_study
from pgc.tuning.storage import storage_url


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read().decode())


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_dashboard_serves_study_trials_and_objective_names(kind, tmp_path, request):
    url = f"sqlite:///{tmp_path / 'study.db'}" if kind == "sqlite" else request.getfixturevalue("postgres_url")
    name = f"dash-{uuid.uuid4().hex[:8]}"
    settings = StudySettings(
        space=SearchSpace(mechanisms=("laplace",)),
        evaluation=Evaluation(runs_per_trial=2, submissions=60, rungs=(1.0,)),
        sampler="random",
        seed=1,
    )
    run_study(name, url, settings, n_trials=3, batch=3, log=lambda m: None)
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from optuna_dashboard._cli import main; main()",
            storage_url(url),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                studies = _get(f"{base}/api/studies")["study_summaries"]
                break
            except (urllib.error.URLError, ConnectionError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("optuna-dashboard did not start: " + proc.stdout.read().decode()[-2000:])
                time.sleep(0.2)
        ours = [s for s in studies if s["study_name"] == name]
        assert len(ours) == 1
        assert ours[0]["directions"] == ["maximize", "minimize"]
        detail = _get(f"{base}/api/studies/{ours[0]['study_id']}")
        assert detail["objective_names"] == ["utility", "privacy"]
        assert {a["key"] for a in detail["user_attrs"]} >= {"settings", "objectives"}
        assert len(detail["trials"]) == 3 and all(t["state"] == "Complete" for t in detail["trials"])
        attrs = {a["key"]: a["value"] for a in detail["trials"][0]["user_attrs"]}
        assert {"utility", "privacy", "claimed_epsilon", "success_ratio", "seeds"} <= set(attrs)
        assert len(detail["best_trials"]) >= 1  # the Pareto front of privacy vs utility
    finally:
        proc.terminate()
        proc.wait(timeout=10)
