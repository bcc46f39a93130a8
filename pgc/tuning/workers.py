"""Who runs a trial: a worker's identity (host, boot, process and its start time), the claim a trial carries,
failing the trials of dead workers at once, and the heartbeats of a worker's trials in flight."""

from __future__ import annotations

import contextlib
import os
import socket
import threading

import optuna
from optuna.trial import TrialState


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux clock ticks since boot), or None if it is gone / unknown."""
    try:
        stat = open(f"/proc/{pid}/stat", "rb").read().decode(errors="replace")
        fields = stat.rsplit(")", 1)[1].split()
        return None if fields[0] in ("Z", "X") else fields[19]  # a zombie is gone, only not yet reaped
    except (OSError, IndexError):
        return None


def _boot_id() -> str:
    try:
        return open("/proc/sys/kernel/random/boot_id").read().strip()
    except OSError:
        return ""


def worker_identity(pid: int | None = None) -> dict:
    """Who runs a trial: host, boot id, pid and the process's start time (a reused pid differs in it)."""
    pid = os.getpid() if pid is None else pid
    return {"host": socket.gethostname(), "boot": _boot_id(), "pid": pid, "start": _process_start(pid)}


def claim(trial: optuna.Trial) -> None:
    """Record this process as the worker of ``trial`` (its identity plus the trial's number)."""
    trial.set_user_attr("worker", worker_identity() | {"trial": trial.number})


def claimed_by(trial: optuna.trial.FrozenTrial) -> dict | None:
    """The identity of the worker that claimed ``trial``; None for an unclaimed trial, including a
    popped retry whose ``worker`` attribute is still the copy of its origin's."""
    identity = trial.user_attrs.get("worker")
    return identity if isinstance(identity, dict) and identity.get("trial") == trial.number else None


def worker_key(identity) -> int:
    """A 32-bit number from a worker identity (dict or string), for seeding."""
    import hashlib
    import json

    text = identity if isinstance(identity, str) else json.dumps(identity, sort_keys=True)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def _worker_is_dead(identity) -> bool:
    """True only when ``identity`` names a process of THIS machine (same host and boot) that is gone."""
    if not isinstance(identity, dict):
        return False
    me = worker_identity()
    if (
        identity.get("host") != me["host"]
        or identity.get("boot") != me["boot"]
        or not isinstance(identity.get("pid"), int)
    ):
        return False  # another machine's worker: only its heartbeat can tell
    start = _process_start(identity["pid"])
    return start is None or (identity.get("start") is not None and start != identity["start"])


def fail_dead_workers(study: optuna.Study, storage) -> list[int]:
    """Fail at once the RUNNING trials whose worker process on this machine is gone (a quick resume,
    before their heartbeat goes stale) and re-queue each once with its parameters, as the heartbeat
    callback does for stale trials. Returns the failed trial numbers."""
    callback = storage.get_heartbeat_stale_trial_callback()
    failed = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = claimed_by(t)
        if worker is None or not _worker_is_dead(worker):
            continue
        with contextlib.suppress(Exception):
            if storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL):
                failed.append(t.number)
                if callback is not None:
                    callback(study, storage.get_trial(t._trial_id))
    return failed


class Heartbeat:
    """Records heartbeats for the in-flight trials of this worker until stopped."""

    def __init__(self, storage, trial_ids: list[int], interval: float):
        self.storage, self.ids, self.interval = storage, list(trial_ids), interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for tid in list(self.ids):
                try:
                    self.storage.record_heartbeat(tid)
                except Exception:  # a finished trial, a transient DB error: the next beat retries
                    pass
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
