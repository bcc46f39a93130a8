"""``pgc bench scale``: what limits scaling out, measured against the local engine in the same run.

1. Per-task overhead: an empty task through (a) a plain call, (b) the local process engine (forked
   processes), (c) the Ray engine — one at a time (latency) and all submitted together (amortised).
2. Throughput on a replication-sized batch (the paper grid, every setting, K trials, a small cap):
   one local process, 2 local processes (``train_batch(processes=2)``, what ``pgc replicate
   --processes 2`` does), the Ray engine (chunked tasks, default granularity) and the Ray engine
   with one trial per task. Every run must give results bit-identical to the one-process run.
3. The serial fraction f from the 1→2 process speed-up S (Amdahl: f = 2/S − 1).
4. The storage cost of one tuning trial (ask, attributes, tell; no training) on SQLite and on a
   throwaway PostgreSQL server (pgc.tuning.postgres_cluster), the bound on tune's trial rate.

Ratios are against the local process engine of the same run. ``--json`` writes every number.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import pgc.schemas as schemas
from pgc.errors import UserError

from . import goals_exit

help = "scale-out: per-task overhead, local vs Ray throughput, serial fraction, storage cost per trial"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trials", type=int, default=4, help="trials per grid setting (default 4)")
    p.add_argument("--cap", type=int, default=2000, help="submissions per trial (default 2000)")
    p.add_argument("--tasks", type=int, default=200, help="empty tasks for the overhead measurement (default 200)")
    p.add_argument("--storage-trials", type=int, default=40, help="trials for the storage measurement (default 40)")
    p.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL storage measurement")
    p.add_argument("--json", help="also write the numbers to this JSON file")


def _noop(x):
    return x


def _overheads(n: int, ray_engine, local_engine) -> schemas.TaskOverhead:
    import ray

    t = time.perf_counter()
    for i in range(n):
        _noop(i)
    call_us = (time.perf_counter() - t) / n * 1e6
    pool = local_engine._pool_for_bench()
    t = time.perf_counter()
    for i in range(n):
        pool.submit(_noop, i).result()
    local_latency_ms = (time.perf_counter() - t) / n * 1e3
    t = time.perf_counter()
    list(pool.map(_noop, range(n)))
    local_amortised_ms = (time.perf_counter() - t) / n * 1e3
    remote = ray.remote(num_cpus=1)(_noop)
    ray.get([remote.remote(i) for i in range(4)])  # workers up
    t = time.perf_counter()
    for i in range(n):
        ray.get(remote.remote(i))
    ray_latency_ms = (time.perf_counter() - t) / n * 1e3
    t = time.perf_counter()
    ray.get([remote.remote(i) for i in range(n)])
    ray_amortised_ms = (time.perf_counter() - t) / n * 1e3
    return schemas.TaskOverhead(
        call_us=call_us,
        local_process_latency_ms=local_latency_ms,
        local_process_amortised_ms=local_amortised_ms,
        ray_latency_ms=ray_latency_ms,
        ray_amortised_ms=ray_amortised_ms,
    )


def _identical(a, b) -> bool:
    return all(
        np.array_equal(x.theta, y.theta) and np.array_equal(x.scores, y.scores) and x.updates == y.updates
        for x, y in zip(a, b, strict=False)
    ) and len(a) == len(b)


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _storage_cost(url: str, n: int) -> schemas.StorageCost:
    import warnings

    import optuna

    from pgc.tuning.storage import make_storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        storage = make_storage(url, heartbeat_interval=30)
        study = optuna.create_study(
            study_name=f"bench-{time.time_ns()}", storage=storage, directions=["maximize", "minimize"]
        )
        dist = {
            "x": optuna.distributions.FloatDistribution(0.0, 1.0),
            "m": optuna.distributions.CategoricalDistribution(["laplace", "prs"]),
        }
        t = time.perf_counter()
        for _ in range(n):  # what one tuning trial writes, without the training
            trial = study.ask(dist)
            storage.record_heartbeat(trial._trial_id)
            for k in (
                "worker",
                "seeds",
                "seed_origin_trial",
                "success_ratio",
                "median_fst",
                "final_mu",
                "horizon",
                "fsts",
                "utility",
                "privacy",
                "claimed_epsilon",
            ):
                trial.set_user_attr(k, 1.0)
            study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
            study.tell(trial, [0.5, 1.0])
        wall = time.perf_counter() - t
    storage.engine.dispose()
    return schemas.StorageCost(ms_per_trial=wall / n * 1e3, trials_per_s=n / wall, trials=n)


def run(args: argparse.Namespace) -> int:
    from pgc.a3c.kernel import warm_up
    from pgc.a3c.trainer import train_batch
    from pgc.engines import LocalEngine, RayEngine
    from pgc.files import write_json_atomic
    from pgc.replication.grid import GridSpec, grid_settings, setting_configs

    if min(args.trials, args.cap, args.tasks, args.storage_trials) < 1:
        raise UserError("--trials, --cap, --tasks and --storage-trials must be positive")
    spec = GridSpec(reading="sampled", trials=args.trials, cap=args.cap, curve_trials=0)
    configs = [c for s in grid_settings(spec) for c in setting_configs(spec, s)]
    warm_up()
    train_batch(configs[:1])

    t = time.perf_counter()
    ray_engine = RayEngine(num_cpus=2)
    ray_start = time.perf_counter() - t
    local2 = LocalEngine(2)
    loadavg_at_start = os.getloadavg()[0]
    try:
        overhead = _overheads(args.tasks, ray_engine, local2)
        # the first Ray batch also loads the compiled kernel in each worker: measured apart
        _, ray_first_batch = _timed(lambda: train_batch(configs[:4], executor=ray_engine))
        batch = _batch_timings(configs, args, ray_engine)
    finally:
        local2.close()
        ray_engine.close()
    storage = _storage_costs(args)
    numbers = schemas.ScaleBenchNumbers(
        command=" ".join(["pgc", "bench", "scale"] + sys.argv[3:]),
        cpu_count=os.cpu_count(),
        python=platform.python_version(),
        ray_start_s=ray_start,
        loadavg_1min_at_start=loadavg_at_start,
        overhead=overhead,
        ray_first_batch_s=ray_first_batch,
        batch=batch,
        storage_per_trial=storage,
        loadavg_1min_at_end=os.getloadavg()[0],
    )
    _print_scale(numbers, args)
    if args.json:
        write_json_atomic(args.json, schemas.BenchNumbers(numbers=numbers).to_dict())
    else:
        print(json.dumps(numbers.to_dict()))
    return goals_exit(
        [
            f"{name}: results differ from the one-process run (goal: identical)"
            for name, same in batch.identical.to_dict().items()
            if not same
        ]
    )


def _batch_timings(configs, args: argparse.Namespace, ray_engine) -> schemas.ScaleBatch:
    """One grid batch run serially, on 2 local processes, on Ray (chunked and one trial per task)."""
    from pgc.a3c.trainer import train_batch

    serial, t1 = _timed(lambda: train_batch(configs))
    local, t2 = _timed(lambda: train_batch(configs, processes=2))
    ray_out, tr = _timed(lambda: train_batch(configs, executor=ray_engine))
    ray_engine.chunk = 1
    ray_fine, tr1 = _timed(lambda: train_batch(configs, executor=ray_engine))
    ray_engine.chunk = None
    steps = sum(r.agent_steps for r in serial)
    speedup = t1 / t2
    return schemas.ScaleBatch(
        trials=len(configs),
        trials_per_setting=args.trials,
        cap=args.cap,
        agent_steps=steps,
        local_1_process_s=t1,
        local_2_processes_s=t2,
        ray_2_cpus_s=tr,
        ray_one_trial_per_task_s=tr1,
        trial_mean_ms=t1 / len(configs) * 1e3,
        ray_vs_local_2_processes_throughput=t2 / tr,
        ray_one_trial_per_task_vs_local=t2 / tr1,
        speedup_1_to_2_processes=speedup,
        serial_fraction_amdahl=min(1.0, max(0.0, 2 / speedup - 1)),
        identical=schemas.ScaleIdentical(
            local_2_processes=_identical(serial, local),
            ray=_identical(serial, ray_out),
            ray_one_trial_per_task=_identical(serial, ray_fine),
        ),
    )


def _storage_costs(args: argparse.Namespace) -> schemas.ScaleStorage:
    """Per-trial cost of the tuning storage: SQLite, and PostgreSQL unless ``--no-postgres``."""
    from pathlib import Path

    db = Path(os.environ.get("TMPDIR", "/tmp")) / f"pgc-bench-{os.getpid()}.db"
    sqlite = _storage_cost(f"sqlite:///{db}", args.storage_trials)
    db.unlink(missing_ok=True)
    if args.no_postgres:
        return schemas.ScaleStorage(sqlite=sqlite)
    from pgc.tuning.postgres_cluster import Cluster

    with Cluster() as url:
        return schemas.ScaleStorage(sqlite=sqlite, postgresql=_storage_cost(url, args.storage_trials))


def _print_scale(numbers: schemas.ScaleBenchNumbers, args: argparse.Namespace) -> None:
    o, b = numbers.overhead, numbers.batch
    t1, t2, tr, tr1 = b.local_1_process_s, b.local_2_processes_s, b.ray_2_cpus_s, b.ray_one_trial_per_task_s
    print(
        f"Ray start-up {numbers.ray_start_s:.1f}s; first Ray batch (kernel loaded in each worker) "
        f"{numbers.ray_first_batch_s:.2f}s"
    )
    print(
        f"per-task overhead: call {o.call_us:.2f} µs; local processes {o.local_process_latency_ms:.3f} ms "
        f"latency / {o.local_process_amortised_ms:.3f} ms amortised; Ray {o.ray_latency_ms:.3f} ms latency / "
        f"{o.ray_amortised_ms:.3f} ms amortised"
    )
    print(
        f"batch of {b.trials} trials (cap {args.cap:,}, mean {b.trial_mean_ms:.1f} ms/trial): 1 process "
        f"{t1:.2f}s, 2 processes {t2:.2f}s (speed-up {b.speedup_1_to_2_processes:.2f}, serial fraction "
        f"{b.serial_fraction_amdahl:.3f}), Ray {tr:.2f}s, Ray one trial/task {tr1:.2f}s"
    )
    print(
        f"throughput vs the local process engine (2 processes): Ray {b.ray_vs_local_2_processes_throughput:.2f}x, "
        f"Ray one trial/task {b.ray_one_trial_per_task_vs_local:.2f}x; identical results: {b.identical.to_dict()}"
    )
    storage = numbers.storage_per_trial
    for k, v in (("sqlite", storage.sqlite), ("postgresql", storage.postgresql)):
        if v is not None:
            print(f"storage per tuning trial ({k}): {v.ms_per_trial:.1f} ms = {v.trials_per_s:.0f} trials/s per writer")
