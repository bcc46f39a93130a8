"""The optuna study: ask a batch of trials, train them together, prune at rungs, tell, export.

Why batches: B optuna trials × R runs each go to one :func:`pgc.a3c.trainer.train_batch` call (every
run one compiled loop seeded by its own seed), so a batch is trained, pruned and told together. Each trial is
evaluated at increasing submission budgets ("rungs"); after an intermediate rung a trial that shows no sign of
learning (no success and median average score below ``prune_below_mu``) is pruned, the rest are trained again at
the next budget.

Storage and resuming: any optuna RDB URL (SQLite file by default; PostgreSQL/MySQL for N workers on
many machines). In-flight trials send heartbeats; when a worker is killed its trials go stale, and the
next worker to start marks them failed and re-queues their parameters (``RetryHeartbeatStaleTrialCallback``).
Completed trials are never touched. ``n_trials`` counts finished (complete + pruned) trials of the
whole study, so re-running the same command after a kill continues up to the same total.

Killed workers: a RUNNING trial records its worker (host, boot id, pid, process start time) together
with the trial's own number — a retry is created with its origin's attributes, so until the worker
that pops it records itself, the copied identity names the dead worker of another trial and must not
count. A worker starting on the same machine fails at once the trials of workers that are gone (no
waiting for the grace period) and re-queues each once. Stale trials are also reaped before every batch.

Seeds: before every trial it asks for, a worker seeds the sampler from (study seed, trials asked so far)
(:func:`next_sampler_seed`) — no host, no process — so the same ``--seed`` proposes the same trials on any
machine. Workers count the study's trials and ask for new ones one at a time (:func:`pgc.tuning.storage.ask_lock`:
an ``flock`` for SQLite, an advisory lock for PostgreSQL), so no two asks see the same count: the seeds never
repeat and no trial is created beyond the budget. Every trial's training seeds come from
SeedSequence([study seed, trial number]) (the original number for a retried trial) and are stored as the
trial's ``seeds`` attribute, its sampler seed as ``sampler_seed``.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import optuna
from optuna.trial import TrialState

from pgc.errors import UserError

from .space import HYPER_PRESETS, Evaluation, StudySettings
from .storage import ask_lock, make_storage
from .workers import Heartbeat, claim, claimed_by, fail_dead_workers, worker_key

if TYPE_CHECKING:
    from pgc.a3c.trainer import TrainConfig

FORMAT = "pgc-tune/1"


def pareto_front(points: list[tuple[int, float, float]]) -> list[int]:
    """Ids of the points not dominated when maximising utility and minimising privacy.

    ``points``: (id, utility, privacy). A point is dominated if another is at least as good in both
    and strictly better in one. Equal points are all kept.
    """
    front = []
    for i, u, p in points:
        dominated = any((u2 >= u and p2 <= p) and (u2 > u or p2 < p) for j, u2, p2 in points if j != i)
        if not dominated:
            front.append(i)
    return sorted(front)


def trial_seeds(study_seed: int, trial_number: int, runs: int) -> list[int]:
    """Training seeds of one trial: SeedSequence([study seed, trial number]) → ``runs`` 31-bit ints."""
    state = np.random.SeedSequence([study_seed, trial_number]).generate_state(runs, dtype=np.uint32)
    return [int(s) >> 1 for s in state]


def run_metrics(fsts: np.ndarray, final_mu: np.ndarray, horizon: int) -> dict:
    """Utility of one trial's runs at ``horizon`` submissions (FST ∞ counts as a failure)."""
    fsts = np.asarray(fsts, dtype=float)
    return {
        "success_ratio": float(np.mean(fsts <= horizon)),
        "median_fst": float(np.median(fsts)),
        "final_mu": float(np.median(final_mu)) if len(final_mu) else 0.0,
        "horizon": int(horizon),
        "fsts": [float(f) for f in fsts],
    }


def utility_value(metrics: dict, which: str) -> float:
    return metrics["success_ratio"] if which == "success_ratio" else min(1.0, metrics["final_mu"] / 200.0)


def should_prune(metrics: dict, ev: Evaluation) -> bool:
    """Rung rule: prune when no run succeeded and the median average score shows no learning."""
    return metrics["success_ratio"] == 0.0 and metrics["final_mu"] < ev.prune_below_mu


