"""``pgc bandit regret|attack``: the federated linear contextual bandit studies (:mod:`pgc.studies.bandit`).

* ``regret`` — time-averaged group regret curves R_M(t)/t with intervals over runs for non-private
  FedLinUCB, Private-FedLinUCB at several ε and DP20 FedUCB, and the privacy cost (private −
  non-private group regret at T) against M with its fitted exponent beside M^{3/4} and √M. Writes a
  JSON result ("kind": "bandit-regret") and a PNG plot.
* ``attack`` — a malicious silo guessing which of two users another silo served first, per channel,
  against chance and the (ε, δ) ceiling ("kind": "bandit-attack"); exit code 1 where a channel's accuracy is above
  its ceiling beyond its interval (a finding).
"""

from __future__ import annotations

import argparse
import sys

from pgc.errors import ExitCode
from pgc.options import add_force, add_out, add_progress, add_seed

from ..outputs import ResultFile


def _add_progress_argument(p: argparse.ArgumentParser) -> None:
    add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")


class BanditCommand:
    help = "federated linear contextual bandits: regret study and first-user attack"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
        r = sub.add_parser("regret", help="regret curves and the privacy cost against M")
        r.add_argument("--silos", type=int, default=100, help="M of the curves (default 100)")
        r.add_argument("--horizon", type=int, default=10_000, help="T (default 10000)")
        r.add_argument("--arms", type=int, default=100, help="K (default 100)")
        r.add_argument("--dim", type=int, default=10, help="d (default 10)")
        r.add_argument("--noise", type=float, default=0.5, help="reward noise std (default 0.5)")
        r.add_argument(
            "--batch", type=int, default=None, help="batch B of the fixed-schedule algorithms (default ceil(sqrt(T/M)))"
        )
        r.add_argument(
            "--dp20-threshold",
            type=float,
            default=None,
            help="DP20's sync threshold D (default the DisLinUCB choice (T/(dM)) log(MT))",
        )
        r.add_argument("--runs", type=int, default=25, help="independent runs (default 25)")
        r.add_argument(
            "--epsilons",
            type=float,
            nargs="+",
            default=[0.2, 1.0, 5.0],
            help="Private-FedLinUCB epsilons (default 0.2 1 5)",
        )
        r.add_argument("--delta", type=float, default=0.1, help="delta (default 0.1)")
        r.add_argument("--dp20-epsilon", type=float, default=1.0, help="DP20 FedUCB's epsilon (default 1)")
        r.add_argument(
            "--sweep-silos",
            type=int,
            nargs="*",
            default=[10, 20, 50, 100],
            help="M values of the privacy-cost fit (default 10 20 50 100; none = no fit)",
        )
        r.add_argument("--sweep-epsilon", type=float, default=1.0, help="epsilon of the privacy-cost fit (default 1)")
        r.add_argument("--workers", type=int, default=2, help="processes (default 2)")
        add_seed(r, default=0)
        r.add_argument(
            "--label", default="full grid", help="a label stored with the result (say if it is a reduced grid)"
        )
        add_out(
            r,
            help="JSON result file (default runs/bandit/regret-<date>-<time>.json, new for "
            "every run; the PNG beside it)",
        )
        add_force(r, help="replace an existing --out result and its PNG")
        _add_progress_argument(r)
        a = sub.add_parser("attack", help="infer another silo's first user from its schedule and messages")
        a.add_argument(
            "--systems",
            nargs="+",
            default=["dp20-feducb", "private-fedlinucb"],
            help="systems to attack (dp20-feducb, private-fedlinucb, fedlinucb)",
        )
        a.add_argument("--pair", default="a-toy-first-user", help="canary pair (default the slides' toy pair)")
        a.add_argument("--epsilon", type=float, nargs="+", default=[0.1, 1.0], help="claimed epsilons (default 0.1 1)")
        a.add_argument("--delta", type=float, default=1e-3, help="claimed delta (default 0.001)")
        a.add_argument("--train", type=int, default=2000, help="attacker's simulated releases per world (default 2000)")
        a.add_argument("--test", type=int, default=2000, help="attacked releases (default 2000)")
        add_seed(a, default=0)
        add_out(a, help="JSON result file (default runs/bandit/attack-<date>-<time>.json, new for every run)")
        add_force(a, help="replace an existing --out result")
        _add_progress_argument(a)

    def run(self, args: argparse.Namespace) -> int:
        if args.action == "regret":
            return _regret(args)
        return _attack(args)


def _regret(args: argparse.Namespace) -> int:
    from pgc.studies.bandit import RegretSettings, regret_study

    settings = RegretSettings(
        silos=args.silos,
        horizon=args.horizon,
        arms=args.arms,
        dim=args.dim,
        noise=args.noise,
        batch=args.batch,
        dp20_threshold=args.dp20_threshold,
        runs=args.runs,
        epsilons=tuple(args.epsilons),
        delta=args.delta,
        dp20_epsilon=args.dp20_epsilon,
        sweep_silos=tuple(args.sweep_silos),
        sweep_epsilon=args.sweep_epsilon,
        workers=args.workers,
        seed=args.seed,
    )
    with ResultFile(args.out, command="bandit", name="regret", force=args.force) as out:
        result, jobs = regret_study(settings, out.companion, label=args.label, progress=args.progress)
        out.write(result.to_dict())
    fit = result.fit
    print(f"{jobs} jobs in {result.elapsed_seconds:.0f}s; wrote {out.path} and {out.path.with_name(str(result.plot))}")
    for c in result.curves:
        print(
            f"  {c.label:45s} R_M(T)/T = {c.time_averaged_group_regret[-1]:.3f} "
            f"[{c.lower[-1]:.3f}, {c.upper[-1]:.3f}]  syncs {c.mean_syncs:.0f}"
        )
    if fit is not None and fit.exponent is not None and fit.interval is not None:
        print(
            f"  privacy cost ~ M^b: b = {fit.exponent:.2f}, {fit.level or 0.95:.0%} interval "
            f"[{fit.interval[0]:.2f}, {fit.interval[1]:.2f}] (theory 0.75; DP20 0.5)"
        )
    return 0


def _attack(args: argparse.Namespace) -> int:
    from pgc.studies.bandit import FirstUserSettings, first_user_study

    settings = FirstUserSettings(
        systems=tuple(args.systems),
        pair=args.pair,
        epsilons=tuple(args.epsilon),
        delta=args.delta,
        train=args.train,
        test=args.test,
        seed=args.seed,
    )
    with ResultFile(args.out, command="bandit", name="attack", force=args.force) as out:
        result = first_user_study(settings, progress=args.progress, log=lambda line: print(line, flush=True))
        out.write(result.to_dict())
    print(f"wrote {out.path}")
    above = [r for r in result.rows if r.reference.above_ceiling]
    if above:
        print(
            f"!!! {len(above)} row(s) with accuracy above the (ε, δ) ceiling beyond their interval: the claim does "
            "not hold for that channel (see above_ceiling in the JSON)",
            file=sys.stderr,
        )
        return ExitCode.FINDING  # an attack above its bar
    return ExitCode.OK
