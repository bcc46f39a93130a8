"""Where a study lives: the storage URL (SQLite, PostgreSQL) and the RDB storage with heartbeats."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import optuna

from pgc.errors import UserError

FAILED_TRIAL_RETRIES = 3  # a trial whose worker died is retried this many times
SCHEMA_CREATION_ATTEMPTS = 8  # make_storage: tries when workers create the tables of a fresh database together


def storage_url(url: str) -> str:
    """The SQLAlchemy URL for ``url``: ``postgresql://`` and ``postgres://`` use the psycopg 3 driver
    (``postgresql+psycopg://``); every other URL is returned unchanged."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_storage(url: str, heartbeat_interval: int = 30, grace_period: int | None = None) -> optuna.storages.RDBStorage:
    if "://" not in url:
        raise UserError(f"storage must be an optuna RDB URL such as sqlite:///study.db, got {url!r}")
    import sqlalchemy.exc

    url = storage_url(url)
    grace = grace_period if grace_period is not None else 3 * heartbeat_interval

    def open_rdb() -> optuna.storages.RDBStorage:
        return optuna.storages.RDBStorage(
            url,
            heartbeat_interval=heartbeat_interval,
            grace_period=grace,
            heartbeat_stale_trial_callback=optuna.storages.RetryHeartbeatStaleTrialCallback(
                max_retry=FAILED_TRIAL_RETRIES
            ),
            engine_kwargs=(
                {"pool_pre_ping": True} if not url.startswith("sqlite") else {"connect_args": {"timeout": 60}}
            ),
        )

    for attempt in range(SCHEMA_CREATION_ATTEMPTS - 1):
        try:
            return open_rdb()
        except (sqlalchemy.exc.IntegrityError, sqlalchemy.exc.ProgrammingError):
            # Workers opening a fresh database together all create optuna's tables; PostgreSQL lets one
            # win and rolls the others back (a duplicate type or table). Their next try finds the tables.
            time.sleep(0.1 * (attempt + 1))
    return open_rdb()  # the last try: its error is the caller's


def safe_url(url: str) -> str:
    """The storage URL without a password."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        cred, host = rest.rsplit("@", 1)
        user = cred.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}"
    return url


@contextlib.contextmanager
def ask_lock(url: str, storage, study: str) -> Iterator[None]:
    """One worker of a study at a time in the block (counting its trials and asking for new ones), waiting
    for the others: with SQLite an ``flock`` on the database's folder (every worker is on this machine),
    with PostgreSQL a session advisory lock keyed by the study's name (workers on any machine). Both die
    with a killed worker. Other storages get no lock (the study's surplus rule covers them)."""
    url = storage_url(url)
    if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        folder = Path(url[len("sqlite:///") :]).resolve().parent
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock
        return
    engine = getattr(storage, "engine", None)
    if not url.startswith("postgresql") or engine is None:
        yield
        return
    from sqlalchemy import text

    key = int.from_bytes(hashlib.sha256(f"pgc-tune ask {study}".encode()).digest()[:8], "big", signed=True)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
