"""The transcript: every submission as the aggregator (or a colluding agent) sees it, kept apart from
the ground truth, which only an evaluator may read.

Aggregator view (``transcript.npz``), one row per submission in arrival order:

* ``agent``, ``round`` — who submitted (agent index in start order) and which of its T rounds;
* ``worker`` — the worker slot (0..W−1) that ran the episode; −1 when the shuffler (``order``
  protection) unlinks submissions from worker identity;
* ``model_version`` — the θ version the agent copied when its episode began (stale if updates
  happened meanwhile); ``theta_versions``/``thetas`` hold θ for every version any agent used, plus
  the final one, exactly (float64);
* ``gradient`` — the noisy gradient g̃ (float32: the aggregator's θ update used the float64 value);
* ``score`` — the reported score ζ (episode length). NOT protected by the mechanism, unless the
  run protects it (``score``: then a float, clip(ζ, 0, cap) + Lap(cap/ε_score));
* ``start_tick``, ``arrival_tick`` — environment-step clock (since the trial began) when the
  episode started and when the submission arrived. Timing, like the score, is a side channel
  (under the fixed schedule, ``timing``, arrival − start is always the episode cap).
* ``protection`` (only in runs with mitigations; stored as the JSON array ``protection_json``) —
  which channels are protected and the total claim: ε = ε_gradient + ε_score per agent.

Ground truth (``ground_truth.npz``, evaluation-only): ``psi`` (the agent's gravity), ``terminated``
(pole fell vs cut by the cap), ``nonfinite`` (the clean gradient had a NaN/inf, replaced by zeros)
and, when the score is privatized, ``true_score`` (the true ζ).
Attackers and auditors must never read it except to score themselves.

Files are written atomically and read with ``allow_pickle=False``.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from pgc.files import atomic_path

from .model import DIMS

TRANSCRIPT_FILE = "transcript.npz"
GROUND_TRUTH_FILE = "ground_truth.npz"
MAX_FILE_BYTES = 64 * 2**30


def atomic_savez(path: Path, **arrays: np.ndarray) -> None:
    with atomic_path(path, suffix=".npz") as tmp:  # np.savez appends .npz to a name without it
        np.savez_compressed(tmp, **arrays)


@dataclass
class Transcript:
    agent: np.ndarray
    round: np.ndarray
    worker: np.ndarray
    model_version: np.ndarray
    gradient: np.ndarray
    score: np.ndarray
    start_tick: np.ndarray
    arrival_tick: np.ndarray
    theta_versions: np.ndarray
    thetas: np.ndarray
    protection: dict | None = None  # mitigations and the total claim (None: none protected)

    def __post_init__(self) -> None:
        n = len(self.score)
        for f in fields(self):
            arr = getattr(self, f.name)
            if f.name in ("theta_versions", "thetas", "protection"):
                continue
            if len(arr) != n:
                raise UserError(f"transcript field {f.name} has {len(arr)} rows, expected {n}")
        if self.gradient.ndim != 2 or self.gradient.shape[1] not in DIMS:
            raise UserError(f"transcript gradients must be (n, d) with d in {DIMS} (131: a model with biases)")
        d = self.gradient.shape[1]
        if self.thetas.shape != (len(self.theta_versions), d):
            raise UserError(f"transcript thetas must be (versions, {d}), as wide as its gradients")
        missing = np.setdiff1d(np.unique(self.model_version), self.theta_versions)
        if missing.size:
            raise UserError(f"transcript lacks θ for model versions {missing[:5].tolist()}")

    def __len__(self) -> int:
        return len(self.score)

    def theta_at(self, version: int | np.ndarray) -> np.ndarray:
        """θ for one version (d,) or an array of versions (n, d)."""
        idx = np.searchsorted(self.theta_versions, version)
        return self.thetas[idx]

    def submission_thetas(self) -> np.ndarray:
        """θ' each submission was computed at, (n, d)."""
        return self.theta_at(self.model_version)

    @property
    def protected(self) -> tuple[str, ...]:
        return tuple(self.protection["protect"]) if self.protection else ()

    def save(self, directory: Path) -> Path:
        path = Path(directory) / TRANSCRIPT_FILE
        arrays = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "protection"}
        if self.protection is not None:
            arrays["protection_json"] = np.array(json.dumps(self.protection))
        atomic_savez(path, **arrays)
        return path

    @classmethod
    def load(cls, directory: Path) -> Transcript:
        """Read ``transcript.npz``; a missing, truncated or malformed file, or non-finite gradients or θ
        (NaN, or float32 values that overflowed to ±inf), raise ``ValueError`` naming the file."""
        path = Path(directory) / TRANSCRIPT_FILE
        arrays = _load_npz(path, [f.name for f in fields(cls) if f.name != "protection"], optional=["protection_json"])
        raw = arrays.pop("protection_json", None)
        for name in ("gradient", "thetas"):
            arr = arrays[name]
            if not np.issubdtype(arr.dtype, np.floating):
                raise UserError(f"{path}: {name} must hold floats, got {arr.dtype}")
            bad = ~np.isfinite(arr)
            if bad.any():
                rows = np.unique(np.nonzero(bad)[0])
                raise UserError(
                    f"{path}: {name} holds {int(bad.sum())} non-finite value(s) (NaN or ±inf) in "
                    f"{rows.size} row(s), first row {int(rows[0])}; the transcript is corrupted or "
                    "was written by a broken mechanism"
                )
        score = arrays["score"]  # integers, or floats when the score is privatized
        if not (np.issubdtype(score.dtype, np.integer) or np.issubdtype(score.dtype, np.floating)) or not np.all(
            np.isfinite(score)
        ):
            raise UserError(f"{path}: score must hold finite numbers")
        for name in ("agent", "round", "worker", "model_version", "start_tick", "arrival_tick", "theta_versions"):
            if not np.issubdtype(arrays[name].dtype, np.integer):
                raise UserError(f"{path}: {name} must hold integers, got {arrays[name].dtype}")
        try:
            return cls(**arrays, protection=None if raw is None else json.loads(str(raw)))
        except (ValueError, IndexError, TypeError) as exc:
            raise UserError(f"{path} is not a valid transcript: {exc}") from None


