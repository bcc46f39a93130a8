"""The provenance a result records (:class:`pgc.schemas.provenance.Provenance`): read once, when the command has
run, from the installed distributions, the modules the process imported and the user's files it loaded."""

from __future__ import annotations

import hashlib
import platform
import sys
from importlib import metadata

from pgc.schemas.provenance import LibraryVersion, Provenance, SourceFile

# (module, distribution): the stack the auditor runs on, then the libraries a System may come from
LIBRARIES = (
    ("numpy", "numpy"),
    ("scipy", "scipy"),
    ("statsmodels", "statsmodels"),
    ("sklearn", "scikit-learn"),
    ("dp_accounting", "dp-accounting"),
    ("torch", "torch"),
    ("opacus", "opacus"),
    ("flwr", "flwr"),
    ("nvflare", "nvflare"),
    ("multi_freq_ldpy", "multi-freq-ldpy"),
    ("pure_ldp", "pure-ldp"),
    ("diffprivlib", "diffprivlib"),
)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def current_provenance() -> Provenance:
    """pgc-audit's version, the versions of the libraries of :data:`LIBRARIES` this process imported, and the
    SHA-256 of every file of the user's code a SPEC named (:func:`pgc.usercode.user_module_files`)."""
    from pgc.usercode import user_module_files

    libraries = [
        LibraryVersion(name=dist, version=version)
        for module, dist in LIBRARIES
        if module in sys.modules and (version := _version(dist)) is not None
    ]
    files = [SourceFile(spec=spec, path=path, sha256=file_sha256(path)) for path, spec in user_module_files().items()]
    return Provenance(
        pgc_audit=_version("pgc-audit") or "unknown",
        python=platform.python_version(),
        libraries=libraries,
        user_files=files,
    )
