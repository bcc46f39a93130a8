"""``pgc bench adversarial``: one adversarial audit of one pair, search included, timed against the
honest environment audit of the same pair at the same sample size in the same run (the ratio is the
price of crafting the model); ``--false-alarms``: correct mechanisms certified at crafted models over
many seeds (no bound may exceed its claim), written to ``--out``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.options import GravityRange, add_out, add_samples, add_seed, gravity_pair, positive_int

from . import goals_exit

help = "adversarial-model audit: wall time with search vs the honest audit; false alarms over seeds"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mechanism", default="laplace", help="registered mechanism (default laplace)")
    p.add_argument("--epsilon", type=float, default=1.0, help="claimed ε (default 1)")
    p.add_argument("--pair", type=gravity_pair, default=(5.0, 15.0), help="ψ:ψ' (default 5:15)")
    add_samples(p, default=200_000, help="certification samples per side (default 200,000)")
    p.add_argument(
        "--false-alarms",
        action="store_true",
        help="instead: Laplace and PRS at ε ∈ {1, 4}, crafted θ, --seeds seeds per tuned pair",
    )
    p.add_argument("--seeds", type=positive_int, default=20, help="--false-alarms: seeds per tuned pair (default 20)")
    add_seed(p, default=0)
    add_out(p, help="JSON result file")


def run(args: argparse.Namespace) -> int:
    from pgc.audits.adversarial import adversarial_audit
    from pgc.audits.environment import environment_audit
    from pgc.audits.studies import false_alarm_study
    from pgc.files import write_json_atomic
    from pgc.mechanisms import make_mechanism
    from pgc.schemas.bench_results import AdversarialBench, AdversarialFalseAlarm, AdversarialFalseAlarms

    if args.false_alarms:
        mechs = {f"{m} ε={e:g}": make_mechanism(m, e) for m in ("laplace", "prs") for e in (1.0, 4.0)}
        start = time.perf_counter()
        res = false_alarm_study(
            mechs,
            [(5.0, 15.0), (9.7, 9.9)],
            {(6.0, 14.0): (5.0, 15.0), (9.6, 10.0): (9.7, 9.9)},
            seeds=args.seeds,
            samples=min(args.samples, 20_000),
            seed=args.seed,
            log=lambda s: print(s, flush=True),
        )
        study = AdversarialFalseAlarms(
            rows=[AdversarialFalseAlarm(**row) for row in res["rows"]],
            audits=res["audits"],
            exceeding_claim=res["exceeding_claim"],
            max_ratio=res["max_ratio"],
            samples=res["samples"],
            confidence=res["confidence"],
            wall_time_s=time.perf_counter() - start,
        )
        print(
            f"{study.audits} audits, {study.exceeding_claim} bounds above their claim, "
            f"max ε_LB/ε {study.max_ratio:.3f} ({study.wall_time_s:.0f}s)"
        )
        if args.out:
            write_json_atomic(Path(args.out), study.to_dict())
        return goals_exit(
            [f"{study.exceeding_claim} of {study.audits} adversarial bounds above their claim (goal: none)"]
            if study.exceeding_claim
            else []
        )
    if isinstance(args.pair, GravityRange):
        raise UserError("--pair needs ψ:ψ', not a range LO..HI")
    psi, psi_prime = args.pair
    mech = make_mechanism(args.mechanism, args.epsilon)
    t0 = time.perf_counter()
    adv = adversarial_audit(
        mech, psi, psi_prime, samples=args.samples, seed=args.seed, channels=("gradient",), noise_free=False
    )
    t_adv = time.perf_counter() - t0
    search = sum(s.wall_time_s for s in adv.searches.values())
    from pgc.a3c.model import glorot_uniform_theta

    theta0 = glorot_uniform_theta(np.random.default_rng(np.random.SeedSequence(args.seed)))
    t0 = time.perf_counter()
    hon = environment_audit(
        theta0,
        mech,
        psi,
        psi_prime,
        samples=args.samples,
        seed=args.seed,
        workers=1,
        compositions=(),
        channels=["gradient"],
    )
    t_hon = time.perf_counter() - t0
    row = adv.row("gradient")
    print(
        f"adversarial audit {psi:g} vs {psi_prime:g}, {adv.mechanism}, gradient channel, {args.samples:,} samples/side"
    )
    print(
        f"  crafted θ: ε_LB {row.epsilon_lower_bound:.3f} (ε_LB/ε {row.ratio:.3f}); {t_adv:.1f}s "
        f"(search {search:.1f}s, certification {t_adv - search:.1f}s) — target ≤ 300 s"
    )
    print(f"  honest θ (initial weights): ε_LB {hon.channel('gradient').epsilon_lower_bound:.3f}; {t_hon:.1f}s")
    print(f"  ratio adversarial/honest wall time {t_adv / t_hon:.2f}x")
    if args.out:
        result = AdversarialBench(
            pair=[psi, psi_prime],
            mechanism=adv.mechanism,
            samples=args.samples,
            adversarial_wall_s=t_adv,
            search_wall_s=search,
            honest_wall_s=t_hon,
            ratio=t_adv / t_hon,
            epsilon_lower_bound=row.epsilon_lower_bound,
            honest_epsilon_lower_bound=hon.channel("gradient").epsilon_lower_bound,
            command=f"pgc bench adversarial --mechanism {args.mechanism} --epsilon {args.epsilon:g} --pair "
            f"{psi:g}:{psi_prime:g} --samples {args.samples} --seed {args.seed}",
        )
        write_json_atomic(Path(args.out), result.to_dict())
    return goals_exit([f"the adversarial audit took {t_adv:.0f} s (goal ≤ 300 s)"] if t_adv > 300 else [])
