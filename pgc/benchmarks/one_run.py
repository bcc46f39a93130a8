"""``pgc bench one-run``: the cost of certifying ε_LB with one training run that carries M crafted canary
agents (``pgc train --canaries`` then the one-run audit) against the multi-sample audit of the same
participant at the same crafted θ (:func:`audit.engine.system_audit.audit_system`) reaching the same bound:
agent-steps (environment steps played, the auditor's own simulations included) and seconds."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.options import add_out, add_samples, add_seed
from pgc.schemas.bench_study_results import MultiSampleCost, OneRunBench, OneRunCost

help = "one training run with canaries vs the multi-sample audit reaching the same ε_LB (agent-steps, seconds)"

DEFAULT_THETA = "audit/one-run/crafted_theta_5_15.npy"  # a shipped reference (results/ of the repository)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--canaries", type=int, default=10_000, help="M canary agents (default 10,000)")
    p.add_argument("--submissions", type=int, default=1000, help="regular submissions N of the run (default 1000)")
    p.add_argument("--theta", help=f"crafted θ for 5 vs 15 (.npy; default the shipped results/{DEFAULT_THETA})")
    add_samples(
        p,
        nargs="+",
        default=[1000, 5000, 10_000, 20_000, 50_000, 100_000],
        help="multi-sample audit: certification releases per side to try (default 1000 … 100000)",
    )
    add_seed(p, default=0)
    add_out(p, help="write the numbers as JSON here")


def _multi_sample(system, pair, theta, n: int, seed: int, mean_len: float) -> MultiSampleCost:
    """The multi-sample audit of the gradient at the same crafted θ, ``n`` per side: its bound, time and cost."""
    from audit.engine.system_audit import audit_system

    t0 = time.perf_counter()
    res = audit_system(system, *pair, samples=n, seed=seed, broadcast=theta, channels=["gradient"])
    wall = time.perf_counter() - t0
    eps = res.rows[0].epsilon_lower_bound
    releases = 2 * (n + max(1_000, int(0.25 * n)))  # certification + training splits, both sides
    row = MultiSampleCost(
        samples_per_side=n,
        epsilon_lower_bound=eps,
        seconds=wall,
        releases=releases,
        agent_steps=int(round(releases * mean_len)),
    )
    print(
        f"multi-sample audit, {n:,} per side: ε_LB {eps:.3f}, {wall:.2f}s, {releases:,} releases "
        f"(~{row.agent_steps:,} agent-steps)"
    )
    return row


def run(args: argparse.Namespace) -> int:
    from audit.one_run import one_run_audit
    from pgc.a3c.system import PGCA3CSystem
    from pgc.a3c.trainer import TrainConfig, train
    from pgc.a3c.transcript import transcript_releases

    if args.canaries < 10 or args.submissions < 1:
        raise UserError("--canaries must be >= 10 and --submissions >= 1")
    from pgc.references import reference_path

    theta = np.load(args.theta or reference_path(DEFAULT_THETA), allow_pickle=False).astype(np.float64).ravel()
    pair = (5.0, 15.0)
    config = TrainConfig(
        submissions=args.submissions,
        canaries=args.canaries,
        canary_pair=pair,
        canary_model="crafted",
        canary_theta=tuple(theta),
        seed=args.seed,
    )
    t0 = time.perf_counter()
    result = train(config, record_transcript=True)
    t_train = time.perf_counter() - t0
    pos = result.canaries.positions
    canary_steps = int(result.transcript.score[pos].astype(np.int64).sum())  # a canary's score = its episode's steps
    mean_len = canary_steps / pos.size
    truth = (result.ground_truth.psi[pos] == pair[1]).astype(np.int64)
    system = PGCA3CSystem(config.build_mechanism(), theta, hyper=config.hyper)
    samples = max(40_000, 4 * pos.size)
    t0 = time.perf_counter()
    row = one_run_audit(
        system,
        *pair,
        transcript_releases(result.transcript, pos),
        truth,
        [theta],
        channels=("gradient",),
        samples=samples,
        seed=args.seed,
    )[0]
    t_audit = time.perf_counter() - t0
    simulated_steps = int(round(2 * samples * mean_len))  # the auditor's releases at the same crafted θ
    one_run = OneRunCost(
        epsilon_lower_bound=row.epsilon_lower_bound,
        canaries=int(pos.size),
        train_seconds=t_train,
        audit_seconds=t_audit,
        run_agent_steps=int(result.agent_steps),
        canary_agent_steps=canary_steps,
        auditor_simulated_agent_steps=simulated_steps,
        mean_canary_episode=mean_len,
    )
    print(
        f"one run: N={args.submissions} + M={pos.size:,} crafted canaries, 5 vs 15, Laplace ε=1: "
        f"ε_LB {row.epsilon_lower_bound:.3f}; train {t_train:.2f}s ({result.agent_steps:,} agent-steps, "
        f"{canary_steps:,} of them the canaries'), audit {t_audit:.2f}s (~{simulated_steps:,} simulated agent-steps)"
    )
    multi = [_multi_sample(system, pair, theta, n, args.seed, mean_len) for n in args.samples]
    reach = next((m for m in multi if m.epsilon_lower_bound >= row.epsilon_lower_bound), None)
    if reach:
        print(
            f"the multi-sample audit reaches the one run's ε_LB {row.epsilon_lower_bound:.3f} at "
            f"{reach.samples_per_side:,} per side: {reach.agent_steps:,} agent-steps, {reach.seconds:.2f}s, "
            f"against the one run's {canary_steps + simulated_steps:,} agent-steps (canaries + simulations), "
            f"{t_train + t_audit:.2f}s"
        )
    else:
        print("the multi-sample audit did not reach the one run's bound at the sample sizes tried")
    if args.out:
        from pgc.files import write_json_atomic

        command = (
            f"pgc bench one-run --canaries {args.canaries} --submissions {args.submissions} --samples "
            f"{' '.join(map(str, args.samples))} --seed {args.seed}"
            + (f" --theta {args.theta}" if args.theta else "")
            + f" --out {args.out}"
        )
        result = OneRunBench(one_run=one_run, multi_sample=multi, reached_at=reach, command=command)
        write_json_atomic(Path(args.out), result.to_dict())
        print(f"wrote {args.out}")
    return 0
