"""``pgc pipeline``: the main job — a short train → audit → attack → report on embedded defaults.

    pgc pipeline                       # runs/pipeline/report/report.html (a few minutes on 2 cores)
    pgc pipeline --out DIR --force     # replace an earlier pipeline folder
    pgc pipeline --include results/tune/tune.json   # add further results (e.g. a tuning study) to the report
    pgc pipeline --protect all         # the private trials with the mitigations (pgc.a3c.protect); audits vs the total ε

Embedded defaults (all visible in DIR/pipeline.json):

1. train — the confirmed reading of the paper's unstated choices (:data:`MAIN_READING`, see
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

Steps that need a package this checkout lacks are skipped and named in the report's input list.
"""

from __future__ import annotations

from pgc.options import add_force, add_out, add_seed

import argparse
import contextlib
import importlib.util
import io
import json
import math
import sys
import time
from pathlib import Path

import pgc.schemas as schemas
from pgc.replication.grid import CONFIRMED_READING

from reports.files import write_json_atomic
from pgc.errors import UserError
# the reading confirmed on fresh seeds (results/replicate/confirmation/); runnable as pgc replicate --reading
MAIN_READING = CONFIRMED_READING
PROTECTED_SUBMISSIONS = 10_000  # private trials with a privatized score: fixed length, no noisy stopping rule
TRAIN_DEFAULTS = {"reading": MAIN_READING, "mechanism": "laplace", "epsilon": 5.0, "trials": 4, "reference_trials": 2,
                  "submissions": 30_000, "stop_at_success": True}
AUDIT_DEFAULTS = {"pairs": ["9.7:9.9", "5:15"], "samples": 10_000, "mechanism_samples": 100_000, "compositions": [3],
                  "adversarial_pairs": ["5:15"], "adversarial_samples": 20_000}
ATTACK_DEFAULTS = {"targets": 300, "budget": 100, "channels": "gradient,score,timing",
                   "attackers": "likelihood,side-channel", "sweep_epsilons": ["1", "10", "inf"], "sweep_k": ["1", "10"],
                   "sweep_targets": 200}


