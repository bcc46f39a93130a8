"""The main job's steps (``pgc pipeline``): train → audit → attack → report on embedded defaults.

1. train — :func:`train_step`: the confirmed reading of the paper's unstated choices (:data:`MAIN_READING`,
   see docs/README-replicate.md) at an ε the paper reports (:data:`TRAIN_DEFAULTS`), each trial stopped at its
   first success (FST, eq. 26), plus non-private reference trials of the same reading;
2. audit — :func:`audit_steps`: the ``pgc audit`` command lines of the run's canary and environment audits
   and of the adversarial aggregator (:data:`AUDIT_DEFAULTS`), and :func:`committed_evidence`, the
   committed adversarial results the report shows beside them;
3. attack — :func:`attack_steps`: the ``pgc attack`` command lines on the run's transcript and the
   accuracy-vs-ε sweep at its model (:data:`ATTACK_DEFAULTS`);
4. report — :func:`report_step`: the manifest ``pipeline.json`` and the report over every input.

The job is built in a temporary folder that replaces the output folder at the end; :func:`relocated` and
:class:`StepOutput` make what the steps record and print name the final folder.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.files import write_json_atomic
from pgc.replication.grid import CONFIRMED_READING

# the reading confirmed on fresh seeds (results/replicate/confirmation/); runnable as pgc replicate --reading
MAIN_READING = CONFIRMED_READING
PROTECTED_SUBMISSIONS = 10_000  # private trials with a privatized score: fixed length, no noisy stopping rule
TRAIN_DEFAULTS = {
    "reading": MAIN_READING,
    "mechanism": "laplace",
    "epsilon": 5.0,
    "trials": 4,
    "reference_trials": 2,
    "submissions": 30_000,
    "stop_at_success": True,
}
AUDIT_DEFAULTS = {
    "pairs": ["9.7:9.9", "5:15"],
    "samples": 10_000,
    "mechanism_samples": 100_000,
    "compositions": [3],
    "adversarial_pairs": ["5:15"],
    "adversarial_samples": 20_000,
}
ATTACK_DEFAULTS = {
    "targets": 300,
    "budget": 100,
    "channels": "gradient,score,timing",
    "attackers": "likelihood,side-channel",
    "sweep_epsilons": ["1", "10", "inf"],
    "sweep_k": ["1", "10"],
    "sweep_targets": 200,
}
REPORT_TITLE = "pgc-audit privacy report — main job (pgc pipeline)"


def train_configs(seed: int, quick: bool, protect: tuple[str, ...]) -> tuple[list, list[bool], object, int]:
    """The train step's trial configurations (private trials first, then the non-private references), which
    of them record transcripts, the reading and the submissions of each trial."""
    from pgc.a3c.trainer import TrainConfig
    from pgc.replication.grid import get_reading

    d = TRAIN_DEFAULTS
    reading = get_reading(d["reading"])
    n = 300 if quick else d["submissions"]
    trials, refs = (2, 1) if quick else (d["trials"], d["reference_trials"])
    common = dict(
        hyper=reading.hyper,
        optimizer=reading.optimizer,
        exploration_clock=reading.exploration_clock,
        submissions=n,
        stop_at_success=d["stop_at_success"],
    )
    private = dict(common)
    if "score" in protect:
        # the aggregator sees privatized scores only: their trailing mean crosses 195 on noise within
        # tens of submissions (docs/README-mitigations.md), so protected trials run a fixed length and
        # their utility is read from the true scores (evaluation only)
        private.update(stop_at_success=False, submissions=300 if quick else PROTECTED_SUBMISSIONS)
    configs = [
        TrainConfig(
            mechanism=d["mechanism"],
            epsilon=d["epsilon"],
            learning_rate=reading.learning_rate,
            seed=seed + i,
            protect=protect,
            **private,
        )
        for i in range(trials)
    ]
    variant = reading.nonprivate_variants[0]
    configs += [
        TrainConfig(
            mechanism="none",
            epsilon=math.inf,
            clip=variant.clip,
            learning_rate=variant.learning_rate,
            seed=seed + i,
            **common,
        )
        for i in range(refs)
    ]
    return configs, [True] * trials + [False] * refs, reading, n


def train_step(
    work: Path, *, seed: int, quick: bool, protect: tuple[str, ...] = (), log: Callable[[str], None] = print
) -> schemas.PipelineStep:
    """Train the step's trials (two processes) into ``work/train``; the step's record."""
    from pgc.a3c.rundir import save_run
    from pgc.a3c.trainer import train_batch

    d = TRAIN_DEFAULTS
    configs, transcripts, reading, n = train_configs(seed, quick, protect)
    trials = sum(transcripts)
    log(
        f"[train] reading {reading.name}: {d['mechanism']} ε={d['epsilon']:g}, {trials} trials + "
        f"{len(configs) - trials} non-private reference, up to {n:,} submissions each, stopped at the first success"
    )
    start = time.perf_counter()
    results = train_batch(configs, record_transcripts=transcripts, processes=min(2, len(configs)))
    wall = time.perf_counter() - start
    save_run(
        results, work / "train", wall_time=wall, extra={"note": "pgc pipeline train step", "reading": reading.to_dict()}
    )
    for r in results:
        s = r.summary()
        log(f"  {r.config.mechanism} seed {s['seed']}: FST={s['fst']} final μ={s['final_mu']:.1f}")
    log(f"[train] {wall:.1f}s")
    return schemas.PipelineStep(
        step="train",
        command="pgc pipeline (train_batch)",
        exit_code=0,
        wall_s=round(wall, 2),
        reading=reading.name,
        configs=schemas.json_ready([c.to_dict() for c in configs[:1]] + [configs[-1].to_dict()]),
    )


def audit_steps(work: Path, *, seed: int, quick: bool) -> list[tuple[str, list[str], str]]:
    """(step, ``pgc`` arguments, result file) of the audit steps: the run's canary and environment audits,
    then the adversarial aggregator's crafted models."""
    a = AUDIT_DEFAULTS
    train = str(work / "train")
    return [
        (
            "audit",
            [
                "audit",
                "run",
                train,
                "--pairs",
                *a["pairs"],
                "--samples",
                str(2000 if quick else a["samples"]),
                "--mechanism-samples",
                str(5000 if quick else a["mechanism_samples"]),
                "--compositions",
                *map(str, a["compositions"]),
                "--seed",
                str(seed),
                "--out",
                str(work / "audit.json"),
            ],
            "audit.json",
        ),
        (
            "audit-adversarial",
            [
                "audit",
                "adversarial-model",
                "--run",
                train,
                "--search-budget",
                "quick",
                "--pairs",
                *a["adversarial_pairs"],
                "--samples",
                str(2000 if quick else a["adversarial_samples"]),
                "--seed",
                str(seed),
                "--out",
                str(work / "audit-adversarial.json"),
            ],
            "audit-adversarial.json",
        ),
    ]


