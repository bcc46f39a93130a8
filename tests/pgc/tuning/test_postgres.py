"""Shared optuna studies on PostgreSQL: N workers on one study, a worker killed mid-trial, and the
storage contract the tuning code relies on, run against SQLite and PostgreSQL alike.

The PostgreSQL server comes from the session fixture ``postgres_url`` (scripts/postgres.py); these
tests always run."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import uuid
import warnings
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from pgc.tuning import Evaluation, SearchSpace, StudySettings, export_study, run_study, trial_seeds
from pgc.tuning.storage import make_storage, storage_url
from pgc.tuning.study import open_study
from pgc.tuning.workers import claim, fail_dead_workers, worker_identity

ROOT = Path(__file__).resolve().parents[3]
DONE = (TrialState.COMPLETE, TrialState.PRUNED)


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _settings(seed: int = 3, **ev) -> StudySettings:
    return StudySettings(
        space=SearchSpace(mechanisms=("laplace", "prs")),
        evaluation=Evaluation(**({"runs_per_trial": 2, "submissions": 60, "rungs": (1.0,)} | ev)),
        sampler="random",
        seed=seed,
    )


@pytest.fixture(params=["sqlite", "postgres"])
def any_storage(request, tmp_path) -> str:
    """The same suite on both storages (optuna's own storage tests are parametrized the same way)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return request.getfixturevalue("postgres_url")


def test_postgres_url_maps_to_psycopg3(postgres_url):
    assert storage_url("postgresql://u@h:5/d") == "postgresql+psycopg://u@h:5/d"
    assert storage_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    assert storage_url("sqlite:///x.db") == "sqlite:///x.db"
    storage = make_storage(postgres_url)
    assert storage.engine.dialect.driver == "psycopg"


# ---------------------------------------------------------------------------------------------
# storage contract (SQLite and PostgreSQL)
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_postgres_workers_opening_a_fresh_database_together_all_succeed(postgres_url):
    """N machines started at once on an empty database each create optuna's tables; the losers of
    that race (a duplicate type or table) try again instead of failing. Without the retry, 8 of 10
    such rounds had a process fail."""
    import psycopg

    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); from pgc.tuning.storage import make_storage; "
        "make_storage(sys.argv[1]).engine.dispose()"
    )
    for _ in range(2):
        database = _name("fresh").replace("-", "_")
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {database}")
        url = postgres_url.rsplit("/", 1)[0] + "/" + database
        procs = [
            subprocess.Popen([sys.executable, "-c", code, url, str(ROOT)], stderr=subprocess.PIPE) for _ in range(4)
        ]
        errors = [p.communicate(timeout=120)[1].decode()[-800:] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, errors


def test_storage_contract_study_attrs_and_refusal(any_storage):
    name = _name("c")
    study = open_study(name, make_storage(any_storage), _settings(), worker_id="a")
    assert study.metric_names == ["utility", "privacy"]
    assert [d.name for d in study.directions] == ["MAXIMIZE", "MINIMIZE"]
    again = open_study(name, make_storage(any_storage), _settings(), worker_id="b")
    assert again.user_attrs["settings"] == study.user_attrs["settings"]
    with pytest.raises(ValueError, match="different settings"):
        open_study(name, make_storage(any_storage), _settings(seed=4))


def test_storage_contract_stale_trial_fails_and_is_retried_once(any_storage):
    storage = make_storage(any_storage, heartbeat_interval=1, grace_period=1)
    study = open_study(_name("h"), storage, _settings())
    dist = {"x": optuna.distributions.FloatDistribution(0.0, 1.0)}
    stale = study.ask(dist)
    storage.record_heartbeat(stale._trial_id)
    live = study.ask(dist)
    time.sleep(2.2)  # past the grace period even at SQLite's one-second clock
    storage.record_heartbeat(live._trial_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)
    by_number = {t.number: t for t in study.get_trials()}
    assert by_number[stale.number].state == TrialState.FAIL
    assert by_number[live.number].state == TrialState.RUNNING
    retries = [t for t in by_number.values() if t.system_attrs.get("failed_trial") == stale.number]
    assert len(retries) == 1 and retries[0].state == TrialState.WAITING and retries[0].params == stale.params
    popped = study.ask(dist)
    assert popped.params == stale.params  # the retry is handed out first, with the same parameters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)  # nothing is failed twice
    assert sum(t.state == TrialState.FAIL for t in study.get_trials()) == 1


def _trial_of_a_dead_worker(url: str):
    """A study whose one RUNNING trial (fresh heartbeat) was claimed by a process of this machine that
    has ended: (storage, study, trial, the dead pid)."""
    storage = make_storage(url, heartbeat_interval=60, grace_period=600)
    study = open_study(_name("d"), storage, _settings())
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    trial = study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)})
    storage.record_heartbeat(trial._trial_id)
    trial.set_user_attr("worker", {**worker_identity(), "pid": gone.pid, "start": "1", "trial": trial.number})
    return storage, study, trial, gone.pid


