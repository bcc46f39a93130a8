"""Reading result files for a report: a tolerant reader keyed on the top-level ``"kind"``.

Accepted inputs (``pgc report RUN_OR_RESULT...``):

* a training run folder (``pgc train --out DIR``) or its ``summary.json`` — ``"format": "pgc-run/1"``;
* a JSON result whose top-level ``"kind"`` is one of ``replicate``, ``audit``, ``attack``, ``tune``,
  ``mitigations-utility`` (``scripts/mitigations_utility.py``: the utility cost of the channel
  mitigations) (``pipeline`` manifests list further inputs and are expanded);
* a folder holding exactly one such JSON file (``result.json``, ``<kind>.json`` or ``summary.json``).

The reader is strict about what it can check (the file exists, parses, has a known kind) and lenient
about everything else: sections of a result that a report does not understand are ignored, so a newer
auditor or attacker with extra fields still renders. Errors raise :class:`ReportInputError` with a
message that names the file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("train", "replicate", "audit", "attack", "tune", "mitigations-utility")
RUN_FORMAT = "pgc-run/1"
_FOLDER_CANDIDATES = ("result.json", "audit.json", "attack.json", "replicate.json", "tune.json", "utility.json",
                      "summary.json")


class ReportInputError(ValueError):
    """A report input that cannot be used (missing, corrupted, or of an unknown kind)."""


@dataclass
class Source:
    """One input: its kind, where it came from, the parsed JSON and, for runs, the run folder."""

    kind: str
    path: Path
    data: dict
    run_dir: Path | None = None
    label: str = ""
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.label:
            self.label = self.path.parent.name if self.path.name in ("summary.json", "result.json") else self.path.stem


def number(value: Any) -> float | None:
    """A JSON number or the strings "inf"/"-inf"/"nan" (as written by pgc) as float; None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "+inf", "infinity", "∞"):
            return math.inf
        if text in ("-inf", "-infinity"):
            return -math.inf
        if text == "nan":
            return math.nan
        try:
            return float(text)
        except ValueError:
            return None
    return None


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


def _classify(path: Path, data: Any) -> str:
    if not isinstance(data, dict):
        raise ReportInputError(f"{path} holds a JSON {type(data).__name__}, not a result object")
    if data.get("format") == RUN_FORMAT:
        return "train"
    kind = data.get("kind")
    if kind is None:
        fmt = data.get("format")
        if isinstance(fmt, str) and fmt.split("/")[0] in KINDS + ("pipeline",):
            kind = fmt.split("/")[0]
    if kind == "pipeline":
        return "pipeline"
    if kind not in KINDS:
        known = ", ".join(KINDS)
        found = f"kind {kind!r}" if kind is not None else "no 'kind' field"
        raise ReportInputError(f"{path} has {found}; a report reads results of kind {known} "
                               f"(or a pgc train run folder with format {RUN_FORMAT!r})")
    return kind


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
            raise ReportInputError(f"{path} is a folder without a result file "
                                   f"(expected a pgc run folder with summary.json, or one of {', '.join(_FOLDER_CANDIDATES)})")
        if run_summary.is_file():
            candidates = [run_summary]
        elif len(candidates) > 1:
            raise ReportInputError(f"{path} holds several result files ({', '.join(c.name for c in candidates)}); "
                                   "name the file to report on")
        file = candidates[0]
    else:
        file = path
    data = _read_json(file)
    kind = _classify(file, data)
    if kind == "pipeline":
        out: list[Source] = []
        items = data.get("inputs", [])
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, str):
                raise ReportInputError(f"{file} lists an input that is not a path: {item!r}")
            item_path = Path(item)
            if not item_path.is_absolute():
                item_path = file.parent / item_path
            out.extend(load_source(item_path, _depth + 1))
        if not out:
            raise ReportInputError(f"{file} is a pipeline manifest listing no inputs")
        return out
    if kind == "train":
        if not isinstance(data.get("trials"), list) or not data["trials"]:
            raise ReportInputError(f"{file} is a run summary without trials")
        return [Source("train", file, data, run_dir=file.parent, label=file.parent.name)]
    return [Source(kind, file, data)]


def load_sources(specs) -> list[Source]:
    """Load every input (in order); duplicates (same resolved file) are kept once."""
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
    return out


def walk(obj: Any, path: tuple = ()):
    """Yield (path, dict) for every JSON object nested in ``obj`` (depth first, in order)."""
    if isinstance(obj, dict):
        yield path, obj
        for key, value in obj.items():
            yield from walk(value, path + (str(key),))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from walk(value, path + (i,))
