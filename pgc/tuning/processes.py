"""A tuning run on this machine (``pgc tune``): the study folder and its storage made ready, then one worker,
or N forked worker processes sharing one study, until it holds the asked-for finished trials.

    plan = WorkerPlan(study="pgc-tune", storage=prepare_storage(url, out, 30, None), trials=30)
    run_workers(plan, settings, log)       # plan.workers processes; one process runs run_worker itself

A worker that dies (killed) leaves its trial to the others, which fail and retry it
(:mod:`pgc.tuning.workers`); the study still ends with the asked-for finished trials.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from pgc.errors import UserError


@dataclass(frozen=True)
class WorkerPlan:
    """Who works on which study: its name and storage URL, the finished trials it should hold, the
    trials of one batch, the heartbeat and grace (s), the engine of each batch's training, and the
    worker processes of this machine (``worker_id`` mixed into each one's sampler seed)."""

    study: str
    storage: str
    trials: int
    batch: int = 4
    timeout: float | None = None
    heartbeat: int = 30
    grace: int | None = None
    engine: str = "local"
    address: str | None = None
    workers: int = 1
    worker_id: str | None = None


def is_tune_folder(out: Path) -> bool:
    """A folder an earlier ``pgc tune`` wrote (its SQLite study or tune.json), marker or not."""
    db = out / "study.db"
    try:
        if db.is_file() and not db.is_symlink():
            with open(db, "rb") as fh:
                return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
    return False


def check_tune_folder(out: Path) -> None:
    """The output folder is absent, empty, or a study folder (ours, resumed; one without its marker too)."""
    from pgc.outdirs import MARKER_FILE, OutputDirError, check_output_dir

    if not is_tune_folder(out):
        check_output_dir(out, update=True, command="tune")
        return
    try:
        check_output_dir(out, update=True, command="tune")
    except OutputDirError as exc:
        if MARKER_FILE not in str(exc):
            raise


@contextlib.contextmanager
def folder_lock(folder: Path):
    """Hold an exclusive ``flock`` on ``folder`` itself (waiting for it): no lock file is left behind."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise UserError(f"cannot open {folder}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def open_storage(url: str, heartbeat: int, grace: int | None) -> None:
    """Connect once to the storage before any work: a missing database driver, a malformed URL or an
    unreachable server is a one-line error."""
    import warnings

    from .storage import make_storage, safe_url

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            storage = make_storage(url, heartbeat, grace)
    except ImportError as exc:
        raise UserError(
            f"storage {safe_url(url)} needs a database driver that is not installed "
            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        ) from None
    except Exception as exc:  # sqlalchemy errors: bad URL, server unreachable, not a database
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise UserError(f"cannot open storage {safe_url(url)}: {type(exc).__name__}: {first}") from None
    engine = getattr(storage, "engine", None)
    if engine is not None:
        engine.dispose()


def prepare_storage(storage: str, out: Path, heartbeat: int, grace: int | None) -> str:
    """The storage URL with its driver, its database created (SQLite: one worker at a time, the study
    folder ``out`` marked at once)."""
    from pgc.outdirs import write_marker

    from .storage import storage_url

    storage = storage_url(storage)  # postgresql:// → the psycopg 3 driver
    if storage.startswith("sqlite:///"):
        db_folder = Path(storage[len("sqlite:///") :]).parent
        db_folder.mkdir(parents=True, exist_ok=True)
        if db_folder.resolve() == out.resolve():  # marked at once: a worker starting beside us sees ours
            write_marker(out, command="tune")
        with folder_lock(db_folder):  # workers starting together create the SQLite schema one at a time
            open_storage(storage, heartbeat, grace)
    else:
        open_storage(storage, heartbeat, grace)
    return storage


def finished_trials(study: str, storage: str) -> int:
    """Complete and pruned trials of the study in the storage (0 for a study not created yet)."""
    import optuna
    from optuna.trial import TrialState

    try:
        found = optuna.load_study(study_name=study, storage=storage)
    except KeyError:
        return 0
    return len(found.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))


def check_batch_budget(settings, batch: int) -> None:
    """The largest training batch the study will run (``batch`` trials of ``settings``), validated (limits,
    memory) before anything starts."""
    from pgc.a3c.trainer import TrainConfig, check_batch_size

    from .space import HYPER_PRESETS

    ev = settings.evaluation
    try:
        config = TrainConfig(
            submissions=max(ev.rung_submissions()),
            workers=ev.workers,
            gravities=ev.gravities,
            hyper=HYPER_PRESETS[ev.hyper],
        )
        check_batch_size([config] * (batch * ev.runs_per_trial), False)
    except ValueError as exc:
        raise UserError(f"invalid tuning budget: {exc}") from None


def run_worker(plan: WorkerPlan, settings, log: Callable[[str], None]) -> None:
    """One worker: run the study until it holds ``plan.trials`` finished trials (with the plan's engine)."""
    from pgc.engines import chosen_engine

    from .study import run_study

    kw = dict(
        batch=plan.batch,
        timeout=plan.timeout,
        heartbeat_interval=plan.heartbeat,
        grace_period=plan.grace,
        log=log,
        worker_id=plan.worker_id,
    )
    if plan.engine == "local":
        run_study(plan.study, plan.storage, settings, plan.trials, **kw)
        return
    with chosen_engine(plan.engine, plan.address) as engine:
        before = finished_trials(plan.study, plan.storage)
        run_study(plan.study, plan.storage, settings, plan.trials, executor=engine, **kw)
        print(
            f"ran {finished_trials(plan.study, plan.storage) - before} trial(s), their training in {engine.tasks} "
            f"task(s) on {engine.describe()}",
            flush=True,
        )


def run_workers(plan: WorkerPlan, settings, log: Callable[[str], None]) -> None:
    """``plan.workers`` forked worker processes on one study (one: this process). Each worker's id is
    ``<worker_id>-<i>``; a dead worker is reaped at once and named; every worker failing is a UserError."""
    import multiprocessing
    import multiprocessing.connection

    if plan.workers == 1:
        run_worker(plan, settings, log)
        return
    ctx = multiprocessing.get_context("fork")
    procs = []
    for i in range(plan.workers):
        worker = replace(plan, worker_id=f"{plan.worker_id}-{i}" if plan.worker_id is not None else None)
        procs.append(ctx.Process(target=_worker_main, args=(worker, settings), name=f"pgc-tune-{i}"))
    for p in procs:
        p.start()
    log(f"{plan.workers} workers: pids {[p.pid for p in procs]}")
    try:  # reap each worker as it ends (a killed one must not linger as a zombie that looks alive)
        alive = list(procs)
        while alive:
            ended = multiprocessing.connection.wait([p.sentinel for p in alive])
            for p in [p for p in alive if p.sentinel in ended]:
                p.join()
                alive.remove(p)
    except BaseException:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
        raise
    died = [(p.pid, p.exitcode) for p in procs if p.exitcode != 0]
    if died:
        log(f"workers that did not finish cleanly (pid, exit code): {died}")
        if len(died) == len(procs):
            raise UserError("every tuning worker failed")


def _worker_main(plan: WorkerPlan, settings) -> None:
    def log(msg: str) -> None:
        print(f"[worker {os.getpid()}] {msg}", file=sys.stderr, flush=True)

    run_worker(plan, settings, log)