@dataclass
class GroundTruth:
    """Evaluation-only: what the aggregator must not see."""

    psi: np.ndarray
    terminated: np.ndarray
    nonfinite: np.ndarray
    true_score: np.ndarray | None = None  # the true ζ when the transcript's score is privatized

    def save(self, directory: Path) -> Path:
        path = Path(directory) / GROUND_TRUTH_FILE
        atomic_savez(path, **{f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None})
        return path

    @classmethod
    def load(cls, directory: Path) -> GroundTruth:
        return cls(
            **_load_npz(
                Path(directory) / GROUND_TRUTH_FILE, ["psi", "terminated", "nonfinite"], optional=["true_score"]
            )
        )


CANARY_FILE = "canaries.npz"


@dataclass
class CanaryRecord:
    """What the aggregator knows of its canary agents (not their coins: those are in the ground truth).

    ``positions``: the canaries' submission indices in the transcript; ``index``: each one's canary
    number k; ``theta``: the crafted model sent to them (None for live canaries, which played the θ
    version the transcript records); ``setup``: :meth:`pgc.a3c.config.TrainConfig.canary_setup`."""

    positions: np.ndarray
    index: np.ndarray
    theta: np.ndarray | None
    setup: dict

    def save(self, directory: Path) -> Path:
        path = Path(directory) / CANARY_FILE
        arrays = {"positions": self.positions, "index": self.index, "setup": np.asarray(json.dumps(self.setup))}
        if self.theta is not None:
            arrays["theta"] = self.theta
        atomic_savez(path, **arrays)
        return path

    @classmethod
    def load(cls, directory: Path) -> CanaryRecord:
        data = _load_npz(Path(directory) / CANARY_FILE, ["positions", "index", "setup"], optional=["theta"])
        try:
            setup = json.loads(str(data["setup"]))
        except json.JSONDecodeError as exc:
            raise UserError(f"{Path(directory) / CANARY_FILE} is corrupted: {exc}") from None
        if not isinstance(setup, dict):
            raise UserError(f"{Path(directory) / CANARY_FILE} is corrupted: setup is not an object")
        return cls(
            positions=data["positions"].astype(np.int64),
            index=data["index"].astype(np.int64),
            theta=data.get("theta"),
            setup=setup,
        )


def _load_npz(path: Path, names: list[str], optional: list[str] = ()) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise UserError(f"{path} is larger than {MAX_FILE_BYTES / 2**30:.0f} GiB; not a transcript pgc wrote")
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [n for n in names if n not in data.files]
            if missing:
                raise UserError(f"{path} lacks arrays {missing}")
            out = {}
            for n in list(names) + [o for o in optional if o in data.files]:
                arr = data[n]
                if not isinstance(arr, np.ndarray) or arr.dtype.hasobject:
                    raise UserError(f"array {n} is not a plain numeric array")
                out[n] = arr
            return out
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        raise UserError(
            f"{path} is not a valid transcript file (truncated or corrupted?): "
            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None


def transcript_releases(transcript, positions: np.ndarray) -> dict[str, np.ndarray]:
    """The canaries' submissions as the aggregator saw them, in the channels of
    :class:`pgc.a3c.system.PGCA3CSystem` (``all`` = score, arrival − start, gradient, as float32)."""
    grad = np.asarray(transcript.gradient[positions], dtype=np.float32)
    score = np.asarray(transcript.score[positions], dtype=np.float64)[:, None]
    arrival = np.asarray(transcript.arrival_tick[positions] - transcript.start_tick[positions], np.float64)[:, None]
    return {
        "gradient": grad.astype(np.float64),
        "score": score,
        "all": np.concatenate([score, arrival, grad], axis=1).astype(np.float32).astype(np.float64),
    }
