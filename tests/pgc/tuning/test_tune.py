"""pgc tune: seeds, pruning rule, constrained mode, and a study killed mid-run (SIGKILL) then resumed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import optuna
import pytest

from pgc.cli.main import main
from pgc.tuning import Evaluation, SearchSpace, StudySettings, export_study, run_study, trial_seeds
from pgc.tuning.study import _Pending, evaluate_batch, should_prune

TINY = dict(runs_per_trial=2, submissions=60, rungs=(1.0,))


def test_trial_seeds_depend_on_study_seed_and_trial_number_only():
    assert trial_seeds(0, 3, 4) == trial_seeds(0, 3, 4)
    assert trial_seeds(0, 3, 4) != trial_seeds(0, 4, 4)
    assert trial_seeds(0, 3, 4) != trial_seeds(1, 3, 4)
    assert all(0 <= s < 2**31 for s in trial_seeds(7, 0, 16))
    assert len(set(trial_seeds(7, 0, 16))) == 16


def test_prune_rule():
    ev = Evaluation(prune_below_mu=30.0)
    assert should_prune({"success_ratio": 0.0, "final_mu": 22.0}, ev)
    assert not should_prune({"success_ratio": 0.0, "final_mu": 45.0}, ev)
    assert not should_prune({"success_ratio": 0.125, "final_mu": 10.0}, ev)


def test_settings_validated():
    with pytest.raises(ValueError, match="mechanism"):
        SearchSpace(mechanisms=("gauss",))
    with pytest.raises(ValueError, match="epsilon range"):
        SearchSpace(epsilon=(2.0, 1.0))
    with pytest.raises(ValueError, match="rungs"):
        Evaluation(rungs=(0.5,))
    with pytest.raises(ValueError, match="min_utility"):
        StudySettings(mode="constrained")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--mode", "constrained"], "--min-success"),
        (["--storage", "study.db"], "RDB URL"),
        (["--epsilon", "5", "1"], "epsilon range"),
        (["--rungs", "0.5"], "rungs"),
    ],
)
def test_tune_bad_input_exit_2(argv, message, tmp_path, capsys):
    assert main(["tune", "--out", str(tmp_path / "t"), "--trials", "1", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "t" / "tune.json").exists()


def test_evaluation_reproduces_with_the_same_seeds():
    ev = Evaluation(runs_per_trial=2, submissions=80, rungs=(0.5, 1.0), prune_below_mu=0.0)
    params = {
        "mechanism": "prs",
        "epsilon": 10.0,
        "clip": 1.0,
        "buffer_size": 4,
        "reduced_dim": 2,
        "learning_rate": 0.1,
    }
    outs = []
    for _ in range(2):
        p = _Pending(trial=None, params=params, seeds=trial_seeds(0, 5, 2), privacy=10.0, claimed=10.0)
        evaluate_batch([p], ev, log=lambda m: None)
        outs.append(p.metrics)
    assert outs[0]["fsts"] == outs[1]["fsts"] and outs[0]["final_mu"] == outs[1]["final_mu"]
    assert outs[0]["horizon"] == 80 and "pruned_at" not in outs[0]


def test_constrained_mode_reports_smallest_feasible_privacy(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    settings = StudySettings(
        space=SearchSpace(mechanisms=("laplace",), epsilon=(0.5, 5.0)),
        evaluation=Evaluation(**TINY, prune_below_mu=0.0),
        mode="constrained",
        min_utility=0.0,
        sampler="random",
        seed=3,
    )
    run_study("c", url, settings, n_trials=3, batch=3, log=lambda m: None)
    res = export_study("c", url)
    assert res.KIND == "tune" and res.counts.to_dict() == {"COMPLETE": 3}
    eps = [t.privacy for t in res.trials]
    assert res.best_constrained is not None and res.best_constrained.privacy == min(
        eps
    )  # every trial meets utility >= 0
    # same study name with different settings is refused rather than silently mixed
    other = StudySettings(
        space=SearchSpace(mechanisms=("laplace",), epsilon=(0.5, 6.0)),
        evaluation=Evaluation(**TINY),
        mode="constrained",
        min_utility=0.0,
        sampler="random",
        seed=3,
    )
    with pytest.raises(ValueError, match="different settings"):
        run_study("c", url, other, n_trials=4, log=lambda m: None)


def _states(db: Path) -> list[tuple[int, str]]:
    """(trial number, state) read straight from the SQLite file (cheap enough to poll)."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return [(int(n), str(s)) for n, s in con.execute("SELECT number, state FROM trials")]
    except sqlite3.Error:  # tables not created yet, or locked for a moment
        return []


def _snapshot(url: str, name: str) -> dict:
    study = optuna.load_study(study_name=name, storage=url)
    return {t.number: t for t in study.get_trials(deepcopy=True)}


