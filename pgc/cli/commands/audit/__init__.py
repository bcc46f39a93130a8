"""``pgc audit SUBCOMMAND TARGET``: certified ε lower bounds next to the claim.

* ``system SPEC`` — any System per channel (a registered name, ``MODULE:FACTORY`` or ``path/to/file.py:FACTORY``);
  ``flower MODULE:APP``, ``ldp LIBRARY:PROTOCOL`` and ``nvflare MODULE:FILTER`` — a Flower ClientApp, an LDP
  frequency oracle and an NVIDIA FLARE filter, audited as Systems (:mod:`.system`, :mod:`.library`);
* ``mechanism NAME --epsilon E`` — black-box canary audit of a registered mechanism (``--white-box``: PRS from
  its ũ and M);
* ``run DIR`` — the run's mechanism (canary audit) and an environment audit of its trained model (``--initial``
  for the initial weights) for each ``--pairs`` ψ:ψ', per transcript channel;
* ``one-run RUN`` — the one-run audit of a run trained with canary agents (``pgc train --canaries``): each canary
  submission in the transcript is guessed with a statistic fitted on releases the auditor simulates itself, and
  ε_LB follows from the one-run theorem (:mod:`audit.one_run`, docs/README-one-run.md) per channel;
* ``flower-one-run MODE`` — canary clients inside one Flower simulation, audited in one run;
* ``self-test`` — every correct mechanism and every planted bug; exit code 1 if any is misjudged;
* ``adversarial-model [MECHANISM] [--run DIR]`` — the aggregator crafts θ for each pair
  (:mod:`pgc.audits.adversarial`) and the channels are certified at it; ``--pairs`` also takes a range
  ``LO..HI`` (an optuna search for the pair the crafted model separates best). The crafted θ are saved as
  checkpoints beside the JSON (``pgc attack --model FILE`` loads them);
* ``adversarial-curve MECHANISM`` — ε_LB/ε against the neighbour distance, honest vs crafted θ.

Each subcommand is a class with its own options and defaults (:mod:`.subcommands`); the options they share
are defined once (:mod:`.options`). ``--engine ray [--address ADDR]`` runs the independent audits as tasks on
a Ray cluster (a local one without ``--address``): the run's canary audit and each pair's environment audit,
each pair of ``adversarial-model``, each point (Δψ, ε) of ``adversarial-curve`` and each ``self-test`` case.
Every task draws from its own seeds, so the JSON is the local engine's (timings aside).

The mode flags ``pgc audit --system SPEC ...`` (``--mechanism``, ``--run``, ``--self-test``, ...) are the
deprecated spelling of the subcommands: :meth:`AuditCommand.rewrite_argv` (:mod:`.legacy`) rewrites them
before parsing.

Each audit returns its typed result (:mod:`pgc.schemas`: ``system-audit``, ``mechanism-audit``, ``run-audit``, ...,
one kind per subcommand), stamped here with the command line, the wall time and the provenance, and written as
it is: one JSON file (atomically) and a readable summary. The audits themselves are imported when they run:
``pgc audit SUBCOMMAND --help`` imports neither torch nor the auditor.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

from pgc.errors import UserError

from .subcommands import SUBCOMMANDS


class AuditCommand:
    help = "empirical ε lower bounds"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        from .legacy import add_deprecated_flags

        p.description = (
            "empirical ε lower bounds next to the claim: pgc audit SUBCOMMAND TARGET [options] "
            "(pgc audit SUBCOMMAND --help for its options)"
        )
        p.epilog = (
            "deprecated: the mode flags of pgc audit --system SPEC, --mechanism NAME, --run DIR, ... still "
            "run this release, as the subcommand they name"
        )
        sub = p.add_subparsers(dest="audit", metavar="SUBCOMMAND", required=True)
        for name, subcommand in SUBCOMMANDS.items():
            sp = sub.add_parser(name, help=subcommand.help, description=subcommand.help)
            subcommand.add_arguments(sp)
            sp.set_defaults(_audit=subcommand)
        add_deprecated_flags(p)

    def rewrite_argv(self, argv: list[str]) -> list[str]:
        """The deprecated mode flags (``--system SPEC ...``) as the subcommand they name (``system SPEC ...``)."""
        from .legacy import rewrite

        return rewrite(argv)

    def run(self, args: argparse.Namespace) -> int:
        from pgc.engines import chosen_engine
        from pgc.schemas.provenance import Invocation

        from ...outputs import ResultFile
        from ...provenance import current_provenance
        from .subcommands import mode_function

        mode = args._audit.mode_of(args)
        audit = mode_function(mode)
        # named by the subcommand given (adversarial-model --run dispatches to the run's audit, named adversarial)
        result = ResultFile(args.out, command="audit", name=args._audit.mode.replace("_", "-"), force=args.force)
        args.result = result
        args.estimated_seconds = None
        args.announce = lambda mechanism=None, episode_length=None: _announce_estimate(
            args, mode, mechanism, episode_length
        )
        start = time.perf_counter()
        argv = list(getattr(args, "_argv", sys.argv[1:]))
        with result:  # a second writer of the same file exits 2 at once
            with chosen_engine(args.engine, args.address) as engine:  # None: the local engine, this process
                args.executor = engine
                # a task on the cluster shows no progress bar (its output stays on its worker)
                outcome = audit(args, args.progress and engine is None)
            wall_time_s = time.perf_counter() - start
            estimate = args.estimated_seconds
            stamped = Invocation(
                command=outcome.command or "pgc " + " ".join(argv),  # a re-run audit names its own command
                argv=outcome.argv or argv,
                provenance=current_provenance(),
                wall_time_s=wall_time_s,
                estimated_seconds=None if estimate is None else round(estimate, 1),
            )
            typed = dataclasses.replace(outcome, invocation=stamped)
            result.write(typed.to_dict())
        print(f"wrote {result.path} ({wall_time_s:.1f}s)")
        return fail_on_status(_rows(typed), args.fail_on, _misjudged(typed))


def _rows(result) -> list:
    """Every judged row of a result: its ``rows`` (System audits, one-run kinds) or its ``channels``."""
    rows = getattr(result, "rows", None)
    return list(rows if rows is not None else result.channels)


def _misjudged(result) -> int:
    """The self-test's status: 1 when a case was misjudged (a finding), else 0."""
    from pgc.schemas import SelfTest

    return 1 if isinstance(result, SelfTest) and result.misjudged() else 0


