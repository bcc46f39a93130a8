"""A training run on disk (``pgc train --out DIR``), written atomically, read without executing code.

    DIR/summary.json            settings, per-trial FST / final μ / updates, versions, wall time
    DIR/trial_000/checkpoint.pt final θ (torch state_dict, weights only)
    DIR/trial_000/initial.pt    initial θ
    DIR/trial_000/scores.npy    ζ per submission (arrival order)
    DIR/trial_000/transcript.npz    aggregator view (if recorded)
    DIR/trial_000/ground_truth.npz  evaluation-only ψ per submission (if recorded)

The whole folder is built under a temporary name beside DIR and renamed at the end (:mod:`pgc.outdirs`:
the output guard, lock and atomic replacement every command's folders share).
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.files import json_safe
from pgc.outdirs import (  # noqa: F401
    MARKER_FILE,
    OutputBusyError,
    OutputDirError,
    OutputExistsError,
    check_output_dir,
    is_pgc_output,
    lock_path,
    output_command,
    output_lock,
    remove_stale_partials,
    replace_directory_atomically,
    write_marker,
)

from .model import load_checkpoint, save_checkpoint
from .transcript import CanaryRecord, GroundTruth, Transcript

SUMMARY_FILE = "summary.json"
FORMAT = "pgc-run/1"


def versions() -> dict[str, str]:
    import numba
    import torch

    from pgc import __version__

    return {
        "pgc-audit": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "numba": numba.__version__,
    }


def save_run(
    results, out_dir: str | Path, *, wall_time: float, extra: dict | None = None, overwrite: bool = False
) -> Path:
    """Write a list of :class:`pgc.a3c.trainer.TrainResult` as a run folder (atomically); ``extra`` may give the
    summary's ``note`` and ``reading``."""
    out = Path(out_dir)
    with output_lock(out), replace_directory_atomically(out, "train") as tmp:
        check_output_dir(out, force=overwrite, command="train")
        trials = []
        for i, r in enumerate(results):
            tdir = tmp / f"trial_{i:03d}"
            tdir.mkdir()
            save_checkpoint(r.theta, tdir / "checkpoint.pt")
            save_checkpoint(r.initial_theta, tdir / "initial.pt")
            np.save(tdir / "scores.npy", r.scores)
            if r.transcript is not None:
                r.transcript.save(tdir)
                r.ground_truth.save(tdir)
                if getattr(r, "canaries", None) is not None:
                    r.canaries.save(tdir)
            trials.append(_trial_record(tdir.name, r))
        given = extra or {}
        if set(given) - {"note", "reading"}:
            raise TypeError(f"save_run records a note and a reading, not {sorted(set(given) - {'note', 'reading'})}")
        summary = schemas.TrainRun(
            format=FORMAT,
            wall_time_s=wall_time,
            agent_steps=int(sum(r.agent_steps for r in results)),
            versions=versions(),
            trials=trials,
            note=given.get("note"),
            reading=given.get("reading"),
        )
        (tmp / SUMMARY_FILE).write_text(json.dumps(json_safe(summary.to_dict()), indent=2) + "\n")
    return out


def _trial_record(name: str, r) -> schemas.TrainTrial:
    """The summary's entry of one trial: its folder, configuration, outcome, protection and mechanism."""
    s = r.summary()
    mechanism = getattr(r, "mechanism", None)
    return schemas.TrainTrial(
        dir=name,
        config=r.config.to_dict(),
        seed=s["seed"],
        fst=r.fst,
        final_mu=s["final_mu"],
        best_mu=s["best_mu"],
        submissions=s["submissions"],
        updates=s["updates"],
        agent_steps=s["agent_steps"],
        nonfinite_gradients=s["nonfinite_gradients"],
        protection=_protection(s) if r.config.protect else None,
        transcript=r.transcript is not None,
        mechanism=None if mechanism is None else _mechanism_record(mechanism),
    )


def _protection(s: dict) -> schemas.TrialProtection:
    """The protection keys of a trial's summary (its ε values written as JSON numbers, read back as floats)."""
    return schemas.TrialProtection(
        protect=s["protect"],
        claimed_epsilon_total=schemas.number(s["claimed_epsilon_total"]),
        gradient_epsilon=schemas.number(s["gradient_epsilon"]),
        score_epsilon=schemas.number(s.get("score_epsilon")),
        claim_covers=s.get("claim_covers"),
        metrics_from=s.get("metrics_from"),
        note=s.get("note"),
        fst_true_scores=schemas.number(s.get("fst_true_scores")),
        final_mu_true_scores=s.get("final_mu_true_scores"),
    )


