"""``pgc audit``: certified ε lower bounds next to the claim.

Three modes (exactly one):

* ``--mechanism NAME --epsilon E [--clip C] [--reduced-dim K] [--rounds T] [--white-box]`` —
  black-box canary audit of a registered mechanism (``--white-box``: PRS from its ũ and M);
* ``--run DIR`` — the run's mechanism (canary audit) and an environment audit of its trained model
  (``--initial`` for the initial weights) for each ``--pairs`` ψ:ψ', per transcript channel;
  ``--mechanism``/``--epsilon`` override the run's mechanism;
* ``--self-test`` — every correct mechanism and every planted bug; exit code 1 if any is misjudged;
* ``--ldp LIBRARY:PROTOCOL`` and ``--nvflare MODULE:FILTER`` — an LDP frequency oracle of multi-freq-ldpy,
  pure-ldp or the reference, and an NVIDIA FLARE filter, audited as Systems (:mod:`.library`);
* ``--one-run RUN`` — the one-run audit of a run trained with canary agents (``pgc train --canaries``):
  each canary submission in the transcript is guessed with a statistic fitted on releases the auditor
  simulates itself, and ε_LB follows from the one-run theorem (:mod:`audit.one_run`,
  docs/README-one-run.md) per channel (gradient, score, all).

``--adversarial-model`` (with ``--mechanism`` or ``--run``): the aggregator crafts θ for each pair
(:mod:`pgc.audits.adversarial`) and the channels are certified at it; ``--pairs`` also takes a range
``LO..HI`` (an optuna search for the pair the crafted model separates best). The crafted θ are saved
as checkpoints beside the JSON (``pgc attack --model FILE`` loads them). ``--adversarial-curve``
(with ``--mechanism``): ε_LB/ε against the neighbour distance, honest vs crafted θ.

``--engine ray [--address ADDR]`` runs the independent audits as tasks on a Ray cluster (a local one
without ``--address``): the run mode's canary audit and each pair's environment audit, each pair of
``--adversarial-model``, each point (Δψ, ε) of ``--adversarial-curve`` and each ``--self-test``
case. Every task draws from its own seeds, so the JSON is the local engine's (timings aside).

Writes one JSON file (atomically; ``"kind": "audit"``, a flat ``"channels"`` list for report
generators) and prints a readable summary.
"""

from __future__ import annotations

import argparse
import sys
import time

import pgc.schemas as schemas

from pgc.engines import chosen_engine
from pgc.errors import UserError

from .adversarial import adversarial_curve, audit_adversarial_mechanism
from .mechanism import audit_named_mechanism, self_test
from .one_run import audit_one_run
from .options import (MAX_ESTIMATED_HOURS, add_adversarial_arguments, add_audit_arguments, add_mode_arguments,
                      add_output_arguments, chosen_mode, estimated_seconds)
from .run import audit_run
from .flower_one_run import audit_flower_one_run
from .library import add_library_arguments, audit_ldp, audit_nvflare
from .system import audit_any_system, audit_flower_client

MODE_FUNCTIONS = {"mechanism": audit_named_mechanism, "run": audit_run, "self_test": self_test,
                  "system": audit_any_system, "one_run": audit_one_run, "flower": audit_flower_client,
                  "flower_one_run": audit_flower_one_run, "adversarial": audit_adversarial_mechanism,
                  "adversarial_curve": adversarial_curve, "ldp": audit_ldp, "nvflare": audit_nvflare}


class AuditCommand:
    help = "empirical ε lower bounds"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        add_mode_arguments(p)
        add_library_arguments(p)
        add_audit_arguments(p)
        add_adversarial_arguments(p)
        add_output_arguments(p)

    def run(self, args: argparse.Namespace) -> int:
        from ...outputs import ResultFile

        mode = chosen_mode(args)
        result = ResultFile(args.out, command="audit", name=mode.replace("_", "-"), force=args.force)
        args.result = result
        args.announce = lambda mechanism=None, episode_length=None: _announce_estimate(
            args, mode, report, mechanism, episode_length)
        start = time.perf_counter()
        report = {"kind": "audit", "mode": mode.replace("_", "-"), "confidence": args.confidence,
                  "delta": args.delta or 0.0, "seed": args.seed, "command": "pgc " + " ".join(sys.argv[1:]),
                  "channels": []}
        with result:  # a second writer of the same file exits 2 at once
            with chosen_engine(args.engine, args.address) as engine:  # None: the local engine, this process
                args.executor = engine
                # a task on the cluster shows no progress bar (its output stays on its worker)
                status = MODE_FUNCTIONS[mode](args, report, args.progress and engine is None)
            report["wall_time_s"] = time.perf_counter() - start
            result.write(schemas.dump(report["kind"], report))
        print(f"wrote {result.path} ({report['wall_time_s']:.1f}s)")
        return fail_on_status(report, args.fail_on, status)


def fail_on_status(report: dict, fail_on: str | None, status: int) -> int:
    """``--fail-on``: 1 when some row's verdict is in the chosen set (said in one line), else the mode's status."""
    from audit.verdicts import FAILING, row_verdicts

    if fail_on is None:
        return status
    verdicts = row_verdicts(report)
    failing = [v for v in verdicts if v in FAILING[fail_on]]
    if failing:
        counts = ", ".join(f"{failing.count(v)} {v}" for v in sorted(set(failing)))
        print(f"--fail-on {fail_on}: {counts} of {len(verdicts)} rows: exit 1")
        return 1
    return status


def _announce_estimate(args: argparse.Namespace, mode: str, report: dict, mechanism=None,
                       episode_length: float | None = None) -> None:
    """Once a mode has checked its inputs: the audit's estimated wall time (refused over the limit without
    --allow-long), printed before the work starts and kept in the result beside the wall time."""
    from audit.planning import duration_text

    estimate = estimated_seconds(args, mode, mechanism, episode_length)
    if estimate is None:
        return
    report["estimated_seconds"] = round(estimate, 1)
    if estimate > MAX_ESTIMATED_HOURS * 3600 and not args.allow_long:
        raise UserError(f"this audit would take about {duration_text(estimate)} (more than {MAX_ESTIMATED_HOURS:g} h); "
                       "lower --samples or pass --allow-long")
    print(f"estimated time: about {duration_text(estimate)} (calibrated on a 2-core machine)", flush=True)