def _directions(settings: StudySettings) -> list[str]:
    return ["maximize", "minimize"] if settings.mode == "pareto" else ["minimize"]


def _sampler(settings: StudySettings, seed: int):
    """Seeded sampler. In constrained mode the feasibility (utility ≥ target) is stored with each trial
    (``Trial.set_constraint``) and TPE/NSGA-II rank feasible trials first."""
    if settings.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if settings.sampler == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=12)
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=10, multivariate=True, group=True)


def open_study(
    name: str,
    storage: optuna.storages.BaseStorage,
    settings: StudySettings,
    sampler_seed: int | None = None,
    worker_id: str | None = None,
) -> optuna.Study:
    """Create or load the study; refuses to mix settings with an existing study of the same name.

    The sampler's seed is :func:`next_sampler_seed` (study seed, trials already stored, ``worker_id`` when
    given); :func:`run_study` re-seeds it before every trial it asks for."""
    directions = _directions(settings)
    try:
        existing = optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        existing = None
    wanted = settings.to_dict()
    if existing is not None:
        stored = existing.user_attrs.get("settings")
        if stored is not None and stored != _jsonable(wanted):
            raise UserError(
                f"study {name!r} in this storage was created with different settings; "
                "use another --study name or the same options"
            )
        n_stored = len(existing.trials)
    else:
        n_stored = 0
    seed = sampler_seed if sampler_seed is not None else next_sampler_seed(settings, n_stored, worker_id)
    study = optuna.create_study(
        study_name=name, storage=storage, directions=directions, sampler=_sampler(settings, seed), load_if_exists=True
    )
    if existing is None:
        study.set_user_attr("settings", _jsonable(wanted))
        study.set_user_attr("format", FORMAT)
        metric_names = ["utility", "privacy"] if settings.mode == "pareto" else ["privacy"]
        study.set_metric_names(metric_names)  # optuna-dashboard labels the axes privacy vs utility with these
        ev = settings.evaluation
        study.set_user_attr(
            "objectives",
            {
                "utility": f"{ev.utility} at {ev.submissions} submissions (maximize)",
                "privacy": ("claimed ε" if ev.privacy == "claimed" else "audited ε lower bound") + " (minimize)",
            },
        )
    return study


def next_sampler_seed(settings: StudySettings, trials_stored: int, worker_id: str | None = None) -> int:
    """The sampler's seed for the study's next trial: ``SeedSequence([study seed, trials asked so far])`` —
    the trials stored, not counting queued retries, so each ask adds one — (and the
    worker's name when one is given) — never the host or the process, so the same ``--seed`` asks the same
    trials on any machine. Workers count and ask one at a time (:func:`pgc.tuning.storage.ask_lock`), so no two
    asks see the same count and no two trials share a seed."""
    words = [settings.seed, trials_stored] + ([worker_key(worker_id)] if worker_id is not None else [])
    return int(np.random.SeedSequence(words).generate_state(1)[0] >> 1)


def _jsonable(obj):
    import json

    return json.loads(json.dumps(obj, default=str))


@dataclass
class _Pending:
    trial: optuna.Trial
    params: dict
    seeds: list[int]
    privacy: float
    claimed: float
    metrics: dict | None = None
    intermediate: dict | None = None


def _configs(p: _Pending, ev: Evaluation, submissions: int) -> list[TrainConfig]:
    from pgc.a3c.trainer import TrainConfig  # the trainer (torch, numba) loads only where trials train

    hyper = HYPER_PRESETS[ev.hyper]
    prm = p.params
    eps = math.inf if prm["mechanism"] == "none" else prm["epsilon"]
    return [
        TrainConfig(
            mechanism=prm["mechanism"],
            epsilon=eps,
            clip=prm["clip"],
            reduced_dim=prm.get("reduced_dim"),
            buffer_size=prm["buffer_size"],
            learning_rate=prm["learning_rate"],
            submissions=submissions,
            workers=ev.workers,
            gravities=ev.gravities,
            hyper=hyper,
            stop_at_success=True,
            seed=s,
        )
        for s in p.seeds
    ]


