"""Two local frequency oracles as Systems, in the report formats deployments use: optimized unary encoding and
binary local hashing. The secret is the user's value v ∈ {0, …, k − 1}; the claim is ε-LDP on the report.

* :class:`RandomizedResponseSystem` — generalized randomized response (direct encoding; Wang et al. 2017,
  §4.1): the report is v with probability p = e^ε/(e^ε + k − 1), any other value with q = 1/(e^ε + k − 1);
  exactly ε-LDP (p/q = e^ε).
* :class:`UnaryEncodingSystem` — optimized unary encoding (Wang et al., USENIX Security 2017, §4.4): the report
  is k bits; bit v is 1 with probability p = 1/2, every other bit with probability q = 1/(e^ε + 1). Exactly
  ε-LDP: the worst ratio of two reports is p(1 − q)/((1 − p)q) = e^ε.
* :class:`HashedReportSystem` — binary local hashing (Bassily & Smith 2015; Wang et al. 2017, §4.3 with g = 2):
  each report draws a fresh 32-bit hash seed s, hashes v to h_s(v) ∈ {0, 1} and reports (y, s) where
  y = h_s(v) with probability e^ε'/(e^ε' + 1); true ε = ε'. The report is (y, s) exactly as a library returns it:
  a statistic that does not evaluate the hash sees y uniform under every v. ``decoder=True`` offers the auditor
  the hash-aware statistic [y = h_s(v)] (``audit_statistics``), chosen on the training split like any other.
  ``claimed_epsilon`` may differ from ``epsilon``: the honesty suite audits ε' = 8 claiming 1.

The hash is splitmix64 of (seed, value), vectorized; any fixed hash family serves, as long as the decoder uses
the same one.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix_bit(seeds: np.ndarray, values: np.ndarray) -> np.ndarray:
    """h_s(v) ∈ {0, 1}: the top bit of splitmix64(s ⊕ (v + 1)·golden), element-wise."""
    with np.errstate(over="ignore"):
        z = np.asarray(seeds, dtype=np.uint64) ^ ((np.asarray(values, dtype=np.uint64) + np.uint64(1)) * _GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(63)).astype(np.int64)


def _value(secret, k: int) -> int:
    if isinstance(secret, bool) or not isinstance(secret, (int, np.integer, float)) or float(secret) != int(secret):
        raise UserError(f"a secret is a value in 0..{k - 1}, got {secret!r}")
    v = int(secret)
    if not 0 <= v < k:
        raise UserError(f"a secret is a value in 0..{k - 1}, got {v}")
    return v


class _FrequencyOracle:
    """What the oracles share: ε-LDP on one value in 0..k − 1, the channel ``report``, the pair 0 vs k − 1."""

    channels = ("report",)
    relation = "the user's value replaced by another"
    protocol = ""

    def __init__(self, epsilon: float = 1.0, k: int = 25):
        if not (math.isfinite(epsilon) and epsilon > 0) or int(k) < 2:
            raise UserError(f"need a finite epsilon > 0 and k >= 2, got {epsilon!r}, {k!r}")
        self.epsilon, self.k = float(epsilon), int(k)
        self.name = f"{self.protocol}-k{self.k}"
        self.claim = PrivacyClaim(self.epsilon, 0.0, ("report",))

    def canaries(self) -> dict:
        return {f"0 vs {self.k - 1}": (0, self.k - 1)}


class RandomizedResponseSystem(_FrequencyOracle):
    """Generalized randomized response of one value (see the module docstring); channel ``report``: the value."""

    protocol = "grr"

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        v = _value(secret, self.k)
        keep = rng.random(n) < math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)
        other = rng.integers(0, self.k - 1, size=n)
        other = other + (other >= v)  # uniform over the k − 1 other values
        return {"report": np.where(keep, v, other).astype(np.float64)[:, None]}


class UnaryEncodingSystem(_FrequencyOracle):
    """Optimized unary encoding of one value (see the module docstring); channel ``report``: k bits."""

    protocol = "oue"

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        probs = np.full(self.k, 1.0 / (math.exp(self.epsilon) + 1.0))
        probs[_value(secret, self.k)] = 0.5
        return {"report": (rng.random((n, self.k)) < probs).astype(np.float64)}


class HashConsistency:
    """The decoder of a hashed report: 1 where the report's bit equals h_s(v) for the value v the training split
    favours (the first secret's, if it hashes consistently more often), else 0."""

    name = "hash-consistency"

    def __init__(self, values: tuple[int, int]):
        self.values = values

    def fit(self, pos: np.ndarray, neg: np.ndarray):
        def consistent(y: np.ndarray, v: int) -> np.ndarray:
            return (splitmix_bit(y[:, 1].astype(np.uint64), np.full(len(y), v)) == y[:, 0]).astype(np.float64)

        first, second = self.values
        sign = 1.0 if consistent(pos, first).mean() - consistent(neg, first).mean() >= 0 else -1.0
        return lambda y: sign * (consistent(np.asarray(y), first) - consistent(np.asarray(y), second))


class HashedReportSystem(_FrequencyOracle):
    """Binary local hashing of one value (see the module docstring); channel ``report``: (y, seed)."""

    protocol = "blh"

    def __init__(self, epsilon: float = 1.0, k: int = 25, claimed_epsilon: float | None = None, decoder: bool = False):
        super().__init__(epsilon, k)
        self.decoder = bool(decoder)
        self.claim = PrivacyClaim(float(claimed_epsilon or epsilon), 0.0, ("report",))

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        v = _value(secret, self.k)
        seeds = rng.integers(0, 2**32, size=n, dtype=np.uint64)
        truthful = rng.random(n) < math.exp(self.epsilon) / (math.exp(self.epsilon) + 1.0)
        bits = splitmix_bit(seeds, np.full(n, v))
        y = np.where(truthful, bits, 1 - bits)
        return {"report": np.column_stack([y.astype(np.float64), seeds.astype(np.float64)])}

    def audit_statistics(self, channel: str) -> list:
        return [HashConsistency((0, self.k - 1))] if self.decoder else []


def randomized_response_system(epsilon: float = 1.0, k: int = 25) -> RandomizedResponseSystem:
    return RandomizedResponseSystem(epsilon, k)


def unary_encoding_system(epsilon: float = 1.0, k: int = 25) -> UnaryEncodingSystem:
    return UnaryEncodingSystem(epsilon, k)


def hashed_report_system(
    epsilon: float = 1.0, k: int = 25, claimed_epsilon: float | None = None, decoder: bool = False
) -> HashedReportSystem:
    return HashedReportSystem(epsilon, k, claimed_epsilon, decoder)
