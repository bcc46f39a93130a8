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
