"""A training run on disk (``pgc train --out DIR``), written atomically, read without executing code.

    DIR/summary.json            settings, per-trial FST / final μ / updates, versions, wall time
    DIR/trial_000/checkpoint.pt final θ (torch state_dict, weights only)
    DIR/trial_000/initial.pt    initial θ
    DIR/trial_000/scores.npy    ζ per submission (arrival order)
    DIR/trial_000/transcript.npz    aggregator view (if recorded)
    DIR/trial_000/ground_truth.npz  evaluation-only ψ per submission (if recorded)

The whole folder is built under a temporary name beside DIR and renamed at the end.
"""

from __future__ import annotations

import json
import math
import platform
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .model import load_checkpoint, save_checkpoint
from .transcript import GroundTruth, Transcript

SUMMARY_FILE = "summary.json"
FORMAT = "pgc-run/1"


def versions() -> dict[str, str]:
    import numba
    import torch

    from . import __version__

    return {"pgc-audit": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "numba": numba.__version__}


def _json_safe(x):
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if isinstance(x, np.generic):
        return _json_safe(x.item())
    return x


@contextmanager
def replace_directory_atomically(target: str | Path) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it replaces ``target`` (rename),
    on any error it is deleted, so readers never see a half-written folder."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", suffix=".partial", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            shutil.rmtree(target)
        tmp.replace(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def save_run(results, out_dir: str | Path, *, wall_time: float, extra: dict | None = None,
             overwrite: bool = False) -> Path:
    """Write a list of :class:`pgc.trainer.TrainResult` as a run folder (atomically)."""
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not overwrite)):
        raise FileExistsError(f"{out} exists and is not empty (use --force to replace it)")
    with replace_directory_atomically(out) as tmp:
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
            trials.append({"dir": tdir.name, "config": r.config.to_dict(), **r.summary(),
                           "transcript": r.transcript is not None})
        summary = {"format": FORMAT, "wall_time_s": wall_time,
                   "agent_steps": int(sum(r.agent_steps for r in results)),
                   "versions": versions(), "trials": trials, **(extra or {})}
        (tmp / SUMMARY_FILE).write_text(json.dumps(_json_safe(summary), indent=2) + "\n")
    return out


@dataclass(frozen=True)
class TrialFiles:
    directory: Path
    summary: dict

    @property
    def config(self):
        from .trainer import TrainConfig

        return TrainConfig.from_dict(self.summary["config"])

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


def load_run(run_dir: str | Path) -> tuple[dict, list[TrialFiles]]:
    run = Path(run_dir)
    path = run / SUMMARY_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run} is not a pgc run folder (no {SUMMARY_FILE})")
    try:
        summary = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is corrupted: {exc}") from None
    if summary.get("format") != FORMAT:
        raise ValueError(f"{path} has format {summary.get('format')!r}, expected {FORMAT!r}")
    return summary, [TrialFiles(run / t["dir"], t) for t in summary["trials"]]