def test_storage_contract_dead_local_worker_fails_at_once(any_storage):
    storage, study, trial, _ = _trial_of_a_dead_worker(any_storage)
    assert fail_dead_workers(study, storage) == [trial.number]
    assert fail_dead_workers(study, storage) == []


def test_storage_contract_a_popped_retry_is_not_taken_for_its_dead_origin(any_storage):
    """A retry carries its origin's attributes, the dead worker's identity among them. Popped by a live
    worker, it must not be failed as that dead worker's trial before or after the live one claims it."""
    storage, study, origin, gone = _trial_of_a_dead_worker(any_storage)
    origin.set_user_attr("seeds", [1, 2])
    assert fail_dead_workers(study, storage) == [origin.number]
    retry = study.ask()  # the retry, popped by a live worker: RUNNING with the copied attributes
    assert retry.params == origin.params and retry.user_attrs["worker"]["pid"] == gone
    assert fail_dead_workers(study, storage) == []
    claim(retry)
    storage.record_heartbeat(retry._trial_id)
    assert fail_dead_workers(study, storage) == []
    assert storage.get_trial(retry._trial_id).state == TrialState.RUNNING


def test_storage_contract_run_study_exact_count_and_export(any_storage):
    name = _name("r")
    run_study(name, any_storage, _settings(seed=9), n_trials=3, batch=2, heartbeat_interval=1, log=lambda m: None)
    result = export_study(name, any_storage)
    assert (result.counts.complete or 0) + (result.counts.pruned or 0) == 3
    assert result.counts.fail is None
    assert [t.seeding.seeds for t in result.trials] == [trial_seeds(9, t.number, 2) for t in result.trials]
    assert ":***@" in result.storage or "@" not in any_storage
    run_study(name, any_storage, _settings(seed=9), n_trials=3, log=lambda m: None)  # nothing left to do
    assert len(export_study(name, any_storage).trials) == 3


def test_storage_contract_a_surplus_trial_is_given_back(any_storage):
    """Workers asking at the same moment: the trial beyond the budget is failed as surplus and
    a retry it had popped goes back to the queue."""
    from pgc.tuning.study import _requeue_if_retry, _surplus

    storage = make_storage(any_storage)
    study = open_study(_name("s"), storage, _settings())
    dist = {"x": optuna.distributions.FloatDistribution(0.0, 1.0)}
    study.add_trial(
        optuna.create_trial(
            state=TrialState.WAITING, params={"x": 0.5}, distributions=dist, system_attrs={"failed_trial": 7}
        )
    )
    a, b = study.ask(dist), study.ask(dist)
    assert a.params == {"x": 0.5} and not _surplus(study, a, 1) and _surplus(study, b, 1)
    third = study.ask(dist)
    assert _surplus(study, third, 2)
    storage.set_trial_state_values(a._trial_id, state=TrialState.FAIL)
    _requeue_if_retry(study, storage, a)
    waiting = study.get_trials(states=(TrialState.WAITING,))
    assert len(waiting) == 1 and waiting[0].params == {"x": 0.5} and waiting[0].system_attrs["failed_trial"] == 7


