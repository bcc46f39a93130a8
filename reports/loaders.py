"""Reading result files for a report: every file goes through its schema (:mod:`pgc.schemas`).

Accepted inputs (``pgc report RUN_OR_RESULT...``):

* a training run folder (``pgc train --out DIR``) or its ``summary.json`` (kind ``train``);
* a JSON result of a kind in :data:`KINDS` (``pipeline`` manifests list further inputs and are expanded);
* a folder holding exactly one such JSON file (``result.json``, ``<kind>.json`` or ``summary.json``).

A file that does not parse, declares an unknown kind or a ``format_version`` this code does not read,
or does not match its schema raises :class:`ReportInputError` with a one-line message naming the file,
the kind and the version. Keys a schema does not name are kept and ignored, so a writer with extra
fields still renders.

An input inside this checkout's ``results/`` folder is a committed reference result: the report shows
it in its own section, apart from the run's own verdict and warnings (unless every input is one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pgc.schemas as schemas
from pgc.errors import UserError

KINDS = (
    "train",
    "replicate",
    *(kind.KIND for kind in schemas.AUDIT_KINDS),
    "system-audit",
    "attack",
    "tune",
    "mitigations-utility",
    "bandit-regret",
    "bandit-attack",
    "thesis-membership",
    "thesis-map-recovery",
    "ldp-bench",
)
RUN_FORMAT = schemas.RUN_FORMAT
COMMITTED_RESULTS = Path(__file__).resolve().parents[1] / "results"
_FOLDER_CANDIDATES = (
    "result.json",
    "audit.json",
    "attack.json",
    "replicate.json",
    "tune.json",
    "utility.json",
    "summary.json",
)


class ReportInputError(UserError):
    """A report input that cannot be used (missing, corrupted, or of an unknown kind)."""


@dataclass
class Source:
    """One input: its kind, where it came from, its typed result and, for runs, the run folder.
    ``reference``: a committed reference result (under ``results/``), not the run's own."""

    kind: str
    path: Path
    result: schemas.Result
    run_dir: Path | None = None
    label: str = ""
    reference: bool = False
    shown_path: str = ""  # where the report says the input lies (default: ``path``)

    def __post_init__(self) -> None:
        self.shown_path = self.shown_path or str(self.path)
        if not self.label:
            self.label = self.path.parent.name if self.path.name in ("summary.json", "result.json") else self.path.stem


def is_committed_reference(path: Path) -> bool:
    """True for a committed reference: a file inside the checkout's ``results/`` folder or one of the
    references the package ships (:mod:`pgc.references`)."""
    from pgc.references import is_reference

    try:
        return COMMITTED_RESULTS in path.resolve().parents or is_reference(path)
    except OSError:
        return False


MAX_INPUT_BYTES = 256 * 2**20


def _read_json(path: Path) -> Any:
    import os
    import stat

    try:  # non-blocking open, then fstat: a FIFO or a device given as input is refused, never read
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ReportInputError(f"{path} is not a regular file")
            if st.st_size > MAX_INPUT_BYTES:
                raise ReportInputError(f"{path} is larger than {MAX_INPUT_BYTES // 2**20} MiB; not a pgc result")
            raw = fh.read(MAX_INPUT_BYTES + 1)
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportInputError(f"{path} is not a UTF-8 text file") from None
    except OSError as exc:
        raise ReportInputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path} is not valid JSON (corrupted or truncated?): {exc}") from None


def _typed(path: Path, data: Any) -> schemas.Result:
    """The schema-checked result of one file; ReportInputError (one line) when it does not load."""
    try:
        result = schemas.load(data, where=str(path))
    except schemas.SchemaError as exc:
        raise ReportInputError(str(exc)) from None
    if result.KIND not in KINDS + ("pipeline",):
        raise ReportInputError(
            f"{path}: kind {result.KIND!r} (format_version {result.format_version}) is not "
            f"read by a report; a report reads {', '.join(KINDS)} (or a pgc train run folder)"
        )
    return result


def load_source(spec: str | Path, _depth: int = 0) -> list[Source]:
    """Load one command-line input; a pipeline manifest expands to the sources it lists."""
    path = Path(spec)
    if _depth > 8:
        raise ReportInputError(f"{path}: pipeline manifests nested more than 8 deep (a manifest listing itself?)")
    if not path.exists():
        raise ReportInputError(f"{path} does not exist")
    if not path.is_dir() and not path.is_file():
        raise ReportInputError(f"{path} is not a regular file or a folder")
    if path.is_dir():
        run_summary = path / "summary.json"
        candidates = [path / name for name in _FOLDER_CANDIDATES if (path / name).is_file()]
        if not candidates:
            raise ReportInputError(
                f"{path} is a folder without a result file "
                "(expected a pgc run folder with summary.json, or one of "
                f"{', '.join(_FOLDER_CANDIDATES)})"
            )
        if run_summary.is_file():
            candidates = [run_summary]
        elif len(candidates) > 1:
            raise ReportInputError(
                f"{path} holds several result files ({', '.join(c.name for c in candidates)}); "
                "name the file to report on"
            )
        file = candidates[0]
    else:
        file = path
    data = _read_json(file)
    result = _typed(file, data)
    if isinstance(result, schemas.Pipeline):
        out: list[Source] = []
        for item in result.inputs:
            item_path = Path(item)
            if not item_path.is_absolute():
                item_path = file.parent / item_path
            out.extend(load_source(item_path, _depth + 1))
        if not out:
            raise ReportInputError(f"{file} is a pipeline manifest listing no inputs")
        return out
    reference = is_committed_reference(file)
    if isinstance(result, schemas.TrainRun):
        return [Source("train", file, result, run_dir=file.parent, label=file.parent.name, reference=reference)]
    return [Source(result.KIND, file, result, reference=reference)]


def load_sources(specs) -> list[Source]:
    """Load every input (in order); duplicates (same resolved file) are kept once. When every input is a
    committed result, they are what the report is about: none is marked as a reference."""
    specs = list(specs)
    if not specs:
        raise ReportInputError("no inputs given")
    seen: set[Path] = set()
    out: list[Source] = []
    for spec in specs:
        for src in load_source(spec):
            key = src.path.resolve()
            if key not in seen:
                seen.add(key)
                out.append(src)
    if all(src.reference for src in out):
        for src in out:
            src.reference = False
    return out
