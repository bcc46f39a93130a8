"""A catalogue algorithm as a System (:class:`pgc.contracts.System`): the secret is the algorithm's input (a tuple
of ``dimensions`` numbers in its domain), one release one run of the algorithm on the channel ``output``, as
an (n, width) float64 array with NaN where the algorithm outputs ⊥ or stops early. ``canaries()`` are DP-Sniper's
neighbouring input pairs (:func:`pgc.catalogue.patterns.input_pairs`), named by their pattern."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

from .patterns import input_pairs
from .registry import BY_NAME, CATALOGUE, Algorithm

CHANNEL = "output"


class CatalogueSystem:
    channels = (CHANNEL,)

    def __init__(self, algorithm: Algorithm):
        self.algorithm = algorithm
        self.name = algorithm.name
        self.broken = algorithm.broken
        self.claim = PrivacyClaim(algorithm.claimed_epsilon, 0.0, (CHANNEL,))
        d = algorithm.domain
        scope = "every entry may change by at most 1" if d.component_wise else "one entry changes by at most 1"
        self.relation = f"{d.dimensions} {d.base_type} input(s) in [{d.low:g}, {d.high:g}]; {scope}"

    def secret(self, secret: Any) -> np.ndarray:
        """The input as a 1-d array; a clear error when it has the wrong length, type or range."""
        d = self.algorithm.domain
        values = list(secret) if isinstance(secret, (list, tuple, np.ndarray)) else [secret]
        if len(values) != d.dimensions or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values
        ):
            raise UserError(f"{self.name}: a secret is {d.dimensions} number(s), got {secret!r}")
        array = np.asarray(values, dtype=np.float64)
        if not np.all((array >= d.low) & (array <= d.high)) or (
            d.base_type == "int" and not np.all(array == np.round(array))
        ):
            raise UserError(
                f"{self.name}: a secret's entries are {d.base_type}s in [{d.low:g}, {d.high:g}], got {secret!r}"
            )
        return array.astype(np.int64) if d.base_type == "int" else array

    def release(self, secret: Any, n: int, rng: np.random.Generator, *, broadcast: Any = None) -> dict:
        out = self.algorithm.run(self.secret(secret), int(n), rng)
        return {CHANNEL: np.asarray(out, dtype=np.float64).reshape(int(n), self.algorithm.width)}

    def canaries(self) -> dict[str, tuple[tuple, tuple]]:
        return input_pairs(self.algorithm.domain)

    def describe_secret(self, secret: Any) -> str:
        return "[" + ", ".join(f"{v:g}" for v in np.asarray(secret, dtype=np.float64).ravel()) + "]"

    def to_dpsniper(self, outputs: np.ndarray) -> np.ndarray:
        """Outputs in DP-Sniper's own format (its sentinel values where ours hold NaN)."""
        return self.algorithm.encode(np.asarray(outputs, dtype=np.float64))

    @property
    def dpsniper_flags(self) -> tuple[float, ...]:
        """The special values DP-Sniper's feature transform flags for this algorithm."""
        return self.algorithm.flags


def catalogue_system(name: str) -> CatalogueSystem:
    """The System of one catalogue algorithm by name; a clear error naming the catalogue otherwise."""
    if name not in BY_NAME:
        raise UserError(f"unknown catalogue algorithm {name!r}; the catalogue: {', '.join(a.name for a in CATALOGUE)}")
    return CatalogueSystem(BY_NAME[name])