def fail_on_status(rows: list, fail_on: str | None, status: int) -> int:
    """``--fail-on``: 1 when some row's verdict is in the chosen set (said in one line), else the mode's status."""
    from audit.verdicts import FAILING

    if fail_on is None:
        return status
    verdicts = [str(row.verdict) for row in rows if row.verdict is not None]
    failing = [v for v in verdicts if v in FAILING[fail_on]]
    if failing:
        counts = ", ".join(f"{failing.count(v)} {v}" for v in sorted(set(failing)))
        print(f"--fail-on {fail_on}: {counts} of {len(verdicts)} rows: exit 1")
        return 1
    return status


def _announce_estimate(
    args: argparse.Namespace, mode: str, mechanism=None, episode_length: float | None = None
) -> None:
    """Once a mode has checked its inputs: the audit's estimated wall time (refused over the limit without
    --allow-long), printed before the work starts and kept in the result beside the wall time."""
    from audit.power.planning import duration_text

    from .options import MAX_ESTIMATED_HOURS, estimated_seconds

    estimate = estimated_seconds(args, mode, mechanism, episode_length)
    if estimate is None:
        return
    args.estimated_seconds = estimate
    if estimate > MAX_ESTIMATED_HOURS * 3600 and not args.allow_long:
        raise UserError(
            f"this audit would take about {duration_text(estimate)} (more than {MAX_ESTIMATED_HOURS:g} h); "
            "lower --samples or pass --allow-long"
        )
    print(f"estimated time: about {duration_text(estimate)} (calibrated on a 2-core machine)", flush=True)
