"""What the library oracles share: their version, their seeded blocks of reports, their reference twin.

A library oracle calls the library's own client once per report (or, where the client is numba-compiled,
once per block from a compiled loop that calls the same compiled client), under the library's global
generators seeded per block from the audit's stream (:mod:`pgc.ldp.seeding`). Its ``release`` lays the
reports out as the library returns them, losslessly as float columns; its ``reference()`` is the reference
oracle of the same protocol and parameters (the one the tests hold it against: identical in distribution).
"""

from __future__ import annotations

from importlib import metadata

import numpy as np

from .oracle import Oracle, checked_values, integer_limbs
from .seeding import block_seeds, seeded_library_generators


def library_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        raise ImportError(
            f"{distribution} is not installed: pip install -e '.[ldp]' (scripts/setup.sh installs it)"
        ) from None


class LibraryOracle(Oracle):
    """A library's client as an oracle; subclasses implement ``client_block(values) -> (n, width)``."""

    source = "library"
    distribution = ""  # the package index name

    def __init__(self, k: int, epsilon: float):
        super().__init__(k, epsilon)
        self.version = library_version(self.distribution)

    def client_block(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def make_reference(self) -> Oracle:
        raise NotImplementedError

    def reference(self) -> Oracle:
        """The reference twin (built once)."""
        if getattr(self, "_reference", None) is None:
            self._reference = self.make_reference()
        return self._reference

    def support(self, reports, candidates):
        """The twin's decoding, where the library lays its reports out as the reference does."""
        return self.reference().support(reports, candidates)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        """The twin's exact ε, where the library implements the protocol's probabilities."""
        return self.reference().exact_epsilon(v, self.k - 1 if v_prime is None else v_prime)

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        out = np.empty((v.size, self.width))
        start = 0
        for size, seed in block_seeds(v.size, rng):
            with seeded_library_generators(seed):
                out[start : start + size] = self.client_block(v[start : start + size])
            start += size
        return out

    @property
    def batching(self) -> str:
        """How the reports are drawn: one Python call per report, or a compiled loop per block."""
        return "a Python call of the library's client per report"


def hashed_report(y: int, seed: int) -> np.ndarray:
    """A local-hashing report (y, 64-bit seed) as five float columns: y, then the seed's four 16-bit limbs."""
    return np.concatenate([[float(y)], integer_limbs(np.array([seed], dtype=np.uint64))[0]])


def hashed_reports(pairs) -> np.ndarray:
    """Many (y, seed) reports at once (:func:`hashed_report`)."""
    pairs = list(pairs)
    y = np.array([float(p[0]) for p in pairs])
    seeds = np.array([int(p[1]) for p in pairs], dtype=np.uint64)
    return np.concatenate([y[:, None], integer_limbs(seeds)], axis=1) if pairs else np.empty((0, 5))
