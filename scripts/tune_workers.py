#!/usr/bin/env python3
"""N tuning workers on one PostgreSQL study, one of them SIGKILLed while its trial trains.

    python scripts/tune_workers.py --workers 4 --trials 100 --json results/tune/postgres-4x25.json
    python scripts/tune_workers.py --storage postgresql://user@host/db ...   # an existing server

Runs ``pgc tune --workers N`` (a throwaway server from pgc.tuning.postgres_cluster unless --storage is
given), kills one worker process mid-trial, waits for the command to finish and counts: finished
trials, duplicate parameter sets, trials left RUNNING/WAITING (stuck), failed trials, and the
killed trial's retry (same parameters, same seeds). tests/pgc/tuning/test_postgres.py uses the same function.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pgc.schemas import TuneWorkers

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _kill_one_training_worker(proc, storage, study: str, start: float, deadline_s: float) -> tuple | None:
    """SIGKILL the first worker seen training an original trial (parameters drawn, not a retry)."""
    import optuna
    from optuna.trial import TrialState

    from pgc.tuning.workers import claimed_by

    while time.monotonic() - start < deadline_s:
        time.sleep(0.03)
        assert proc.poll() is None, (
            "the study ended before a worker could be killed: " + proc.stderr.read().decode()[-3000:]
        )
        try:
            trials_now = optuna.load_study(study_name=study, storage=storage).get_trials(
                deepcopy=False, states=(TrialState.RUNNING,)
            )
        except KeyError:
            continue
        for t in trials_now:
            w = claimed_by(t)
            if (
                w is not None
                and "seeds" in t.user_attrs
                and t.system_attrs.get("failed_trial") is None
                and w.get("pid") not in (None, proc.pid)
            ):
                os.kill(w["pid"], signal.SIGKILL)
                # its parameters are read after the run: this snapshot may predate them (PostgreSQL
                # reads a trial's tables in separate statements, each seeing the latest commits)
                return t.number, w["pid"], round(time.monotonic() - start, 2)  # trial, process, seconds
    return None


def tune_workers_killed(
    url: str,
    study: str,
    out: Path,
    *,
    workers: int,
    trials: int,
    kill: bool = True,
    runs: int = 8,
    submissions: int = 4000,
    seed: int = 5,
    deadline_s: float = 150,
) -> TuneWorkers:
    """``pgc tune --workers N`` on one study; with ``kill``, one worker process is SIGKILLed while its
    trial trains. Returns what happened, as results/tune/ records it (``ok``: every requested trial finished
    once, none stuck, the killed one retried once to the end)."""
    import optuna
    from optuna.trial import TrialState

    from pgc.schemas import KilledWorker, RetriedTrial, TuneWorkers
    from pgc.tuning import trial_seeds
    from pgc.tuning.storage import make_storage

    done = (TrialState.COMPLETE, TrialState.PRUNED)
    cmd = [
        sys.executable,
        "-m",
        "pgc.cli",
        "tune",
        "--out",
        str(out),
        "--storage",
        url,
        "--study",
        study,
        "--trials",
        str(trials),
        "--batch",
        "1",
        "--workers",
        str(workers),
        "--runs-per-trial",
        str(runs),
        "--submissions",
        str(submissions),
        "--rungs",
        "1",
        "--sampler",
        "random",
        "--heartbeat",
        "1",
        "--grace",
        "3",
        "--seed",
        str(seed),
    ]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=_env())
    storage = make_storage(url)
    seen: tuple | None = None
    try:
        if kill:
            seen = _kill_one_training_worker(proc, storage, study, start, deadline_s)
        stdout, stderr = proc.communicate(timeout=max(1.0, deadline_s - (time.monotonic() - start)))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wall = time.monotonic() - start
    trials_all = optuna.load_study(study_name=study, storage=storage).get_trials(deepcopy=False)
    finished = [t for t in trials_all if t.state in done]
    params = [json.dumps(t.params, sort_keys=True) for t in finished]
    killed = None
    if seen:
        trial, pid, after_s = seen
        killed_params = next(t.params for t in trials_all if t.number == trial)
        killed = KilledWorker(trial=trial, pid=pid, after_s=after_s, params=killed_params)
    retries = [
        RetriedTrial(
            number=t.number,
            state=t.state.name,
            same_params=t.params == killed.params,
            seeds_from_killed_trial=t.user_attrs.get("seeds") == trial_seeds(seed, killed.trial, runs),
        )
        for t in trials_all
        if killed and t.system_attrs.get("failed_trial") == killed.trial
    ]
    storage.engine.dispose()
    duplicates = len(params) - len(set(params))
    stuck = sum(t.state in (TrialState.RUNNING, TrialState.WAITING) for t in trials_all)
    ok = (
        proc.returncode == 0
        and len(finished) == trials
        and duplicates == 0
        and stuck == 0
        and killed is not None
        and len(retries) == 1
        and retries[0].state in ("COMPLETE", "PRUNED")
    )
    return TuneWorkers(
        workers=workers,
        trials_requested=trials,
        ok=ok,
        finished=len(finished),
        duplicates=duplicates,
        stuck=stuck,
        failed=sorted(t.number for t in trials_all if t.state == TrialState.FAIL),
        surplus=sorted(t.number for t in trials_all if t.user_attrs.get("surplus")),
        killed=killed,
        retries_of_killed=retries,
        returncode=proc.returncode,
        wall_s=round(wall, 2),
        command=" ".join(cmd[1:]),
        stderr=stderr.decode()[-3000:],
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--runs-per-trial", type=int, default=8)
    p.add_argument("--submissions", type=int, default=4000)
    p.add_argument("--storage", help="PostgreSQL URL (default: a throwaway server)")
    p.add_argument("--out", default=None, help="pgc tune --out folder (default: a temporary one)")
    p.add_argument("--json", help="write the outcome here")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import tempfile

    import pgc.tuning.postgres_cluster as pg

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp) / "tune"
        if args.storage:
            r = tune_workers_killed(
                args.storage,
                f"w-{uuid.uuid4().hex[:8]}",
                out,
                workers=args.workers,
                trials=args.trials,
                runs=args.runs_per_trial,
                submissions=args.submissions,
                deadline_s=540,
            )
        else:
            with pg.Cluster() as url:
                r = tune_workers_killed(
                    url,
                    f"w-{uuid.uuid4().hex[:8]}",
                    out,
                    workers=args.workers,
                    trials=args.trials,
                    runs=args.runs_per_trial,
                    submissions=args.submissions,
                    deadline_s=540,
                )
    script = "python scripts/tune_workers.py " + " ".join(argv if argv is not None else sys.argv[1:])
    outcome = dataclasses.replace(r, script=script)
    print(json.dumps(outcome.to_dict(), indent=1))
    if args.json:
        from pgc.files import write_json_atomic

        write_json_atomic(args.json, outcome.to_dict())
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    sys.exit(main())
