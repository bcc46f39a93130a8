"""``pgc bench train``: agent-steps/s of the whole training loop against a naive reference.

Whole loop = environment + policy + gradient (eqs. 15–18) + mechanism + aggregation (eq. 22), for K
trials × W workers, each trial one compiled loop, trials spread over ``--processes`` processes.
References, measured in the same run on one agent: the naive one of the speed target (the textbook
A3C worker: gymnasium CartPole, a forward pass with its autograd graph per step, the loss summed step
by step and one backward per episode) and, for context, a tuned torch loop (forward under no_grad,
one batched loss per episode). All three follow the same exploration schedule (§4), so their episodes
have comparable lengths; the mean lengths are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from pgc.errors import UserError
from pgc.options import add_seed

help = "agent-steps/s of the compiled trainer vs a naive one-agent torch A3C loop"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trials", type=int, default=512, help="K trials in the batch (default 512)")
    p.add_argument("--submissions", type=int, default=2000, help="submissions per trial (default 2000)")
    p.add_argument("--mechanism", default="laplace", choices=["laplace", "prs", "none"])
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--naive-seconds", type=float, default=10.0, help="how long to time the naive loop")
    p.add_argument(
        "--processes",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes the trials are dealt to (default: all cores)",
    )
    add_seed(p, default=0)
    p.add_argument("--json", help="also write the numbers to this JSON file")


def run(args: argparse.Namespace) -> int:
    import pgc.schemas as schemas
    from pgc.a3c.kernel import warm_up
    from pgc.a3c.model import glorot_uniform_theta
    from pgc.a3c.reference import batched_loss_steps_per_second, naive_steps_per_second
    from pgc.a3c.trainer import TrainConfig, train_batch
    from pgc.files import write_json_atomic

    if args.trials < 1 or args.submissions < 1 or args.naive_seconds <= 0:
        raise UserError("--trials, --submissions and --naive-seconds must be positive")
    warm_up()
    eps = float("inf") if args.mechanism == "none" else args.epsilon
    configs = [
        TrainConfig(
            mechanism=args.mechanism,
            epsilon=eps,
            submissions=args.submissions,
            buffer_size=100 if args.mechanism == "prs" else 1,
            seed=args.seed + i,
        )
        for i in range(args.trials)
    ]
    train_batch(configs[:1])  # compile / load every code path once
    start = time.perf_counter()
    results = train_batch(configs, processes=args.processes)
    fast_wall = time.perf_counter() - start
    fast_steps = sum(r.agent_steps for r in results)
    fast_rate = fast_steps / fast_wall

    fast_episodes = sum(r.scores.size for r in results)

    theta_rng, naive_rng, tuned_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(args.seed).spawn(3))
    theta = glorot_uniform_theta(theta_rng)
    naive_rate, naive_steps, naive_episodes = naive_steps_per_second(theta, args.naive_seconds, naive_rng)
    tuned_rate, tuned_steps, tuned_episodes = batched_loss_steps_per_second(theta, args.naive_seconds, tuned_rng)
    ratio = fast_rate / naive_rate
    numbers = schemas.TrainBenchNumbers(
        mechanism=args.mechanism,
        epsilon=eps,
        trials=args.trials,
        workers_per_trial=9,
        processes=args.processes,
        submissions_per_trial=args.submissions,
        compiled=schemas.TrainLoopSpeed(
            vectorised_agent_steps=fast_steps,
            vectorised_wall_s=fast_wall,
            vectorised_steps_per_s=fast_rate,
            vectorised_steps_per_s_per_process=fast_rate / args.processes,
            vectorised_mean_episode=fast_steps / fast_episodes,
        ),
        references=schemas.TrainReferenceSpeeds(
            naive_agent_steps=naive_steps,
            naive_steps_per_s=naive_rate,
            naive_mean_episode=naive_steps / max(1, naive_episodes),
            ratio=ratio,
            tuned_torch_steps_per_s=tuned_rate,
            tuned_torch_mean_episode=tuned_steps / max(1, tuned_episodes),
            ratio_vs_tuned_torch=fast_rate / tuned_rate,
        ),
        host=schemas.BenchHost(
            cpu_count=os.cpu_count(),
            loadavg_1min=os.getloadavg()[0],
            machine=platform.machine(),
            python=platform.python_version(),
        ),
    )
    print(
        f"compiled trainer: {fast_steps:,} agent-steps in {fast_wall:.1f}s = {fast_rate:.3g} agent-steps/s "
        f"({args.trials} trials x 9 workers, {args.mechanism}, {args.submissions} submissions each, "
        f"{args.processes} processes; {fast_rate / args.processes:.3g}/s per process; "
        f"mean episode {numbers.compiled.vectorised_mean_episode:.1f} steps)"
    )
    print(
        f"naive reference:  {naive_steps:,} agent-steps in {args.naive_seconds:.1f}s = {naive_rate:.3g} "
        "agent-steps/s "
        f"(textbook A3C worker: gymnasium agent, autograd graph per step, backward per episode; "
        f"mean episode {numbers.references.naive_mean_episode:.1f} steps)"
    )
    print(
        f"tuned torch loop: {tuned_steps:,} agent-steps in {args.naive_seconds:.1f}s = {tuned_rate:.3g} "
        "agent-steps/s "
        "(no_grad forward per step, one batched loss per episode; mean episode "
        f"{numbers.references.tuned_torch_mean_episode:.1f})"
    )
    print(
        f"ratio: {ratio:,.0f}x the naive reference ({numbers.references.ratio_vs_tuned_torch:,.0f}x the tuned torch "
        "loop)"
    )
    if args.json:
        write_json_atomic(args.json, schemas.BenchNumbers(numbers=numbers).to_dict())
    else:
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in numbers.to_dict().items()}))
    return 0
