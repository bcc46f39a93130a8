"""Reference oracles that hash the value first: local hashing (BLH, OLH, FLH) and sketch response.

* **LH** (local hashing; Wang et al. USENIX Security 2017 §4.4; Bassily & Smith STOC 2015 for g = 2): each user
  draws a hash function H from a universal family into [g] and reports (GRR_g(H(v)), H), GRR on g values at ε:
  y = H(v) w.p. p = e^ε/(e^ε + g − 1), each other value of [g] w.p. q = 1/(e^ε + g − 1). **BLH**: g = 2;
  **OLH**: g = round(e^ε) + 1. The family here is Carter–Wegman's ((a·x + b) mod P) mod g
  (:func:`pgc.ldp.hashing.universal_hash`), the report (y, a, b). Exact ε = ln(p/q) = ε: for one H the two
  values' report distributions differ only where H separates them.
* **FLH** (fast local hashing; Cormode, Maddock & Maple PVLDB 2021): OLH whose H is one of a fixed public
  family of ``hash_count`` functions, the report (y, index of H). Exact ε = ε when some member separates the
  pair, else 0.
* **SR** (sketch response; Cormode, Maddock & Maple 2021): one of ``sketch_hashes`` public hash functions
  h_j: [k] → [m], drawn uniformly, then FLH on the domain [m] of h_j(v); the report (y, index of the FLH
  function, j).
"""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError

from .hashing import universal_hash, universal_seeds
from .oracle import Oracle, checked_values, log_ratio


def olh_range(epsilon: float) -> int:
    """OLH's g = round(e^ε) + 1."""
    return int(round(math.exp(epsilon))) + 1


def grr_over(x: np.ndarray, g: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """GRR on [g]: x w.p. p, else uniform over the g − 1 other values."""
    keep = rng.random(x.size) < p
    other = rng.integers(0, g - 1, size=x.size)
    other += other >= x
    return np.where(keep, x, other)


class LocalHashing(Oracle):
    def __init__(self, k: int, epsilon: float, optimized: bool = True):
        super().__init__(k, epsilon)
        self.optimized = bool(optimized)
        self.name = "OLH" if self.optimized else "BLH"
        self.g = olh_range(self.epsilon) if self.optimized else 2
        e = math.exp(self.epsilon)
        self.p, self.q = e / (e + self.g - 1), 1.0 / (e + self.g - 1)
        self.width = 3  # y, a, b

    def parameters(self) -> dict:
        return {**super().parameters(), "g": self.g}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        a, b = universal_seeds(v.size, rng)
        y = grr_over(universal_hash(v, a, b, self.g), self.g, self.p, rng)
        return np.stack([y, a, b], axis=1).astype(np.float64)

    def support(self, reports, candidates) -> np.ndarray:
        r = np.asarray(reports).astype(np.int64)
        hashed = universal_hash(np.asarray(candidates)[None, :], r[:, 1:2], r[:, 2:3], self.g)
        return (hashed == r[:, :1]).astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return log_ratio(self.p, self.q)


def fixed_family(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` public universal hash functions (a_j, b_j), from ``seed``."""
    return universal_seeds(count, np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed))))


class FastLocalHashing(Oracle):
    name = "FLH"

    def __init__(self, k: int, epsilon: float, hash_count: int = 100, hash_seed: int = 0, table=None):
        """``table``: the (hash_count, k) values of a given public family instead of the universal one."""
        super().__init__(k, epsilon)
        self.g = olh_range(self.epsilon)
        e = math.exp(self.epsilon)
        self.p, self.q = e / (e + self.g - 1), 1.0 / (e + self.g - 1)
        self.hash_count, self.hash_seed = int(hash_count), int(hash_seed)
        if table is None:
            a, b = fixed_family(self.hash_count, self.hash_seed)
            table = universal_hash(np.arange(self.k)[None, :], a[:, None], b[:, None], self.g)
        self.table = np.asarray(table, dtype=np.int64)
        if self.table.shape != (self.hash_count, self.k):
            raise UserError(f"an FLH table has shape (hash_count, k) = ({self.hash_count}, {self.k})")
        self.width = 2  # y, index of the hash function

    def parameters(self) -> dict:
        return {**super().parameters(), "g": self.g, "hash_count": self.hash_count, "hash_seed": self.hash_seed}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        j = rng.integers(0, self.hash_count, size=v.size)
        y = grr_over(self.table[j, v], self.g, self.p, rng)
        return np.stack([y, j], axis=1).astype(np.float64)

    def support(self, reports, candidates) -> np.ndarray:
        r = np.asarray(reports).astype(np.int64)
        return (self.table[r[:, 1:2], np.asarray(candidates)[None, :]] == r[:, :1]).astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        v_prime = self.k - 1 if v_prime is None else v_prime
        separated = bool(np.any(self.table[:, v] != self.table[:, v_prime]))
        return log_ratio(self.p, self.q) if separated else 0.0


class SketchResponse(Oracle):
    name = "SR"

    def __init__(
        self,
        k: int,
        epsilon: float,
        sketch_hashes: int = 8,
        width: int = 128,
        hash_count: int = 100,
        hash_seed: int = 0,
        sketch_table=None,
        inner_table=None,
    ):
        """``sketch_table`` (sketch_hashes, k) and ``inner_table`` (hash_count, width): given public families."""
        super().__init__(k, epsilon)
        self.sketch_hashes, self.m, self.hash_seed = int(sketch_hashes), int(width), int(hash_seed)
        if sketch_table is None:
            sketch_a, sketch_b = fixed_family(self.sketch_hashes, self.hash_seed + 1)
            sketch_table = universal_hash(np.arange(self.k)[None, :], sketch_a[:, None], sketch_b[:, None], self.m)
        self.sketch = np.asarray(sketch_table, dtype=np.int64)
        self.inner = FastLocalHashing(self.m, self.epsilon, hash_count, self.hash_seed, inner_table)
        self.width = 3  # y, FLH function, sketch function

    def parameters(self) -> dict:
        return {
            **super().parameters(),
            "sketch_hashes": self.sketch_hashes,
            "sketch_width": self.m,
            "g": self.inner.g,
            "hash_count": self.inner.hash_count,
            "hash_seed": self.hash_seed,
        }

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        j = rng.integers(0, self.sketch_hashes, size=v.size)
        inner = self.inner.release(self.sketch[j, v], rng)
        return np.concatenate([inner, j[:, None].astype(np.float64)], axis=1)

    def support(self, reports, candidates) -> np.ndarray:
        r = np.asarray(reports).astype(np.int64)
        cells = self.sketch[r[:, 2:3], np.asarray(candidates)[None, :]]
        return (self.inner.table[r[:, 1:2], cells] == r[:, :1]).astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        v_prime = self.k - 1 if v_prime is None else v_prime
        cells = self.sketch[:, [v, v_prime]]
        separated = any(np.any(self.inner.table[:, a] != self.inner.table[:, b]) for a, b in cells)
        return log_ratio(self.inner.p, self.inner.q) if separated else 0.0
