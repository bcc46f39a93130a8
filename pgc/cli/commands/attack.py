"""``pgc attack``: dynamics-inference attacks recovering gravity ψ from submissions.

Targets:
  --run DIR                 a ``pgc train`` folder: attack its transcript (mechanism, Ψ, A3C settings from
                            the run; agents linked over their rounds)
  --model SPEC              fresh submissions at a model: init:SEED, run:DIR, run-initial:DIR or a
                            checkpoint file; with --mechanism/--epsilon/--clip
  --sweep                   with --model (repeatable): accuracy vs --epsilons, JSON + PNG plot

``--engine ray [--address ADDR]`` runs the independent parts as tasks on a Ray cluster (a local one
without ``--address``): each setting (model, ε, channel set) of ``--sweep``, and each (attacker,
budget) of a single attack. Every task draws from its own seeds, so the JSON is the local
engine's (timings aside).

Output: a JSON result (``"kind": "attack"``, atomic write) and a readable summary on stdout. The attacks
themselves: :mod:`attacks.a3c.modes`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

from pgc.engines import chosen_engine
from pgc.errors import UserError
from pgc.mechanisms import MECHANISMS
from pgc.options import (
    add_engine,
    add_force,
    add_out,
    add_progress,
    add_seed,
    finite_float,
    positive_float,
    positive_int,
)


def _budget(text: str) -> int:
    value = positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError("the budget must be >= 2 shadow episodes per ψ")
    return value


class AttackCommand:
    help = "dynamics-inference attacks"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        target = p.add_mutually_exclusive_group()
        target.add_argument("--run", help="attack the transcript of this pgc train folder")
        target.add_argument("--plot", metavar="SWEEP_JSON", help="only re-draw the PNG of a --sweep result file")
        target.add_argument(
            "--model",
            action="append",
            help="fresh submissions at a model: init:SEED | run:DIR | run-initial:DIR | CHECKPOINT "
            "(repeatable with --sweep)",
        )
        p.add_argument("--trial", type=int, default=0, help="trial of --run (default 0)")
        p.add_argument(
            "--mechanism", choices=sorted(MECHANISMS), help="mechanism of fresh submissions (default laplace)"
        )
        p.add_argument(
            "--epsilon", type=positive_float, help="ε per submission of fresh submissions (default 1; inf = none)"
        )
        p.add_argument("--clip", type=positive_float, help="clip C (default: the mechanism's paper value)")
        p.add_argument("--reduced-dim", type=positive_int, help="PRS d̂")
        cand = p.add_mutually_exclusive_group()
        cand.add_argument("--candidates", type=finite_float, nargs="+", help="candidate set Ψ (default 9.7 9.8 9.9)")
        cand.add_argument(
            "--range", type=finite_float, nargs=2, metavar=("LO", "HI"), help="regression over ψ ∈ [LO, HI]"
        )
        p.add_argument(
            "--budget",
            type=_budget,
            nargs="+",
            default=[500],
            help="shadow episodes per candidate ψ (per target θ); several give a budget curve (default 500)",
        )
        p.add_argument(
            "--k",
            type=positive_int,
            nargs="+",
            default=[1],
            help="linked submissions per target; several give a curve (default 1)",
        )
        p.add_argument("--targets", type=positive_int, default=600, help="attacked environments (default 600)")
        p.add_argument(
            "--channels",
            help="channels the attacker may use, comma-separated: gradient,score,timing,prs_internals "
            "(default gradient; --sweep always runs gradient and gradient,score)",
        )
        p.add_argument(
            "--attackers",
            default="likelihood,learned,side-channel",
            help="attackers to run (default likelihood,learned,side-channel)",
        )
        p.add_argument(
            "--action-selection",
            choices=["greedy", "sample"],
            help="A3C action selection for --model (default: the run's for run:DIR, else greedy)",
        )
        p.add_argument("--lam", type=float, help="λ (value-loss weight) for --model (default: run's, else 0.5)")
        p.add_argument("--alpha", type=float, default=0.0, help="exploration probability of fresh agents (default 0)")
        p.add_argument("--white-box", action="store_true", help="PRS: give the attacker (M, ũ) (channel prs_internals)")
        target.add_argument(
            "--active",
            action="store_true",
            help="active attacker: the aggregator crafts θ for the candidates (extreme pair) and "
            "attacks fresh submissions at it; the crafted θ is saved beside --out",
        )
        p.add_argument(
            "--quick-search",
            action="store_true",
            help="--active: a small crafted-model search (smoke runs and tests; weaker θ)",
        )
        p.add_argument(
            "--sweep", action="store_true", help="accuracy vs --epsilons for each --model; writes JSON + PNG"
        )
        p.add_argument(
            "--epsilons",
            type=positive_float,
            nargs="+",
            default=[1, 2, 5, 10, math.inf],
            help="ε values of --sweep (default 1 2 5 10 inf)",
        )
        p.add_argument("--epochs", type=positive_int, default=40, help="learned attacker epochs (default 40)")
        add_seed(p, default=0, help="root seed (default 0)")
        add_engine(
            p,
            "where the independent attacks run (--sweep settings, or one attack's attackers x "
            "budgets): this process (local, default) or a Ray cluster, one task each; same results",
        )
        add_out(
            p,
            help="JSON result file (default runs/attack/<mode>-<date>-<time>.json, new for every "
            "run; PNG beside it with --sweep, the crafted θ with --active)",
        )
        add_force(p, help="replace an existing --out result (and its PNG or θ file)")
        add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")

    def run(self, args: argparse.Namespace) -> int:
        from attacks.a3c.runner import ATTACKERS
        from attacks.a3c.threat import parse_channels

        if args.address is not None and args.engine != "ray":
            raise UserError("--address is only for --engine ray")
        if args.plot:
            return _replot(Path(args.plot))
        if args.seed < 0:
            raise UserError("--seed must be >= 0")
        if not 0.0 <= args.alpha <= 1.0:
            raise UserError("--alpha must lie in [0, 1]")
        if args.lam is not None and not (math.isfinite(args.lam) and args.lam >= 0):
            raise UserError("--lam must be a finite number >= 0")
        if args.sweep and args.channels is not None:
            raise UserError("--sweep runs the channel sets gradient and gradient,score itself; drop --channels")
        channels = parse_channels(args.channels or "gradient")
        attackers = [a.strip() for a in args.attackers.split(",") if a.strip()]
        unknown = [a for a in attackers if a not in ATTACKERS]
        if not attackers or unknown:
            raise UserError(f"unknown attacker(s) {unknown}; known: {', '.join(ATTACKERS)}")
        if args.range is not None and not args.range[0] < args.range[1]:
            raise UserError("--range needs LO < HI")
        if args.candidates is not None and (
            len(args.candidates) < 2 or len(set(args.candidates)) != len(args.candidates)
        ):
            raise UserError("--candidates needs at least two distinct values")
        if args.sweep and args.run:
            raise UserError("--sweep works on --model targets")
        if args.active and (args.sweep or args.range):
            raise UserError("--active crafts its own model for a candidate set: drop --sweep and --range")
        if args.quick_search and not args.active:
            raise UserError("--quick-search belongs to --active")
        if not (args.active or args.run or args.model or args.plot):
            raise UserError("give one of --run DIR, --model SPEC, --active, --plot FILE")
        if args.run and any(
            v is not None
            for v in (args.mechanism, args.epsilon, args.clip, args.reduced_dim, args.action_selection, args.lam)
        ):
            raise UserError("--run takes mechanism, ε, clip and A3C settings from the run; drop those flags")
        if args.out is not None and Path(args.out).suffix != ".json":
            raise UserError("--out must name a .json file")
        from ..outputs import ResultFile

        settings = _settings(args, channels, attackers)
        with ResultFile(
            args.out, command="attack", name=settings.mode, force=args.force
        ) as out:  # one writer at a time
            with chosen_engine(args.engine, args.address) as engine:  # None: the local engine, this process
                # a task on the cluster shows no progress bar (its output stays on its worker)
                return _attack(settings, out, engine, args.progress and engine is None)


def _settings(args: argparse.Namespace, channels: tuple[str, ...], attackers: list[str]):
    from attacks.a3c.modes import AttackSettings

    return AttackSettings(
        channels=tuple(channels),
        attackers=tuple(attackers),
        run=args.run,
        trial=args.trial,
        models=tuple(args.model or ()),
        active=args.active,
        quick_search=args.quick_search,
        sweep=args.sweep,
        epsilons=tuple(args.epsilons),
        mechanism=args.mechanism,
        epsilon=args.epsilon,
        clip=args.clip,
        reduced_dim=args.reduced_dim,
        candidates=tuple(args.candidates) if args.candidates else None,
        psi_range=tuple(args.range) if args.range else None,
        budgets=tuple(args.budget),
        ks=tuple(args.k),
        targets=args.targets,
        action_selection=args.action_selection,
        lam=args.lam,
        alpha=args.alpha,
        white_box=args.white_box,
        epochs=args.epochs,
        seed=args.seed,
        command="pgc " + " ".join(sys.argv[1:]),
    )


def _attack(settings, out, engine, progress: bool) -> int:
    from attacks.a3c.modes import attack

    start = time.perf_counter()
    result = attack(settings, companion=out.companion, executor=engine, progress=progress, log=print)
    result = dataclasses.replace(result, wall_s=time.perf_counter() - start)
    path = out.write(result.to_dict())
    print(f"wrote {path}" + (f" and {path.with_suffix('.png')}" if settings.sweep else ""))
    if result.violations:
        print(
            f"!!! {len(result.violations)} PRIVACY VIOLATION(S) OR EVALUATION BUG: a gradient-only attack "
            "beat the ε-LDP ceiling beyond its confidence interval — see 'violations' in the JSON",
            file=sys.stderr,
        )
        return 1
    return 0


def _replot(path: Path) -> int:
    from attacks.a3c.sweep import plot_sweep, sweep_title
    from pgc.files import read_json

    data = read_json(path)
    if not isinstance(data, dict) or data.get("kind") != "attack" or data.get("mode") != "sweep":
        raise UserError(f"{path} is not a pgc attack --sweep result")
    png = plot_sweep(data, path.with_suffix(".png"), sweep_title(data))
    print(f"wrote {png}")
    return 0
