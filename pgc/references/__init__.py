"""Committed reference results that ship with the package, read with :mod:`importlib.resources`.

The files under this package are byte-for-byte copies of the repository's ``results/`` files of the same
relative path (``scripts/sync_references.py`` copies them; ``tests/pgc/references/test_references.py`` checks they
agree): the adversarial-aggregator evidence ``pgc pipeline`` puts in its report beside its own audit, the crafted
models those results were certified at, and the crafted θ the one-run benchmark starts from.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

# the main job's report: committed adversarial-aggregator evidence beside the run's own fresh audit
ADVERSARIAL = (
    "audit/adversarial/curve.json",
    "audit/adversarial/laplace-eps1.json",
    "audit/adversarial/laplace-eps4.json",
    "audit/adversarial/prs-eps1.json",
    "attack/active/laplace-eps1-5-10-15.json",
    "attack/active/paper-psi-score.json",
)
# the same evidence for protected configurations (pgc pipeline --protect)
PROTECTED_ADVERSARIAL = ("mitigations/adversarial-laplace-eps1.json", "mitigations/adversarial-prs-eps1.json")
# the crafted models the results above were certified at (each beside its result), and benchmark inputs
MODELS = (
    "audit/adversarial/laplace-eps1-theta-5-15-gradient.pt",
    "audit/adversarial/laplace-eps1-theta-5-15-score.pt",
    "audit/adversarial/laplace-eps1-theta-9.7-9.9-gradient.pt",
    "audit/adversarial/laplace-eps1-theta-9.7-9.9-score.pt",
    "audit/adversarial/laplace-eps4-theta-5-15-gradient.pt",
    "audit/adversarial/laplace-eps4-theta-5-15-score.pt",
    "audit/adversarial/laplace-eps4-theta-9.7-9.9-gradient.pt",
    "audit/adversarial/laplace-eps4-theta-9.7-9.9-score.pt",
    "audit/adversarial/prs-eps1-theta-5-15-gradient.pt",
    "audit/adversarial/prs-eps1-theta-5-15-score.pt",
    "attack/active/laplace-eps1-5-10-15-crafted-theta.pt",
    "attack/active/paper-psi-score-crafted-theta.pt",
    "mitigations/adversarial-laplace-eps1-theta-5-15-gradient.pt",
    "mitigations/adversarial-laplace-eps1-theta-5-15-score.pt",
    "mitigations/adversarial-prs-eps1-theta-5-15-gradient.pt",
    "mitigations/adversarial-prs-eps1-theta-5-15-score.pt",
    "audit/one-run/crafted_theta_5_15.npy",
)
SHIPPED = ADVERSARIAL + PROTECTED_ADVERSARIAL + MODELS


class ReferenceMissingError(FileNotFoundError):
    """A reference file that this installation does not carry."""


def root() -> Path:
    """The folder the shipped references lie in (a regular installation unpacks package data to disk)."""
    return Path(str(resources.files(__name__)))


def reference_path(relative: str) -> Path:
    """The shipped copy of ``results/<relative>``."""
    path = root() / relative
    if relative not in SHIPPED or not path.is_file():
        raise ReferenceMissingError(f"no shipped reference results/{relative} in this installation of pgc-audit")
    return path


def is_reference(path: Path) -> bool:
    """True for a file inside the shipped references."""
    try:
        return root().resolve() in Path(path).resolve().parents
    except OSError:
        return False
