"""What every frequency oracle here offers, reference or library: one user's value in, one report out.

An oracle has a domain size ``k`` (values 0..k−1), the ε it is run at, and

* ``release(values, rng)`` — one report per value, as an (n, width) float array laid out losslessly (integers
  wider than 24 bits, the libraries' 64-bit hash seeds, as 16-bit limbs: :func:`integer_limbs`);
* ``support(reports, candidates)`` — how strongly each report points at each candidate value (n, len(candidates)):
  the protocol's own decoding (the aggregator's support set: the reported value, the set bits, the values
  that hash to the report, the noisy count above the threshold ...); the auditor may select statistics built
  on it, and LDP-Auditor's guess is its argmax;
* ``exact_epsilon(v, v_prime)`` — the exact ε of the release for that pair: the largest log ratio of the two
  report distributions, from the protocol's probabilities (∞ where one report has probability 0 under one
  value only);
* ``claimed_epsilon`` and ``claim_reading`` — the ε promised per report and the line that says where it comes from;
* ``parameters()`` — everything that defines the protocol, for the result file.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from pgc.errors import UserError

LIMB_BITS = 16
LIMBS_PER_INT64 = 4


def checked_domain_and_epsilon(k, epsilon) -> tuple[int, float]:
    """``k`` an integer ≥ 2 and ``epsilon`` a finite number > 0, else a ValueError naming the bad one."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise UserError(f"the domain size k must be an integer >= 2, got {k!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not math.isfinite(epsilon) or epsilon <= 0:
        raise UserError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    return int(k), float(epsilon)


def checked_values(values, k: int) -> np.ndarray:
    """The users' values as an int64 array, each in range(k); a ValueError otherwise."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
        raise UserError(f"values must be integers in 0..{k - 1}")
    arr = arr.astype(np.int64).ravel()
    if arr.size and (arr.min() < 0 or arr.max() >= k):
        raise UserError(f"values must lie in 0..{k - 1}, got {arr.min()}..{arr.max()}")
    return arr


def integer_limbs(values: np.ndarray, limbs: int = LIMBS_PER_INT64) -> np.ndarray:
    """Non-negative integers (< 2^(16·limbs)) as ``limbs`` float columns of 16 bits each, least significant
    first: exact in float64 and under the auditor's 30-significant-bit rounding."""
    v = np.asarray(values, dtype=np.uint64)
    mask = np.uint64((1 << LIMB_BITS) - 1)
    return np.stack([((v >> np.uint64(LIMB_BITS * i)) & mask).astype(np.float64) for i in range(limbs)], axis=1)


def integer_from_limbs(columns: np.ndarray) -> np.ndarray:
    """The integers :func:`integer_limbs` laid out, as uint64."""
    cols = np.asarray(columns, dtype=np.float64).astype(np.uint64)
    out = np.zeros(cols.shape[0], dtype=np.uint64)
    for i in range(cols.shape[1]):
        out |= cols[:, i] << np.uint64(LIMB_BITS * i)
    return out


def log_ratio(a: float, b: float) -> float:
    """ln(a/b) for probabilities, ∞ where b = 0 < a, 0 where both are 0."""
    if b <= 0.0:
        return math.inf if a > 0.0 else 0.0
    return math.log(a / b) if a > 0.0 else -math.inf


class Oracle:
    """Shared members; a protocol sets ``name`` and ``width`` and implements ``release``, ``support`` and
    ``exact_epsilon``."""

    name = "oracle"
    source = "reference"  # the implementation: "reference" (ours) or a library's name
    version = None  # a library's version

    def __init__(self, k: int, epsilon: float):
        self.k, self.epsilon = checked_domain_and_epsilon(k, epsilon)

    @property
    def claimed_epsilon(self) -> float:
        return self.epsilon

    @property
    def claim_reading(self) -> str:
        return f"epsilon={self.epsilon:g} → claim ε = {self.epsilon:g} per report (the protocol is run at ε)"

    def parameters(self) -> dict:
        return {"k": self.k, "epsilon": self.epsilon}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def support(self, reports: np.ndarray, candidates) -> np.ndarray:
        raise NotImplementedError

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        raise NotImplementedError

    def pair(self) -> tuple[int, int]:
        """The audited pair of values: the first and the last of the domain (LDP-Auditor's 0 vs k−1)."""
        return 0, self.k - 1

    def describe(self) -> str:
        extra = ", ".join(
            f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
            for key, value in self.parameters().items()
            if key not in ("k", "epsilon")
        )
        return f"{self.name}(k={self.k}, ε={self.epsilon:g}{', ' + extra if extra else ''})"
