"""``pgc bench replicate``: the replication grid pooled in one batch vs one batch per setting.

A slice of the paper grid (every setting, K trials, a small cap, Table 1–3 trials stopping at their
first success) is run twice on the same configs: (a) pooled — one :func:`pgc.trainer.train_batch`
call for all settings, a finished trial's lanes go to the next pending one (what ``pgc replicate``
does); (b) reference, measured in the same run — one ``train_batch`` call per setting, one after the
other. Prints wall times, agent-steps/s, the ratio, and the full-grid time projected from the pooled
submissions/s (a rough guide: episode lengths change as policies learn).
"""

from __future__ import annotations

import argparse
import json
import os
import time

help = "replication grid: pooled lanes (one batch) vs one batch per setting"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trials", type=int, default=4, help="trials per setting (default 4)")
    p.add_argument("--cap", type=int, default=2000, help="submissions per trial (default 2000)")
    p.add_argument("--reading", default="sampled", help="reading preset (default sampled)")
    p.add_argument("--json", help="also write the numbers to this JSON file")


def run(args: argparse.Namespace) -> int:
    from pgc.kernel import warm_up
    from pgc.replicate import GridSpec, grid_settings, setting_configs
    from pgc.trainer import train_batch
    from pgc_cli.io import write_json_atomic

    if args.trials < 1 or args.cap < 1:
        raise ValueError("--trials and --cap must be positive")
    spec = GridSpec(reading=args.reading, trials=args.trials, cap=args.cap, curve_trials=0)
    per_setting = [setting_configs(spec, s) for s in grid_settings(spec)]
    warm_up()
    train_batch(per_setting[0][:1])  # compile / load every code path once

    start = time.perf_counter()
    pooled = train_batch([c for cs in per_setting for c in cs])
    pooled_wall = time.perf_counter() - start
    start = time.perf_counter()
    separate = [r for cs in per_setting for r in train_batch(cs)]
    separate_wall = time.perf_counter() - start

    steps_p = sum(r.agent_steps for r in pooled)
    steps_s = sum(r.agent_steps for r in separate)
    subs_p = sum(r.scores.size for r in pooled)
    full = GridSpec()
    full_subs = sum(len(setting_configs(full, s)) * full.cap for s in grid_settings(full) if s.role == "table")
    numbers = {"benchmark": "replicate", "reading": args.reading, "settings": len(per_setting),
               "trials_per_setting": args.trials, "cap": args.cap,
               "pooled_wall_s": pooled_wall, "pooled_agent_steps": steps_p, "pooled_steps_per_s": steps_p / pooled_wall,
               "separate_wall_s": separate_wall, "separate_agent_steps": steps_s,
               "separate_steps_per_s": steps_s / separate_wall,
               "ratio_steps_per_s": (steps_p / pooled_wall) / (steps_s / separate_wall),
               "pooled_submissions_per_s": subs_p / pooled_wall,
               "full_grid_upper_bound_submissions": full_subs,
               "full_grid_projection_s_if_no_trial_succeeds": full_subs / (subs_p / pooled_wall),
               "cpu_count": os.cpu_count(), "loadavg": os.getloadavg()}
    print(f"pooled (one batch):   {steps_p:,} agent-steps in {pooled_wall:.1f}s = {steps_p / pooled_wall:.3g}/s")
    print(f"reference (per setting): {steps_s:,} agent-steps in {separate_wall:.1f}s = {steps_s / separate_wall:.3g}/s")
    print(f"ratio: {numbers['ratio_steps_per_s']:.2f}x agent-steps/s")
    print(f"full grid ({full_subs:,} submissions if no trial stops early) at {subs_p / pooled_wall:,.0f} submissions/s: "
          f"≈ {numbers['full_grid_projection_s_if_no_trial_succeeds'] / 60:.0f} min at these episode lengths (load average {os.getloadavg()[0]:.1f})")
    if args.json:
        write_json_atomic(args.json, {"numbers": numbers})
    else:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in numbers.items()}))
    return 0