class PipelineCommand:
    help = "the main job: train -> audit -> attack -> report on embedded defaults"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        add_out(p, default="runs/pipeline", help="output folder (default runs/pipeline)")
        add_force(p, help="replace a non-empty output folder")
        add_seed(p, default=0, help="root seed of every step (default 0)")
        p.add_argument("--quick", action="store_true", help="tiny budgets (smoke test; numbers are not meaningful)")
        p.add_argument("--include", nargs="+", default=[], metavar="RESULT",
                       help="further results (replicate, tune, audit, attack JSON) to add to the report")
        p.add_argument("--skip", nargs="+", default=[], choices=["audit", "attack"], help="steps to leave out")
        p.add_argument("--protect", default=None, metavar="CHANNELS",
                       help="mitigations of the private trials (score,timing,order or all; see pgc train --protect): "
                            "the audits then read them from the run and compare every channel with the total ε")

    def run(self, args: argparse.Namespace) -> int:
        if args.seed < 0:
            raise UserError("--seed must be >= 0")
        from pgc.a3c.protect import parse_protect

        try:
            args.protect = parse_protect(args.protect)
        except ValueError as exc:
            raise UserError(f"--protect: {exc}") from None
        from pgc.a3c.rundir import check_output_dir, replace_directory_atomically

        out = Path(args.out)
        check_output_dir(out, force=args.force, command="pipeline")  # never the working or home folder...
        for extra in args.include:
            if not Path(extra).exists():
                raise UserError(f"--include {extra} does not exist")
            if not (Path(extra).is_file() or Path(extra).is_dir()):  # a FIFO or device: refused before the work
                raise UserError(f"--include {extra} is not a regular file or a folder")
        steps: list[dict] = []
        inputs: list[str] = []
        # built in a temporary folder under the output's lock; it replaces the old one atomically
        with replace_directory_atomically(out, "pipeline") as work:
            self.moves = _moves(work, out)  # what the steps record and print names the final folder
            self._train(args, work, steps, inputs)
            if "audit" not in args.skip:
                self._audit(args, work, steps, inputs)
            if "attack" not in args.skip:
                self._attack(args, work, steps, inputs)
            inputs += [str(Path(x).resolve()) for x in args.include]
            _relocate_results(work, self.moves)
            self._report(args, work, out, steps, inputs)
        total = sum(s["wall_s"] for s in steps)
        print(f"pipeline finished in {total:.0f}s: open {out / 'report' / 'report.html'}")
        return 0

    # ------------------------------------------------------------------------------------------
    def _step(self, name: str, argv: list[str], steps: list[dict], ok_codes=(0,)) -> int:
        from ..main import main

        command = relocated("pgc " + " ".join(argv), self.moves)
        print(f"[{name}] {command}", flush=True)
        start = time.perf_counter()
        with _StepOutput(self.moves, sys.stdout) as echo, contextlib.redirect_stdout(echo):
            code = main(argv)  # every line of the step's output, as it comes
        wall = time.perf_counter() - start
        steps.append({"step": name, "command": command, "exit_code": code, "wall_s": round(wall, 2)})
        if code not in ok_codes:
            raise UserError(f"step {name} failed (exit code {code})")
        print(f"[{name}] {wall:.1f}s", flush=True)
        return code

    def _train(self, args, work: Path, steps: list[dict], inputs: list[str]) -> None:
        from pgc.a3c.rundir import save_run
        from pgc.a3c.trainer import TrainConfig, train_batch
        from pgc.replication.grid import get_reading

        d = TRAIN_DEFAULTS
        reading = get_reading(d["reading"])
        n = 300 if args.quick else d["submissions"]
        trials, refs = (2, 1) if args.quick else (d["trials"], d["reference_trials"])
        common = dict(hyper=reading.hyper, optimizer=reading.optimizer, exploration_clock=reading.exploration_clock,
                      submissions=n, stop_at_success=d["stop_at_success"])
        protect = getattr(args, "protect", ())
        private = dict(common)
        if "score" in protect:
            # the aggregator sees privatized scores only: their trailing mean crosses 195 on noise within
            # tens of submissions (docs/README-mitigations.md), so protected trials run a fixed length and
            # their utility is read from the true scores (evaluation only)
            private.update(stop_at_success=False, submissions=300 if args.quick else PROTECTED_SUBMISSIONS)
        configs = [TrainConfig(mechanism=d["mechanism"], epsilon=d["epsilon"], learning_rate=reading.learning_rate,
                               seed=args.seed + i, protect=protect, **private)
                   for i in range(trials)]
        variant = reading.nonprivate_variants[0]
        configs += [TrainConfig(mechanism="none", epsilon=math.inf, clip=variant.clip,
                                learning_rate=variant.learning_rate, seed=args.seed + i, **common)
                    for i in range(refs)]
        print(f"[train] reading {reading.name}: {d['mechanism']} ε={d['epsilon']:g}, {trials} trials + {refs} "
              f"non-private reference, up to {n:,} submissions each, stopped at the first success", flush=True)
        start = time.perf_counter()
        results = train_batch(configs, record_transcripts=[True] * trials + [False] * refs,
                              processes=min(2, len(configs)))
        wall = time.perf_counter() - start
        save_run(results, work / "train", wall_time=wall,
                 extra={"note": "pgc pipeline train step", "reading": reading.to_dict()})
        for r in results:
            s = r.summary()
            print(f"  {r.config.mechanism} seed {s['seed']}: FST={s['fst']} final μ={s['final_mu']:.1f}")
        steps.append({"step": "train", "command": "pgc pipeline (train_batch)", "exit_code": 0, "wall_s": round(wall, 2),
                      "reading": reading.name,
                      "configs": [c.to_dict() for c in configs[:1]] + [configs[-1].to_dict()]})
        inputs.append("train")
        print(f"[train] {wall:.1f}s", flush=True)

    def _audit(self, args, work: Path, steps: list[dict], inputs: list[str]) -> None:
        if importlib.util.find_spec("pgc.cli.commands.audit") is None or importlib.util.find_spec("audit") is None:
            steps.append({"step": "audit", "skipped": "the audit package is not available", "wall_s": 0.0})
            return
        a = AUDIT_DEFAULTS
        argv = ["audit", "--run", str(work / "train"), "--pairs", *a["pairs"],
                "--samples", str(2000 if args.quick else a["samples"]),
                "--mechanism-samples", str(5000 if args.quick else a["mechanism_samples"]),
                "--compositions", *map(str, a["compositions"]), "--seed", str(args.seed),
                "--out", str(work / "audit.json")]
        self._step("audit", argv, steps)
        inputs.append("audit.json")
        argv = ["audit", "--run", str(work / "train"), "--adversarial-model", "--search-budget", "quick",
                "--pairs", *a["adversarial_pairs"],
                "--samples", str(2000 if args.quick else a["adversarial_samples"]), "--seed", str(args.seed),
                "--out", str(work / "audit-adversarial.json")]
        self._step("audit-adversarial", argv, steps)
        inputs.append("audit-adversarial.json")
        # the committed evidence is about the unprotected protocol; a protected run shows the mitigations' own
        from pgc.references import ADVERSARIAL, PROTECTED_ADVERSARIAL, reference_path

        committed = PROTECTED_ADVERSARIAL if getattr(args, "protect", ()) else ADVERSARIAL
        inputs += [str(reference_path(relative)) for relative in committed]

    def _attack(self, args, work: Path, steps: list[dict], inputs: list[str]) -> None:
        if importlib.util.find_spec("pgc.cli.commands.attack") is None or importlib.util.find_spec("attacks") is None:
            steps.append({"step": "attack", "skipped": "the attacks package is not available", "wall_s": 0.0})
            return
        a = ATTACK_DEFAULTS
        targets = "60" if args.quick else str(a["targets"])
        budget = "20" if args.quick else str(a["budget"])
        # exit code 1 = the attacker flagged a ceiling violation: a finding for the report, not a failure
        self._step("attack", ["attack", "--run", str(work / "train"), "--channels", a["channels"], "--attackers",
                              a["attackers"], "--targets", targets, "--budget", budget, "--seed", str(args.seed),
                              "--out", str(work / "attack-run.json")], steps, ok_codes=(0, 1))
        inputs.append("attack-run.json")
        self._step("attack-sweep", ["attack", "--sweep", "--model", f"run:{work / 'train'}", "--epsilons",
                                    *a["sweep_epsilons"], "--k", *a["sweep_k"], "--attackers", "likelihood",
                                    "--targets", "60" if args.quick else str(a["sweep_targets"]), "--budget", budget,
                                    "--seed", str(args.seed), "--out", str(work / "attack-sweep.json")], steps,
                   ok_codes=(0, 1))
        inputs.append("attack-sweep.json")

    def _report(self, args, work: Path, out: Path, steps: list[dict], inputs: list[str]) -> None:
        from reports import ReportInputError, build_report

        manifest = {"kind": "pipeline", "format": "pgc-pipeline/1", "seed": args.seed, "quick": args.quick,
                    **({"protect": list(args.protect)} if getattr(args, "protect", ()) else {}),
                    "command": "pgc " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["pipeline"] else "pgc pipeline",
                    "defaults": {"train": TRAIN_DEFAULTS, "audit": AUDIT_DEFAULTS, "attack": ATTACK_DEFAULTS},
                    "inputs": inputs, "steps": steps}
        write_json_atomic(work / "pipeline.json", schemas.dump("pipeline", manifest))
        start = time.perf_counter()
        sources = [str(work / x) if not Path(x).is_absolute() else x for x in inputs]
        try:
            build_report(sources, work / "report", title="pgc-audit privacy report — main job (pgc pipeline)",
                         shown_path=lambda path: relocated(str(path), self.moves))  # the inputs' final location
        except ReportInputError as exc:
            raise UserError(f"report step: {exc}") from None
        wall = time.perf_counter() - start
        steps.append({"step": "report", "command": f"pgc report {' '.join(inputs)} --out report", "exit_code": 0,
                      "wall_s": round(wall, 2)})
        manifest["steps"] = steps
        manifest["wall_s"] = round(sum(s["wall_s"] for s in steps), 2)
        write_json_atomic(work / "pipeline.json", schemas.dump("pipeline", manifest))
        print(f"[report] {wall:.1f}s -> {out / 'report' / 'report.html'}", flush=True)