def _privacy_value(params: dict, ev: Evaluation, seed: int) -> tuple[float, float, dict]:
    """(privacy objective, claimed ε, extra attrs)."""
    claimed = math.inf if params["mechanism"] == "none" else float(params["epsilon"])
    if ev.privacy == "claimed" or math.isinf(claimed):
        return claimed, claimed, {}
    from pgc.mechanisms import make_mechanism

    try:
        from audit import audit_mechanism
    except ImportError as exc:  # pragma: no cover - the audit package is part of the project
        raise UserError(f"privacy='audit' needs the audit package: {exc}") from None
    mech = make_mechanism(params["mechanism"], claimed, params["clip"], params.get("reduced_dim"))
    res = audit_mechanism(mech, samples=ev.audit_samples, confidence=ev.audit_confidence, seed=seed)
    return (
        float(res.epsilon_lower_bound),
        claimed,
        {"audit_violation": bool(res.violation), "audit_wall_s": float(res.wall_time_s)},
    )


def evaluate_batch(
    pending: list[_Pending], ev: Evaluation, log: Callable[[str], None] = print, *, executor=None
) -> None:
    """Train every pending trial at each rung (all trials of a rung in ONE train_batch); prune between rungs.

    ``executor`` (``map(fn, iterable)``) spreads the rung's runs, e.g. over a Ray cluster."""
    active = list(pending)
    rungs = ev.rung_submissions()
    for r, n in enumerate(rungs):
        if not active:
            break
        configs = [c for p in active for c in _configs(p, ev, n)]
        t0 = time.perf_counter()
        from pgc.a3c.trainer import train_batch

        results = train_batch(configs, executor=executor)
        wall = time.perf_counter() - t0
        last = r == len(rungs) - 1
        survivors = []
        for i, p in enumerate(active):
            rs = results[i * ev.runs_per_trial : (i + 1) * ev.runs_per_trial]
            m = run_metrics(
                np.array([x.fst for x in rs]),
                np.array([x.average_scores[-1] if x.average_scores.size else 0.0 for x in rs]),
                n,
            )
            m["rung_wall_s"] = wall
            if last:
                p.metrics = m
            else:
                p.intermediate = (p.intermediate or {}) | {str(n): m}
                if should_prune(m, ev):
                    p.metrics = m
                    p.metrics["pruned_at"] = n
                else:
                    survivors.append(p)
        log(
            f"  rung {n:,} submissions: {len(active)} trial(s) × {ev.runs_per_trial} runs in {wall:.1f}s"
            + ("" if last else f", {len(active) - len(survivors)} pruned")
        )
        active = survivors


def run_study(
    name: str,
    storage_url: str,
    settings: StudySettings,
    n_trials: int,
    *,
    batch: int = 4,
    timeout: float | None = None,
    heartbeat_interval: int = 30,
    grace_period: int | None = None,
    log: Callable[[str], None] = print,
    worker_id: str | None = None,
    executor=None,
) -> optuna.Study:
    """Run (or resume) the study until it holds ``n_trials`` finished trials or ``timeout`` passes.

    ``worker_id`` names this worker for the sampler's seed (see :func:`open_study`). ``executor``
    (anything with ``map(fn, iterable)``, e.g. an engine of :mod:`pgc.engines`) trains each batch's runs;
    None trains them in this process. Results do not depend on it.

    Several workers may run this on one study at once (other processes or machines): a worker asks
    only for the trials that are neither finished nor in flight elsewhere, and while the rest are in
    flight it waits and reaps (a killed worker's trial is failed and retried), so the study ends with
    exactly ``n_trials`` finished trials."""
    if n_trials < 1 or batch < 1:
        raise UserError("n_trials and batch must be >= 1")
    with warnings.catch_warnings():  # heartbeats are used with ask/tell on purpose (see the module docstring)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")
        return _run(
            name,
            storage_url,
            settings,
            n_trials,
            batch,
            timeout,
            heartbeat_interval,
            grace_period,
            log,
            worker_id,
            executor,
        )


_COUNTED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)