def _mechanism_record(m: dict) -> schemas.MechanismRecord:
    return schemas.MechanismRecord(
        name=m["name"],
        cls=m["class"],
        params=m["params"],
        factory_args=m["factory_args"],
        rounds=m["rounds"],
        fingerprint=m["fingerprint"],
    )


@dataclass(frozen=True)
class TrialFiles:
    directory: Path
    summary: dict

    @property
    def config(self):
        from .trainer import TrainConfig

        return TrainConfig.from_dict(self.summary["config"])

    def mechanism(self):
        """The per-submission mechanism this trial was trained with (see :func:`load_mechanism`)."""
        from pgc.mechanisms import rebuild_mechanism

        record = self.summary.get("mechanism")
        if record is None:  # runs written before mechanisms were recorded: the config names a built-in
            return self.config.build_mechanism()
        return rebuild_mechanism(record, where=str(self.directory))

    def theta(self) -> np.ndarray:
        return load_checkpoint(self.directory / "checkpoint.pt")

    def initial_theta(self) -> np.ndarray:
        return load_checkpoint(self.directory / "initial.pt")

    def scores(self) -> np.ndarray:
        return np.load(self.directory / "scores.npy", allow_pickle=False)

    def transcript(self) -> Transcript:
        return Transcript.load(self.directory)

    def ground_truth(self) -> GroundTruth:
        """Evaluation-only."""
        return GroundTruth.load(self.directory)

    def canaries(self) -> CanaryRecord:
        """The trial's canary agents (positions, crafted θ, setup); not their coins."""
        return CanaryRecord.load(self.directory)

    def system(self, theta: np.ndarray):
        """PGC-A3C's System as this trial ran (its mechanism, hyper-parameters, physics and mitigations) at θ."""
        from .system import PGCA3CSystem

        config = self.config
        return PGCA3CSystem(
            self.mechanism(),
            theta,
            hyper=config.hyper,
            physics=config.physics,
            protect=config.protect,
            score_epsilon=config.score_epsilon_total if "score" in config.protect else None,
        )

    def canary_broadcasts(self, canaries: CanaryRecord, transcript: Transcript, limit: int) -> list[np.ndarray]:
        """The models the canaries played: the crafted θ, or for live canaries up to ``limit`` of the θ
        versions they copied, spread evenly over them."""
        if canaries.theta is not None:
            return [canaries.theta]
        versions = np.sort(transcript.model_version[canaries.positions])
        picks = np.unique(versions[np.linspace(0, versions.size - 1, limit).astype(int)])
        where = {int(v): i for i, v in enumerate(transcript.theta_versions)}
        return [transcript.thetas[where[int(v)]] for v in picks]


def load_mechanism(run_dir: str | Path, trial: int = 0):
    """Rebuild the per-submission mechanism trial ``trial`` of a run folder was trained with: the
    registered name, parameters and fingerprint stored by :func:`save_run` (third-party mechanisms must
    be registered in this process first). Raises :class:`pgc.mechanisms.MechanismUnavailableError`
    (a ``ValueError``) with a one-line reason when it cannot; runs older than the record fall back to
    the trial's config."""
    _, trials = load_run(run_dir)
    if not 0 <= trial < len(trials):
        raise UserError(f"{run_dir} has {len(trials)} trial(s); no trial {trial}")
    return trials[trial].mechanism()


def load_run(run_dir: str | Path) -> tuple[dict, list[TrialFiles]]:
    run = Path(run_dir)
    path = run / SUMMARY_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run} is not a pgc run folder (no {SUMMARY_FILE})")
    try:
        summary = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is corrupted: {exc}") from None
    if not isinstance(summary, dict):
        raise UserError(f"{path} is corrupted: not a JSON object")
    if summary.get("format") != FORMAT:
        raise UserError(f"{path} has format {summary.get('format')!r}, expected {FORMAT!r}")
    trials = summary.get("trials")
    if not isinstance(trials, list) or not trials:
        raise UserError(f"{path} lists no trials")
    for t in trials:
        name = t.get("dir") if isinstance(t, dict) else None
        if (
            not isinstance(name, str)
            or not name
            or name in (".", "..")
            or "/" in name
            or "\\" in name
            or not isinstance(t.get("config"), dict)
        ):
            raise UserError(f"{path} has a malformed trial entry: {str(t)[:80]}")
    return summary, [TrialFiles(run / t["dir"], t) for t in trials]