@pytest.mark.slow
def test_study_killed_mid_run_resumes_without_losing_completed_trials(tmp_path):
    out = tmp_path / "tune"
    url = f"sqlite:///{out / 'study.db'}"
    cmd = [
        sys.executable,
        "-m",
        "pgc.cli",
        "tune",
        "--out",
        str(out),
        "--study",
        "k",
        "--trials",
        "6",
        "--batch",
        "1",
        "--runs-per-trial",
        "4",
        "--submissions",
        "400",
        "--rungs",
        "1",
        "--sampler",
        "random",
        "--mechanisms",
        "laplace",
        "prs",
        "--heartbeat",
        "1",
        "--grace",
        "2",
        "--seed",
        "11",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 90
    killed_running: list[int] = []
    try:
        while time.monotonic() < deadline:
            time.sleep(0.03)
            states = _states(out / "study.db")
            finished = [n for n, s in states if s in ("COMPLETE", "PRUNED")]
            running = [n for n, s in states if s == "RUNNING"]
            if len(finished) >= 2 and running:
                os.kill(proc.pid, signal.SIGKILL)  # mid-trial: training of `running` is in progress
                killed_running = running
                break
            assert proc.poll() is None, (
                "the study ended before it could be killed: " + proc.stderr.read().decode()[-2000:]
            )
        else:
            pytest.fail("the study did not reach 2 finished trials in time")
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    before = {n: t for n, t in _snapshot(url, "k").items() if t.state in done}
    assert len(before) >= 2 and killed_running
    assert not (out / "tune.json").exists()  # the killed run wrote no half result
    time.sleep(2.5)  # past the grace period: the killed trial's heartbeat is stale

    assert main(cmd[3:]) == 0  # resume in-process with the same command
    after = _snapshot(url, "k")
    for n, t in before.items():  # completed trials untouched
        assert after[n].state == t.state and after[n].params == t.params and after[n].values == t.values
        assert after[n].user_attrs["seeds"] == t.user_attrs["seeds"]
    assert len([t for t in after.values() if t.state in done]) == 6
    for n in killed_running:  # the killed trial failed; if it had drawn its parameters it was retried with them
        assert after[n].state == optuna.trial.TrialState.FAIL
        retry = [t for t in after.values() if t.system_attrs.get("failed_trial") == n]
        if after[n].params:
            # (killed while drawing them, the drawn ones are kept and the rest drawn afresh)
            assert len(retry) == 1 and after[n].params.items() <= retry[0].params.items()
        assert len(retry) <= 1  # killed before drawing anything: at most a fresh retry
        for t in retry:
            assert t.user_attrs["seeds"] == trial_seeds(11, n, 4) and t.state in done
    assert not [t for t in after.values() if t.state == optuna.trial.TrialState.RUNNING]
    result = json.loads((out / "tune.json").read_text())
    assert result["counts"].get("COMPLETE", 0) + result["counts"].get("PRUNED", 0) == 6
    seeds = result["sampler_seeds"]  # one per trial asked, from (study seed, trials stored): none shared
    assert len(seeds) >= 6 and len(set(seeds.values())) == len(seeds)
    complete = [t for t in result["trials"] if t["state"] == "COMPLETE"]
    assert set(result["pareto_front"]) <= {t["number"] for t in complete}
    assert np.all([t["seeds"] for t in result["trials"] if t["state"] != "FAIL"])


def test_a_retry_popped_by_a_worker_killed_before_its_first_heartbeat_is_failed_and_requeued(tmp_path):
    from pgc.tuning.storage import make_storage
    from pgc.tuning.study import _fail_orphans
    from pgc.tuning.workers import claim

    storage = make_storage(f"sqlite:///{tmp_path / 's.db'}", heartbeat_interval=1, grace_period=1)
    study = optuna.create_study(study_name="o", storage=storage, directions=["maximize", "minimize"])
    dist = {"log_epsilon": optuna.distributions.FloatDistribution(-1.0, 1.0)}
    inherited = {"seeds": [7], "worker": {"host": "h", "boot": "b", "pid": 1, "start": "1", "trial": 5}}
    study.add_trial(
        optuna.create_trial(
            state=optuna.trial.TrialState.WAITING,
            params={"log_epsilon": 0.25},
            distributions=dist,
            system_attrs={"failed_trial": 5},
            user_attrs=inherited,
        )
    )  # a retry keeps its origin's attributes
    popped = study.ask(fixed_distributions=dist)  # RUNNING, parameters set, no heartbeat: then the kill
    live = study.ask()  # a live worker's trial: claimed (the worker records itself)
    claim(live)
    time.sleep(1.2)
    _fail_orphans(study, storage, grace=1.0)
    states = {t.number: t.state for t in study.get_trials()}
    assert states[popped.number] == optuna.trial.TrialState.FAIL
    assert states[live.number] == optuna.trial.TrialState.RUNNING
    retries = [t for t in study.get_trials() if t.state == optuna.trial.TrialState.WAITING]
    assert len(retries) == 1 and retries[0].params == {"log_epsilon": 0.25}