def committed_evidence(protect: tuple[str, ...]) -> list[str]:
    """The committed adversarial evidence the report shows beside the audits: about the unprotected protocol,
    or the mitigations' own for a protected run."""
    from pgc.references import ADVERSARIAL, PROTECTED_ADVERSARIAL, reference_path

    return [str(reference_path(relative)) for relative in (PROTECTED_ADVERSARIAL if protect else ADVERSARIAL)]


def attack_steps(work: Path, *, seed: int, quick: bool) -> list[tuple[str, list[str], str]]:
    """(step, ``pgc`` arguments, result file) of the attack steps: the run's transcript, then the sweep over ε
    at its model. Their exit code 1 (a ceiling violation flagged) is a finding for the report."""
    a = ATTACK_DEFAULTS
    budget = "20" if quick else str(a["budget"])
    return [
        (
            "attack",
            [
                "attack",
                "--run",
                str(work / "train"),
                "--channels",
                a["channels"],
                "--attackers",
                a["attackers"],
                "--targets",
                "60" if quick else str(a["targets"]),
                "--budget",
                budget,
                "--seed",
                str(seed),
                "--out",
                str(work / "attack-run.json"),
            ],
            "attack-run.json",
        ),
        (
            "attack-sweep",
            [
                "attack",
                "--sweep",
                "--model",
                f"run:{work / 'train'}",
                "--epsilons",
                *a["sweep_epsilons"],
                "--k",
                *a["sweep_k"],
                "--attackers",
                "likelihood",
                "--targets",
                "60" if quick else str(a["sweep_targets"]),
                "--budget",
                budget,
                "--seed",
                str(seed),
                "--out",
                str(work / "attack-sweep.json"),
            ],
            "attack-sweep.json",
        ),
    ]


def report_step(
    work: Path,
    out: Path,
    manifest: schemas.Pipeline,
    steps: list[schemas.PipelineStep],
    inputs: list[str],
    moves: list[tuple[str, str]],
    log: Callable[[str], None] = print,
) -> None:
    """``work/pipeline.json`` (``manifest`` with the defaults, inputs and steps) and the report over every
    input in ``work/report``, naming the final folder ``out``; the report's step joins ``steps``."""
    from reports import ReportInputError, build_report

    manifest = dataclasses.replace(
        manifest,
        defaults=schemas.json_ready({"train": TRAIN_DEFAULTS, "audit": AUDIT_DEFAULTS, "attack": ATTACK_DEFAULTS}),
        inputs=list(inputs),
        steps=list(steps),
    )
    write_json_atomic(work / "pipeline.json", manifest.to_dict())
    start = time.perf_counter()
    sources = [str(work / x) if not Path(x).is_absolute() else x for x in inputs]
    try:
        build_report(
            sources, work / "report", title=REPORT_TITLE, shown_path=lambda path: relocated(str(path), moves)
        )  # the inputs' final location
    except ReportInputError as exc:
        raise UserError(f"report step: {exc}") from None
    wall = time.perf_counter() - start
    steps.append(
        schemas.PipelineStep(
            step="report", command=f"pgc report {' '.join(inputs)} --out report", exit_code=0, wall_s=round(wall, 2)
        )
    )
    manifest = dataclasses.replace(manifest, steps=list(steps), wall_s=round(sum(s.wall_s for s in steps), 2))
    write_json_atomic(work / "pipeline.json", manifest.to_dict())
    log(f"[report] {wall:.1f}s -> {out / 'report' / 'report.html'}")


def folder_moves(work: Path, out: Path) -> list[tuple[str, str]]:
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


def relocate_results(work: Path, moves: list[tuple[str, str]]) -> None:
    """The steps' results (and the sweep's plot, which draws its model's path) name the final folder."""
    from attacks.a3c.sweep import plot_sweep, sweep_title

    for path in sorted(work.glob("*.json")):
        data = json.loads(path.read_text())
        moved = relocated(data, moves)
        if moved != data:
            write_json_atomic(path, moved)
        if path.name == "attack-sweep.json" and (work / moved.get("plot", "")).is_file():
            plot_sweep(moved, work / moved["plot"], sweep_title(moved))


class StepOutput(io.TextIOBase):
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