def test_storage_contract_a_worker_dying_before_its_first_heartbeat_leaves_no_trial_stuck(any_storage, monkeypatch):
    """A worker on another machine dies right after asking for a trial, inside its first heartbeat.
    The trial has no heartbeat to go stale and the dead process is not on this machine, so only the
    orphan rule can reap it: it must (the trial was not claimed yet), and the study finishes."""
    name = _name("h")
    die_in_first_heartbeat = (
        "import os, sys; sys.path.insert(0, sys.argv[3])\n"
        "from optuna.storages import RDBStorage\n"
        "RDBStorage.record_heartbeat = lambda self, trial_id: os._exit(9)\n"
        "from pgc.tuning import Evaluation, SearchSpace, StudySettings, run_study\n"
        "settings = StudySettings(space=SearchSpace(mechanisms=('laplace', 'prs')), evaluation=Evaluation("
        "runs_per_trial=2, submissions=60, rungs=(1.0,)), sampler='random', seed=3)\n"
        "run_study(sys.argv[2], sys.argv[1], settings, 2, batch=1, heartbeat_interval=1, grace_period=1)\n"
    )
    dead = subprocess.run(
        [sys.executable, "-c", die_in_first_heartbeat, any_storage, name, str(ROOT)], capture_output=True, timeout=120
    )
    assert dead.returncode == 9, dead.stderr.decode()[-2000:]
    import pgc.tuning.workers as workers_module

    monkeypatch.setattr(workers_module, "_worker_is_dead", lambda identity: False)  # as if on another machine
    study = run_study(
        name,
        any_storage,
        _settings(),
        n_trials=2,
        batch=1,
        heartbeat_interval=1,
        grace_period=1,
        timeout=60,
        log=lambda m: None,
    )
    trials = study.get_trials(deepcopy=False)
    assert len([t for t in trials if t.state in DONE]) == 2, [(t.number, t.state.name) for t in trials]
    assert [t.number for t in trials if t.state == TrialState.FAIL] == [0]


@pytest.mark.parametrize("moment", ["evaluation", "tell"])
def test_storage_contract_a_live_trial_failed_as_stale_is_dropped_and_its_retry_counts(
    any_storage, monkeypatch, moment
):
    """A worker whose heartbeat lapsed (another worker failed its trial as stale and re-queued the
    parameters) while it trained, or just before it told the result, drops the result instead of
    crashing and goes on: the study still ends with exactly --trials finished trials, the stale
    one's retry among them."""
    import pgc.tuning.study as study_module

    name = _name("l")
    storage = make_storage(any_storage)
    failed_under: list[int] = []

    def fail_as_stale(trial_id: int) -> None:  # what another worker's reap does to a trial gone stale
        storage.set_trial_state_values(trial_id, state=TrialState.FAIL)
        storage.get_heartbeat_stale_trial_callback()(
            optuna.load_study(study_name=name, storage=storage), storage.get_trial(trial_id)
        )
        failed_under.append(storage.get_trial(trial_id).number)

    if moment == "evaluation":
        original = study_module.evaluate_batch

        def evaluate_after_a_lapse(pending, ev, log=print, *, executor=None):
            if not failed_under:
                fail_as_stale(pending[0].trial._trial_id)
            return original(pending, ev, log, executor=executor)

        monkeypatch.setattr(study_module, "evaluate_batch", evaluate_after_a_lapse)
    else:
        original_tell = optuna.Study.tell

        def tell_after_a_lapse(self, trial, *args, **kwargs):
            if not failed_under:
                fail_as_stale(trial._trial_id)
            return original_tell(self, trial, *args, **kwargs)

        monkeypatch.setattr(optuna.Study, "tell", tell_after_a_lapse)
    messages: list[str] = []
    study = run_study(name, any_storage, _settings(), n_trials=3, batch=1, log=messages.append)
    trials = study.get_trials(deepcopy=False)
    assert len([t for t in trials if t.state in DONE]) == 3
    assert [t.number for t in trials if t.state == TrialState.FAIL] == failed_under == [0]
    (retry,) = [t for t in trials if t.system_attrs.get("failed_trial") == 0]
    assert retry.state in DONE and retry.params == trials[0].params and retry.user_attrs["seed_origin_trial"] == 0
    if moment == "evaluation":
        assert "utility" not in trials[0].user_attrs  # the dropped result wrote nothing
    assert any("trial 0 was failed by another worker" in m for m in messages), messages


