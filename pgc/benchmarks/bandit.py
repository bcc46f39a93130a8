"""``pgc bench bandit``: the batched federated LinUCB simulator against a reference loop written the
straightforward way (per silo, per round: a fresh d×d inverse and the K UCB scores in a Python loop),
in the same run on the same environment draws. The reference runs the first ``--reference-rounds``
rounds and is extrapolated per round to T (said in the output); both must choose the same arms."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.options import add_out, add_seed

from . import goals_exit

help = "federated LinUCB: batched simulator vs a per-silo, per-round reference loop"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--silos", type=int, default=100, help="M (default 100)")
    p.add_argument("--horizon", type=int, default=10_000, help="T (default 10000)")
    p.add_argument("--arms", type=int, default=100, help="K (default 100)")
    p.add_argument("--dim", type=int, default=10, help="d (default 10)")
    p.add_argument(
        "--runs", type=int, default=10, help="independent runs the batched simulator carries at once (default 10)"
    )
    p.add_argument("--reference-rounds", type=int, default=50, help="rounds the reference loop runs (default 50)")
    add_seed(p, default=0)
    add_out(p, default=None, help="write the numbers as JSON here (e.g. results/fedlinucb/bench.json)")


def reference_fedlinucb(env, cfg, rounds: int, follow: np.ndarray) -> float:
    """FedLinUCB the straightforward way, one run (R = 1): per silo, per round, a fresh inverse of
    V = λI + W_syn + W_i and a Python loop over the K arms' UCB scores. It plays the arms ``follow``
    (rounds, M) gives (the batched simulator's choices) after checking each is a maximizer of its
    own float64 scores to a relative 1e-5 (the batched simulator scores in float32; features of
    equal norm make exact ties at round 1, broken by rounding), so
    both walk the same path. Returns the fraction of silo-rounds where the check holds."""
    from pgc.fedlinucb.privacy import confidence_width, regularizer

    M, d = env.n_silos, env.dim
    lam = regularizer(0.0, M, 1, d, cfg.confidence)
    W_syn, U_syn = np.zeros((d, d)), np.zeros(d)
    W = [np.zeros((d, d)) for _ in range(M)]
    U = [np.zeros(d) for _ in range(M)]
    agree = 0
    for t in range(rounds):
        X, mu = env.contexts(t)
        beta = cfg.exploration_scale * float(confidence_width(t + 1, lam, M, d, cfg.noise_std, cfg.confidence))
        chosen = np.zeros((1, M), dtype=np.int64)
        for i in range(M):
            V_inv = np.linalg.inv(lam * np.eye(d) + W_syn + W[i])
            theta = V_inv @ (U_syn + U[i])
            scores = []
            for a in range(X.shape[2]):
                x = X[0, i, a].astype(np.float64)
                scores.append(x @ theta + beta * np.sqrt(max(x @ V_inv @ x, 0.0)))
            best_score = max(scores)
            agree += scores[follow[t, i]] >= best_score - 1e-5 * max(1.0, abs(best_score))
            chosen[0, i] = follow[t, i]
        mu_chosen = np.take_along_axis(mu, chosen[..., None], axis=2)[..., 0]
        y = env.rewards(t, chosen, mu_chosen)
        for i in range(M):
            x = X[0, i, chosen[0, i]].astype(np.float64)
            W[i] += np.outer(x, x)
            U[i] += x * y[0, i]
        if (t + 1) % cfg.batch_size == 0:
            W_syn += sum(W)
            U_syn += sum(U)
            W = [np.zeros((d, d)) for _ in range(M)]
            U = [np.zeros(d) for _ in range(M)]
    return agree / (rounds * M)


def run(args: argparse.Namespace) -> int:
    from pgc.fedlinucb.algorithms import fedlinucb
    from pgc.fedlinucb.config import BanditConfig
    from pgc.fedlinucb.env import SyntheticFamily

    if min(args.silos, args.horizon, args.arms, args.runs, args.reference_rounds) < 1 or args.dim < 2:
        raise UserError("--silos, --horizon, --arms, --runs, --reference-rounds must be >= 1 and --dim >= 2")
    ref_rounds = min(args.reference_rounds, args.horizon)
    root = np.random.SeedSequence(args.seed)
    env_seed, batched_seed = root.spawn(2)

    def environment(runs: int, seed):
        return SyntheticFamily(runs, args.silos, args.arms, args.dim, 0.5, np.random.default_rng(seed))

    cfg1 = BanditConfig(n_silos=args.silos, horizon=args.horizon, n_arms=args.arms, dim=args.dim, runs=1)
    # the same run three ways: batched (1 run, full T), reference (first rounds), batched over runs
    t0 = time.perf_counter()
    fast = fedlinucb(environment(1, env_seed), cfg1, record_actions=True, progress=True)
    t_fast = time.perf_counter() - t0
    cfg_short = BanditConfig(
        n_silos=args.silos,
        horizon=ref_rounds,
        n_arms=args.arms,
        dim=args.dim,
        runs=1,
        batch=min(cfg1.batch_size, ref_rounds),
    )
    if cfg_short.batch_size != cfg1.batch_size:
        raise UserError("--reference-rounds must be >= the batch size B")
    t0 = time.perf_counter()
    same = reference_fedlinucb(environment(1, env_seed), cfg_short, ref_rounds, fast.extra["actions"][0])
    t_ref = time.perf_counter() - t0
    cfg_many = BanditConfig(n_silos=args.silos, horizon=args.horizon, n_arms=args.arms, dim=args.dim, runs=args.runs)
    t0 = time.perf_counter()
    fedlinucb(environment(args.runs, batched_seed), cfg_many, progress=True)
    t_many = time.perf_counter() - t0

    result = _bandit_result(args, cfg1, ref_rounds, t_ref, t_fast, t_many, same)
    _print_bandit(args, cfg1, ref_rounds, result)
    if args.out:
        from pgc.files import write_json_atomic

        write_json_atomic(Path(args.out), result.to_dict())
        print(f"wrote {args.out}")
    return goals_exit(
        [f"the batched FedLinUCB takes the reference's action in {same:.1%} of rounds (goal ≥ 99%)"]
        if same < 0.99
        else []
    )


def _bandit_result(
    args: argparse.Namespace, cfg1, ref_rounds: int, t_ref: float, t_fast: float, t_many: float, same: float
) -> schemas.BanditBench:
    per_round_ref = t_ref / ref_rounds
    per_round_fast = t_fast / args.horizon
    per_run_round_many = t_many / (args.horizon * args.runs)
    ref_full = per_round_ref * args.horizon
    return schemas.BanditBench(
        settings={
            "M": args.silos,
            "T": args.horizon,
            "K": args.arms,
            "d": args.dim,
            "runs": args.runs,
            "reference_rounds": ref_rounds,
            "seed": args.seed,
            "algorithm": "FedLinUCB",
            "batch": cfg1.batch_size,
        },
        reference_seconds_measured=t_ref,
        reference_seconds_per_round=per_round_ref,
        reference_seconds_extrapolated_to_T=ref_full,
        batched_one_run_seconds=t_fast,
        batched_many_runs_seconds=t_many,
        speedup_one_run=per_round_ref / per_round_fast,
        speedup_per_run_batched=per_round_ref / per_run_round_many,
        reference_agrees_fraction_of_silo_rounds=float(same),
    )


def _print_bandit(args: argparse.Namespace, cfg1, ref_rounds: int, result: schemas.BanditBench) -> None:
    t_ref, t_fast, t_many = (
        result.reference_seconds_measured,
        result.batched_one_run_seconds,
        result.batched_many_runs_seconds,
    )
    print(f"federated LinUCB: M={args.silos}, T={args.horizon}, K={args.arms}, d={args.dim}, B={cfg1.batch_size}")
    print(
        f"  reference loop:   {t_ref:.2f}s for {ref_rounds} rounds = "
        f"{result.reference_seconds_per_round * 1e3:.1f} "
        f"ms/round -> {result.reference_seconds_extrapolated_to_T:.0f}s extrapolated to T={args.horizon}"
    )
    print(
        f"  batched, 1 run:   {t_fast:.2f}s ({t_fast / args.horizon * 1e3:.2f} ms/round); "
        f"speed-up {result.speedup_one_run:.0f}x"
    )
    print(
        f"  batched, {args.runs} runs: {t_many:.2f}s ({t_many / (args.horizon * args.runs) * 1e3:.3f} ms per "
        f"run-round); speed-up per run {result.speedup_per_run_batched:.0f}x"
    )
    print(
        f"  the batched choice maximizes the reference's UCB scores on "
        f"{result.reference_agrees_fraction_of_silo_rounds:.2%} of the silo-rounds"
    )
