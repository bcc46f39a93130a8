"""``pgc tune``: an optuna study over mechanism, ε, C, |B|, d̂ and η (:mod:`pgc.tuning`, its worker processes
:mod:`pgc.tuning.processes`); writes the study's JSON for ``pgc report``.

    pgc tune --trials 30 --out runs/tune                      # SQLite study in runs/tune/study.db
    pgc tune --storage postgresql://user:pw@host/db --study s --workers 4   # 4 local worker processes;
                                                              # the same command elsewhere joins the study
    pgc tune --engine ray --address HOST:6379                 # trials of each batch trained on a Ray cluster
    optuna-dashboard sqlite:///runs/tune/study.db             # browse the study
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.files import write_json_atomic
from pgc.options import add_engine, add_out, add_seed, certification_samples, positive_float, positive_int


class TuneCommand:
    help = "tune epsilon and mechanism settings with optuna"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        add_out(p, default="runs/tune", help="folder for tune.json (and the default SQLite study)")
        p.add_argument(
            "--storage",
            help="optuna storage URL (default sqlite:///OUT/study.db); e.g. "
            "postgresql://user:pw@host/db to share one study between N workers",
        )
        p.add_argument("--study", default="pgc-tune", help="study name (default pgc-tune)")
        p.add_argument(
            "--trials",
            type=positive_int,
            default=30,
            help="finished trials the study should hold (counted over all workers and resumes; default 30)",
        )
        p.add_argument("--batch", type=positive_int, default=4, help="trials trained together in one batch (default 4)")
        p.add_argument("--timeout", type=positive_float, help="stop asking for new trials after this many seconds")
        p.add_argument(
            "--mode",
            choices=["pareto", "constrained"],
            default="pareto",
            help="pareto: maximise utility and minimise ε; constrained: the smallest ε with utility >= --min-success",
        )
        p.add_argument("--min-success", type=float, help="constrained mode: required utility (success ratio), e.g. 0.5")
        p.add_argument("--utility", choices=["success_ratio", "final_mu"], default="success_ratio")
        p.add_argument(
            "--privacy",
            choices=["claimed", "audit"],
            default="claimed",
            help="privacy objective: claimed ε, or the audited black-box ε lower bound",
        )
        p.add_argument(
            "--audit-samples",
            type=certification_samples,
            default=100_000,
            help="--privacy audit: certification samples per side of each trial's audit (default 100,000)",
        )
        p.add_argument("--sampler", choices=["tpe", "nsga2", "random"], default="tpe")
        add_seed(p, default=0, help="study seed (sampler and per-trial training seeds)")
        p.add_argument("--mechanisms", nargs="+", default=["laplace", "prs"])
        p.add_argument("--epsilon", nargs=2, type=positive_float, metavar=("LOW", "HIGH"), default=(0.5, 50.0))
        p.add_argument("--clip", nargs=2, type=positive_float, metavar=("LOW", "HIGH"), default=(0.01, 10.0))
        p.add_argument("--buffer", nargs=2, type=positive_int, metavar=("LOW", "HIGH"), default=(1, 100))
        p.add_argument("--reduced-dim", nargs=2, type=positive_int, metavar=("LOW", "HIGH"), default=(1, 20))
        p.add_argument("--lr", nargs=2, type=positive_float, metavar=("LOW", "HIGH"), default=(1e-3, 1.0))
        p.add_argument("--runs-per-trial", type=positive_int, default=8)
        p.add_argument("--submissions", type=positive_int, default=3000)
        p.add_argument(
            "--rungs",
            nargs="+",
            type=positive_float,
            default=[0.25, 1.0],
            help="fractions of --submissions where trials are checked for pruning (last must be 1)",
        )
        p.add_argument("--prune-below-mu", type=float, default=30.0)
        p.add_argument(
            "--gravities",
            nargs="+",
            type=float,
            help="ψ values used for tuning (default: shadow/public 9.6 9.8 10.0; tuning on private ψ spends privacy)",
        )
        p.add_argument(
            "--hyper",
            choices=["learnable", "paper"],
            default="learnable",
            help="A3C preset: learnable (λ=0, sampled actions; default) or paper (λ=0.5, greedy)",
        )
        p.add_argument("--heartbeat", type=positive_int, default=30, help="heartbeat interval (s) of in-flight trials")
        p.add_argument(
            "--grace",
            type=positive_int,
            help="seconds without heartbeat before a trial counts as killed and is re-queued (default 3 × heartbeat)",
        )
        p.add_argument(
            "--worker-id",
            help="name of this worker, mixed into its sampler seed (default: none; the seed "
            "is the study seed and the trials asked so far, on any machine)",
        )
        p.add_argument(
            "--workers",
            type=positive_int,
            default=1,
            help="worker processes on this machine sharing the study (default 1); more workers on "
            "other machines: run the same command there with the same --storage and --study",
        )
        add_engine(p, "where each batch's training runs go: this process (local, default) or a Ray cluster")
        p.add_argument("--export-only", action="store_true", help="write tune.json from the storage without running")

    def run(self, args: argparse.Namespace) -> int:
        import optuna

        from pgc.outdirs import write_marker
        from pgc.tuning import export_study
        from pgc.tuning.processes import (
            WorkerPlan,
            check_batch_budget,
            check_tune_folder,
            finished_trials,
            prepare_storage,
            run_workers,
        )

        out = Path(args.out)
        check_tune_folder(out)  # a study folder (ours) is resumed; anything else must be absent or empty
        storage = args.storage or f"sqlite:///{(out / 'study.db').as_posix()}"
        if "://" not in storage:
            raise UserError(f"--storage must be an optuna RDB URL such as sqlite:///study.db, got {storage!r}")
        if args.seed < 0:
            raise UserError("--seed must be >= 0")
        if args.address is not None and args.engine != "ray":
            raise UserError("--address is only for --engine ray")
        if args.workers > 1 and args.engine == "ray":
            raise UserError(
                "--workers > 1 is for the local engine; with --engine ray one worker feeds the cluster "
                "(start the command on more machines to add workers)"
            )
        if args.mode == "constrained" and args.min_success is None:
            raise UserError("--mode constrained needs --min-success (e.g. 0.5)")
        settings = _study_settings(args)
        if not args.export_only:  # everything is validated before the storage and study exist
            check_batch_budget(settings, args.batch)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        storage = prepare_storage(storage, out, args.heartbeat, args.grace)
        out.mkdir(parents=True, exist_ok=True)
        write_marker(out, command="tune")
        finished = finished_trials(args.study, storage)
        if not args.export_only and finished >= args.trials:  # nothing to run, on any engine: say so
            print(
                f"study complete: {finished} trials; use a new --out or --trials (more than {finished}) to "
                "run more" + ("; nothing ran on Ray" if args.engine == "ray" else "")
            )
        elif not args.export_only:
            plan = WorkerPlan(
                study=args.study,
                storage=storage,
                trials=args.trials,
                batch=args.batch,
                timeout=args.timeout,
                heartbeat=args.heartbeat,
                grace=args.grace,
                engine=args.engine,
                address=args.address,
                workers=args.workers,
                worker_id=args.worker_id,
            )
            run_workers(plan, settings, lambda msg: print(msg, file=sys.stderr, flush=True))
        try:
            result = export_study(args.study, storage)
        except KeyError:
            raise UserError(f"no study {args.study!r} in {storage}") from None
        path = write_json_atomic(out / "tune.json", result.to_dict())
        _print_study(result, args)
        print(f"wrote {path}; browse with: optuna-dashboard {storage}")
        return 0


def _study_settings(args: argparse.Namespace):
    """The validated StudySettings the arguments describe; a UserError for a bad value."""
    from pgc.tuning import Evaluation, SearchSpace, StudySettings

    gravities = tuple(args.gravities) if args.gravities else None
    try:
        space = SearchSpace(
            mechanisms=tuple(args.mechanisms),
            epsilon=tuple(args.epsilon),
            clip=tuple(args.clip),
            buffer_size=tuple(args.buffer),
            reduced_dim=tuple(args.reduced_dim),
            learning_rate=tuple(args.lr),
        )
        ev_kw = dict(
            runs_per_trial=args.runs_per_trial,
            submissions=args.submissions,
            rungs=tuple(args.rungs),
            prune_below_mu=args.prune_below_mu,
            hyper=args.hyper,
            utility=args.utility,
            privacy=args.privacy,
            audit_samples=args.audit_samples,
        )
        if gravities:
            ev_kw.update(gravities=gravities, environments="user-given (privacy spent if private)")
        settings = StudySettings(
            space=space,
            evaluation=Evaluation(**ev_kw),
            mode=args.mode,
            min_utility=args.min_success,
            sampler=args.sampler,
            seed=args.seed,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return settings


def _print_study(result: schemas.TuneResult, args: argparse.Namespace) -> None:
    c = result.counts
    print(
        f"study {args.study!r}: {c.complete or 0} complete, {c.pruned or 0} pruned, "
        f"{c.fail or 0} failed; Pareto front trials {result.pareto_front}"
    )
    by_number = {t.number: t for t in result.trials}
    for n in result.pareto_front:
        t = by_number[n]
        print(
            f"  #{n}: {t.params}  privacy={t.privacy:.3g}  success={t.success_ratio:.2f}  median FST={t.median_fst:g}"
        )
    if result.best_constrained:
        b = result.best_constrained
        print(f"smallest privacy value with utility >= {args.min_success}: {b.privacy:.3g} (trial #{b.number})")
    elif args.mode == "constrained":
        print(f"no trial reached utility >= {args.min_success}")
