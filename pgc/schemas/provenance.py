"""Where a result came from: pgc-audit's version, the versions of the libraries the audit ran (and audited), and a
hash of each file of the user's own code the command named (their system, client or filter module).

Pure Python: imports nothing from the project beyond :mod:`pgc.schemas.base`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Record


@dataclass(frozen=True, kw_only=True)
class LibraryVersion(Record):
    name: str  # the distribution's name on PyPI
    version: str


@dataclass(frozen=True, kw_only=True)
class SourceFile(Record):
    """A file of the user's code: the SPEC that named it, its path as the audit read it, and its SHA-256."""

    spec: str
    path: str
    sha256: str


@dataclass(frozen=True, kw_only=True)
class Provenance(Record):
    pgc_audit: str  # pgc-audit's version
    python: str
    libraries: list[LibraryVersion]  # the scientific stack and every audited library the command imported
    user_files: list[SourceFile]  # empty when the command named no user code (a registered system or mechanism)


@dataclass(frozen=True, kw_only=True)
class Invocation(Record):
    """How a result was made: the command line, what it cost, and where it came from (each None only in files
    written before it was recorded). A flat part: its keys sit at the top of the result."""

    command: str | None = None  # the command line that wrote the result
    argv: list[str] | None = None  # its arguments (``pgc audit recertify`` re-runs them)
    provenance: Provenance | None = None
    wall_time_s: float | None = None
    estimated_seconds: float | None = None  # the wall time the command estimated before it started