def _run(
    name,
    storage_url,
    settings,
    n_trials,
    batch,
    timeout,
    heartbeat_interval,
    grace_period,
    log,
    worker_id=None,
    executor=None,
) -> optuna.Study:
    storage = make_storage(storage_url, heartbeat_interval, grace_period)
    study = open_study(name, storage, settings, worker_id=worker_id)
    grace = grace_period if grace_period is not None else 3 * heartbeat_interval
    poll = max(0.2, min(2.0, heartbeat_interval / 4))
    ev = settings.evaluation
    start = time.perf_counter()
    waiting_logged = False
    while True:
        if timeout is not None and time.perf_counter() - start > timeout:
            log(f"timeout after {time.perf_counter() - start:.0f}s")
            break
        pending: list[_Pending] = []
        with Heartbeat(storage, [], max(1.0, heartbeat_interval / 2)) as beat:
            try:
                with ask_lock(storage_url, storage, name):  # count and ask: one worker of the study at a time
                    fail_dead_workers(study, storage)  # trials of killed workers → FAIL, parameters re-queued once
                    optuna.storages.fail_stale_trials(study)
                    _fail_orphans(study, storage, grace)
                    done, in_flight = _finished_and_in_flight(study)
                    size = min(batch, n_trials - done - in_flight)
                    if done < n_trials and size > 0:
                        pending = _ask_trials(study, storage, settings, beat, size, n_trials, worker_id)
                if done >= n_trials:
                    break
                if pending:
                    _privacy_values(pending, ev)
                    log(f"batch of {len(pending)}: trials {[p.trial.number for p in pending]} ({done} finished so far)")
                    evaluate_batch(pending, ev, log, executor=executor)
            except BaseException:
                for tid in beat.ids:
                    with contextlib.suppress(Exception):
                        storage.set_trial_state_values(tid, state=TrialState.FAIL)
                raise
        if not pending:  # the rest is in flight in other workers: wait, and take over a killed one's trial
            if not waiting_logged:
                log(f"{in_flight} trial(s) in flight in other workers; waiting")
                waiting_logged = True
            time.sleep(poll)
            continue
        waiting_logged = False
        for p in pending:
            if not _tell(study, p, settings):
                log(
                    f"trial {p.trial.number} was failed by another worker while it ran (its heartbeat went "
                    "stale); its result is dropped and the trial's retry counts instead"
                )
    return study


def _ask_trials(
    study: optuna.Study, storage, settings, beat: Heartbeat, size: int, n_trials: int, worker_id: str | None = None
) -> list[_Pending]:
    """Up to ``size`` new trials, each asked with a sampler seeded by :func:`next_sampler_seed`, with a
    heartbeat and this worker's claim before anything else, its parameters and its seeds (a retried trial
    keeps its origin's). A storage without :func:`pgc.tuning.storage.ask_lock` may let two workers ask at the
    same moment: a trial beyond the budget (a surplus) is then failed, re-queued if it was a retry, and
    ends the batch."""
    ev = settings.evaluation
    pending: list[_Pending] = []
    for _ in range(size):
        asked = [t for t in study.get_trials(deepcopy=False) if t.state != TrialState.WAITING]  # +1 per ask
        seed = next_sampler_seed(settings, len(asked), worker_id)
        study.sampler = _sampler(settings, seed)
        trial = study.ask()
        storage.record_heartbeat(trial._trial_id)  # from now on a killed worker leaves a stale trial
        beat.ids.append(trial._trial_id)
        claim(trial)  # after the heartbeat: a claimed trial always has one to go stale
        if _surplus(study, trial, n_trials):  # another worker asked at the same moment
            beat.ids.remove(trial._trial_id)
            trial.set_user_attr("surplus", True)
            storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL)
            _requeue_if_retry(study, storage, trial)
            break
        trial.set_user_attr("sampler_seed", seed)
        params = settings.space.suggest(trial)
        retried = storage.get_trial_system_attrs(trial._trial_id).get("failed_trial")
        origin = trial.number if retried is None else retried
        seeds = trial_seeds(settings.seed, origin, ev.runs_per_trial)
        trial.set_user_attr("seeds", seeds)
        trial.set_user_attr("seed_origin_trial", origin)
        pending.append(_Pending(trial, params, seeds, math.nan, math.nan))
    return pending


def _privacy_values(pending: list[_Pending], ev: Evaluation) -> None:
    """Each trial's privacy objective (an audit when ``ev.privacy`` is "audit"), outside the ask lock."""
    for p in pending:
        p.privacy, p.claimed, extra = _privacy_value(p.params, ev, p.seeds[0])
        for k, v in extra.items():
            p.trial.set_user_attr(k, v)