# ---------------------------------------------------------------------------------------------
# N workers on one PostgreSQL study, one killed mid-trial
# ---------------------------------------------------------------------------------------------


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _tune_workers():
    spec = importlib.util.spec_from_file_location("pgc_scripts_tune_workers", ROOT / "scripts" / "tune_workers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_postgres_three_workers_one_killed_mid_trial_exact_trials_no_duplicates(postgres_url, tmp_path):
    r = _tune_workers().tune_workers_killed(postgres_url, _name("w"), tmp_path / "tune", workers=3, trials=12)
    assert r.returncode == 0, r.stderr
    assert r.killed is not None and r.killed.params, r.killed  # killed while its trial trained
    assert f"did not finish cleanly (pid, exit code): [({r.killed.pid}, -9)]" in r.stderr, r.stderr
    assert r.finished == 12, r
    assert r.duplicates == 0 and r.stuck == 0
    assert r.surplus == [] and r.failed == [r.killed.trial], r  # workers ask one at a time
    assert r.retries_of_killed is not None and len(r.retries_of_killed) == 1, r
    retry = r.retries_of_killed[0]
    assert retry.state in ("COMPLETE", "PRUNED") and retry.same_params and retry.seeds_from_killed_trial, (
        retry,
        r.killed,
    )
    assert r.ok
    result = json.loads((tmp_path / "tune" / "tune.json").read_text())
    assert result["storage"].startswith("postgresql+psycopg://")
    assert sum(result["counts"].get(k, 0) for k in ("COMPLETE", "PRUNED")) == 12


@pytest.mark.slow
def test_postgres_a_second_command_joins_the_same_study(postgres_url, tmp_path):
    """Two separate commands (as on two machines) on one study: together exactly --trials."""
    name = _name("j")
    base = [
        "tune",
        "--storage",
        postgres_url,
        "--study",
        name,
        "--trials",
        "6",
        "--batch",
        "1",
        "--runs-per-trial",
        "2",
        "--submissions",
        "400",
        "--rungs",
        "1",
        "--sampler",
        "random",
        "--heartbeat",
        "1",
        "--seed",
        "2",
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "pgc.cli", *base, "--out", str(tmp_path / f"m{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        for i in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1].decode()[-2000:] for o in outs]
    study = optuna.load_study(study_name=name, storage=storage_url(postgres_url))
    finished = [t for t in study.trials if t.state in DONE]
    assert len(finished) == 6
    # the two commands asked one at a time (an advisory lock): every trial its own sampler seed, none surplus
    assert len({t.user_attrs["sampler_seed"] for t in finished}) == 6
    assert len({json.dumps(t.params, sort_keys=True) for t in finished}) == 6
    assert not [t for t in study.trials if t.state == TrialState.FAIL]


def test_cluster_script_help_and_a_missing_command_start_no_server(capsys):
    from pgc.tuning.postgres_cluster import main

    assert main(["--help"]) == 0 and "--install" in capsys.readouterr().out
    assert main(["--instal"]) == 2 and "unknown option '--instal'" in capsys.readouterr().err
    assert main(["--", "no-such-command-here", "tune"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no command 'no-such-command-here'" in err and "postgres:" not in err
