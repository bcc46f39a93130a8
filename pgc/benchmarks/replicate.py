"""``pgc bench replicate``: a slice of the replication grid on all cores vs one process.

A slice of the paper grid (every setting, K trials, a small cap, Table 1–3 trials stopping at their
first success) is run twice on the same configs: (a) ``train_batch(processes=P)``, what
``pgc replicate --processes P`` does; (b) reference, measured in the same run: one process. Trials
draw only from their own seeds, so both runs must give identical results (checked). Prints wall
times, agent-steps/s, the ratio, and the full-grid time projected from (a)'s submissions/s (a rough
guide: episode lengths change as policies learn).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from pgc.errors import UserError

from . import goals_exit

help = "replication grid slice: P processes vs one, identical results checked"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trials", type=int, default=4, help="trials per setting (default 4)")
    p.add_argument("--cap", type=int, default=2000, help="submissions per trial (default 2000)")
    p.add_argument("--reading", default="sampled", help="reading preset (default sampled)")
    p.add_argument(
        "--processes", type=int, default=os.cpu_count() or 1, help="processes of run (a) (default: all cores)"
    )
    p.add_argument("--json", help="also write the numbers to this JSON file")


def run(args: argparse.Namespace) -> int:
    import pgc.schemas as schemas
    from pgc.a3c.kernel import warm_up
    from pgc.a3c.trainer import train_batch
    from pgc.files import write_json_atomic
    from pgc.replication.grid import GridSpec, grid_settings, setting_configs

    if args.trials < 1 or args.cap < 1 or args.processes < 1:
        raise UserError("--trials, --cap and --processes must be positive")
    spec = GridSpec(reading=args.reading, trials=args.trials, cap=args.cap, curve_trials=0)
    configs = [c for s in grid_settings(spec) for c in setting_configs(spec, s)]
    warm_up()
    train_batch(configs[:1])  # compile / load every code path once

    start = time.perf_counter()
    parallel = train_batch(configs, processes=args.processes)
    parallel_wall = time.perf_counter() - start
    start = time.perf_counter()
    serial = train_batch(configs)
    serial_wall = time.perf_counter() - start
    identical = all(
        np.array_equal(a.theta, b.theta) and np.array_equal(a.scores, b.scores)
        for a, b in zip(parallel, serial, strict=False)
    )

    steps = sum(r.agent_steps for r in parallel)
    subs = sum(r.scores.size for r in parallel)
    full = GridSpec()
    full_subs = sum(len(setting_configs(full, s)) * full.cap for s in grid_settings(full) if s.role == "table")
    numbers = schemas.ReplicateBenchNumbers(
        reading=args.reading,
        trials=len(configs),
        trials_per_setting=args.trials,
        cap=args.cap,
        processes=args.processes,
        timings=schemas.ReplicateSliceTimings(
            parallel_wall_s=parallel_wall,
            serial_wall_s=serial_wall,
            agent_steps=steps,
            parallel_steps_per_s=steps / parallel_wall,
            serial_steps_per_s=steps / serial_wall,
            ratio=serial_wall / parallel_wall,
            identical_results=identical,
        ),
        projection=schemas.GridProjection(
            parallel_submissions_per_s=subs / parallel_wall,
            full_grid_upper_bound_submissions=full_subs,
            full_grid_projection_s_if_no_trial_succeeds=full_subs / (subs / parallel_wall),
        ),
        host=schemas.BenchHost(cpu_count=os.cpu_count(), loadavg_1min=os.getloadavg()[0]),
    )
    print(
        f"{args.processes} processes: {steps:,} agent-steps in {parallel_wall:.1f}s = {steps / parallel_wall:.3g}/s "
        f"({len(configs)} trials, cap {args.cap:,})"
    )
    print(f"1 process (reference): {serial_wall:.1f}s = {steps / serial_wall:.3g}/s")
    print(f"ratio: {numbers.timings.ratio:.2f}x; identical results: {identical}")
    print(
        f"full grid ({full_subs:,} submissions if no trial stops early) at {subs / parallel_wall:,.0f} "
        "submissions/s: "
        f"≈ {numbers.projection.full_grid_projection_s_if_no_trial_succeeds / 60:.1f} min at these episode lengths"
    )
    if args.json:
        write_json_atomic(args.json, schemas.BenchNumbers(numbers=numbers).to_dict())
    else:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in numbers.to_dict().items()}))
    return goals_exit(
        [] if identical else [f"{args.processes} processes gave other results than one (goal: identical)"]
    )