def _surplus(study: optuna.Study, trial: optuna.Trial, n_trials: int) -> bool:
    """True when ``trial`` lies beyond the study's budget: more than ``n_trials`` finished or running
    trials were created up to and including it (workers asking at the same moment; the earlier
    trials keep their places)."""
    mine = trial._trial_id
    ahead = [t for t in study.get_trials(deepcopy=False, states=_COUNTED) if t._trial_id <= mine]
    return len(ahead) > n_trials


def _requeue_if_retry(study: optuna.Study, storage, trial: optuna.Trial) -> None:
    """A surplus trial that had popped a queued retry puts the retry back (same parameters and origin)."""
    t = storage.get_trial(trial._trial_id)
    if t.system_attrs.get("failed_trial") is None:
        return
    keep = {k: v for k, v in t.system_attrs.items() if k in ("failed_trial", "retry_history")}
    study.add_trial(
        optuna.create_trial(state=TrialState.WAITING, params=t.params, distributions=t.distributions, system_attrs=keep)
    )


def _fail_orphans(study: optuna.Study, storage, grace: float) -> None:
    """RUNNING trials with no heartbeat to go stale: a worker killed between ``study.ask()`` and the
    trial's first heartbeat. No worker ever claimed them (a live worker does within milliseconds of
    asking, right after the first heartbeat), so they are recognised by that once older than the grace
    period. They fail; one that already held parameters (a popped retry) is re-queued as the
    heartbeat callback would have done."""
    now = datetime.datetime.now()
    callback = storage.get_heartbeat_stale_trial_callback()
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if claimed_by(t) is not None or t.datetime_start is None or (now - t.datetime_start).total_seconds() <= grace:
            continue
        with contextlib.suppress(Exception):
            if storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL) and t.params and callback:
                callback(study, storage.get_trial(t._trial_id))


def _finished_and_in_flight(study: optuna.Study) -> tuple[int, int]:
    """Finished and running trials counted from one read of the storage: a worker's tell committed between
    two reads would count its trial in neither (the count would then ask a trial beyond the budget)."""
    states = [
        t.state
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING))
    ]
    finished = sum(s in (TrialState.COMPLETE, TrialState.PRUNED) for s in states)
    return finished, len(states) - finished


def _tell(study: optuna.Study, p: _Pending, settings: StudySettings) -> bool:
    """Record a trial's result. False when the trial had been failed as stale by another worker
    before the result was told (this worker's heartbeat lapsed): its parameters were re-queued, so
    the retry counts and this result does not (optuna's own ``skip_if_finished`` rule). Attributes
    written before the trial was failed stay on the failed trial; its state is what counts."""
    try:
        return _record_result(study, p, settings)
    except optuna.exceptions.UpdateFinishedTrialError:  # a write after the trial was failed
        return False


def _record_result(study: optuna.Study, p: _Pending, settings: StudySettings) -> bool:
    m = p.metrics
    ev = settings.evaluation
    utility = utility_value(m, ev.utility)
    t = p.trial
    for key in ("success_ratio", "median_fst", "final_mu", "horizon", "fsts"):
        t.set_user_attr(key, m[key])
    t.set_user_attr("utility", utility)
    t.set_user_attr("privacy", p.privacy)
    t.set_user_attr("claimed_epsilon", p.claimed)
    if p.intermediate:
        t.set_user_attr("intermediate", p.intermediate)
    pruned = "pruned_at" in m
    if settings.mode == "constrained":  # feasible iff ≤ 0: utility ≥ target
        t.set_constraint("utility_at_least", float(settings.min_utility) - utility)
    if settings.mode == "constrained" and not pruned:
        for step, im in sorted((int(k), v) for k, v in (p.intermediate or {}).items()):
            t.report(utility_value(im, ev.utility), step)
    if pruned:
        t.set_user_attr("pruned_at", m["pruned_at"])
        return study.tell(t, state=TrialState.PRUNED, skip_if_finished=True).state == TrialState.PRUNED
    values = [utility, p.privacy] if settings.mode == "pareto" else [p.privacy]
    told = study.tell(t, values, skip_if_finished=True)
    # a NaN value makes optuna fail the trial itself (with a warning): that result was told
    return told.state == TrialState.COMPLETE or any(math.isnan(v) for v in values)