def _moves(work: Path, out: Path) -> list[tuple[str, str]]:
    """The temporary folder's names (absolute first) and the final folder's, for :func:`relocated`."""
    return [(str(work.resolve()), str(out.resolve())), (str(work), str(out))]


def relocated(value, moves: list[tuple[str, str]]):
    """``value`` (text, or JSON data) with every mention of the temporary folder naming the final one."""
    if isinstance(value, str):
        for old, new in moves:
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: relocated(v, moves) for k, v in value.items()}
    if isinstance(value, list):
        return [relocated(v, moves) for v in value]
    return value


def _relocate_results(work: Path, moves: list[tuple[str, str]]) -> None:
    """The steps' results (and the sweep's plot, which draws its model's path) name the final folder."""
    from attacks.sweep import plot_sweep

    from .attack import _sweep_title

    for path in sorted(work.glob("*.json")):
        data = json.loads(path.read_text())
        moved = relocated(data, moves)
        if moved != data:
            write_json_atomic(path, moved)
        if path.name == "attack-sweep.json" and (work / moved.get("plot", "")).is_file():
            plot_sweep(moved, work / moved["plot"], _sweep_title(moved))


class _StepOutput(io.TextIOBase):
    """A step's standard output, line by line as it comes, indented and naming the final folder."""

    def __init__(self, moves: list[tuple[str, str]], stream):
        self.moves, self.stream, self.pending = moves, stream, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self.stream.write(f"  {relocated(line, self.moves)}\n")
        self.stream.flush()
        return len(text)

    def __exit__(self, *exc) -> None:
        if self.pending:
            self.write("\n")
        super().__exit__(*exc)
