"""``pgc pipeline``: the main job — a short train → audit → attack → report on embedded defaults.

    pgc pipeline                       # runs/pipeline/report/report.html (a few minutes on 2 cores)
    pgc pipeline --out DIR --force     # replace an earlier pipeline folder
    pgc pipeline --include results/tune/tune.json   # add further results (e.g. a tuning study) to the report
    pgc pipeline --protect all         # the private trials with the mitigations (pgc.a3c.protect);
                                       # audits vs the total ε

Embedded defaults (all visible in DIR/pipeline.json):

1. train — the confirmed reading of the paper's unstated choices (:data:`pgc.studies.pipeline.MAIN_READING`, see
   docs/README-replicate.md) at an ε the paper reports (Laplace ε = 5, C = 0.01, |B| = 1, η = 0.5,
   λ = 0.5, Ψ = {9.7, 9.8, 9.9}, 9 workers): 4 trials with transcripts, each stopped at its first
   success (FST, eq. 26) within 30,000 submissions, so the audited model is one that balances the
   pole; plus 2 non-private reference trials of the same reading;
2. audit — ``pgc audit --run``: black-box canary audit of the run's mechanism, and the environment
   audit of trial 0's trained model per transcript channel for ψ = 9.7 vs 9.9 and the wide pair 5 vs 15,
   with k = 3 submissions per environment;
   then the adversarial aggregator: ``pgc audit --run --adversarial-model`` crafts θ for 5 vs 15
   and certifies the run's mechanism at it per channel; the committed adversarial evidence (the curve
   of ε_LB/ε against Δψ, the headline audits and the active attacks under ``results/``, when the
   checkout has them) joins the report;
3. attack — ``pgc attack --run`` on trial 0's transcript (gradient, score and timing channels), and an
   accuracy-vs-ε sweep at the trained model (ε ∈ {1, 10, ∞}, k ∈ {1, 10});
4. report — ``pgc report`` on all of the above.

Steps that need a package this checkout lacks are skipped and named in the report's input list. The steps'
settings and their records are :mod:`pgc.studies.pipeline`'s; this command runs the audit and attack steps
through ``pgc`` itself.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import time
from pathlib import Path

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.options import add_force, add_out, add_seed


class PipelineCommand:
    help = "the main job: train -> audit -> attack -> report on embedded defaults"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        add_out(p, default="runs/pipeline", help="output folder (default runs/pipeline)")
        add_force(p, help="replace a non-empty output folder")
        add_seed(p, default=0, help="root seed of every step (default 0)")
        p.add_argument("--quick", action="store_true", help="tiny budgets (smoke test; numbers are not meaningful)")
        p.add_argument(
            "--include",
            nargs="+",
            default=[],
            metavar="RESULT",
            help="further results (replicate, tune, audit, attack JSON) to add to the report",
        )
        p.add_argument("--skip", nargs="+", default=[], choices=["audit", "attack"], help="steps to leave out")
        p.add_argument(
            "--protect",
            default=None,
            metavar="CHANNELS",
            help="mitigations of the private trials (score,timing,order or all; see pgc train --protect): "
            "the audits then read them from the run and compare every channel with the total ε",
        )

    def run(self, args: argparse.Namespace) -> int:
        from pgc.a3c.protect import parse_protect
        from pgc.outdirs import check_output_dir, replace_directory_atomically
        from pgc.studies import pipeline

        if args.seed < 0:
            raise UserError("--seed must be >= 0")
        try:
            protect = parse_protect(args.protect)
        except ValueError as exc:
            raise UserError(f"--protect: {exc}") from None
        out = Path(args.out)
        check_output_dir(out, force=args.force, command="pipeline")  # never the working or home folder...
        for extra in args.include:
            if not Path(extra).exists():
                raise UserError(f"--include {extra} does not exist")
            if not (Path(extra).is_file() or Path(extra).is_dir()):  # a FIFO or device: refused before the work
                raise UserError(f"--include {extra} is not a regular file or a folder")
        steps: list[schemas.PipelineStep] = []
        inputs: list[str] = []
        # built in a temporary folder under the output's lock; it replaces the old one atomically
        with replace_directory_atomically(out, "pipeline") as work:
            self.moves = pipeline.folder_moves(work, out)  # what the steps record and print name the final folder
            steps.append(pipeline.train_step(work, seed=args.seed, quick=args.quick, protect=protect, log=_say))
            inputs.append("train")
            if "audit" not in args.skip:
                if self._steps("audit", pipeline.audit_steps(work, seed=args.seed, quick=args.quick), steps, inputs):
                    inputs += pipeline.committed_evidence(protect)
            if "attack" not in args.skip:
                # exit code 1 = the attacker flagged a ceiling violation: a finding for the report, not a failure
                self._steps(
                    "attack",
                    pipeline.attack_steps(work, seed=args.seed, quick=args.quick),
                    steps,
                    inputs,
                    ok_codes=(0, 1),
                )
            inputs += [str(Path(x).resolve()) for x in args.include]
            pipeline.relocate_results(work, self.moves)
            manifest = schemas.Pipeline(
                format="pgc-pipeline/1",
                inputs=[],
                seed=args.seed,
                quick=args.quick,
                protect=list(protect) if protect else None,
                command="pgc " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["pipeline"] else "pgc pipeline",
            )
            pipeline.report_step(work, out, manifest, steps, inputs, self.moves, log=_say)
        total = sum(s.wall_s for s in steps)
        print(f"pipeline finished in {total:.0f}s: open {out / 'report' / 'report.html'}")
        return 0

    def _steps(
        self, package: str, commands, steps: list[schemas.PipelineStep], inputs: list[str], ok_codes=(0,)
    ) -> bool:
        """Each ``pgc`` command of a step in turn (the step skipped, and named, when this checkout lacks the
        package it needs: False); each result joins the report's inputs."""
        needs = {"audit": ("pgc.cli.commands.audit", "audit"), "attack": ("pgc.cli.commands.attack", "attacks")}
        if any(importlib.util.find_spec(name) is None for name in needs[package]):
            steps.append(
                schemas.PipelineStep(
                    step=package, skipped=f"the {needs[package][1]} package is not available", wall_s=0.0
                )
            )
            return False
        for name, argv, result in commands:
            self._step(name, argv, steps, ok_codes)
            inputs.append(result)
        return True

    def _step(self, name: str, argv: list[str], steps: list[schemas.PipelineStep], ok_codes=(0,)) -> int:
        from pgc.studies.pipeline import StepOutput, relocated

        from ..main import main

        command = relocated("pgc " + " ".join(argv), self.moves)
        print(f"[{name}] {command}", flush=True)
        start = time.perf_counter()
        with StepOutput(self.moves, sys.stdout) as echo, contextlib.redirect_stdout(echo):
            code = main(argv)  # every line of the step's output, as it comes
        wall = time.perf_counter() - start
        steps.append(schemas.PipelineStep(step=name, command=command, exit_code=code, wall_s=round(wall, 2)))
        if code not in ok_codes:
            raise UserError(f"step {name} failed (exit code {code})")
        print(f"[{name}] {wall:.1f}s", flush=True)
        return code


def _say(line: str) -> None:
    print(line, flush=True)
