"""Reference oracles that report one row of a sketch: Apple's count-mean sketch (CMS, HCMS) and the private
count sketch (PCS). Every hash function is public and fixed (``hash_seed``); a report names the one it used.

* **CMS** (Apple Differential Privacy Team, "Learning with privacy at scale", 2017, Alg. 1): j uniform over
  ``sketch_hashes`` functions h_j: [k] → [m]; the vector −1^m with +1 at h_j(v); every entry flipped w.p.
  1/(1 + e^{ε/2}). Report (vector, j). Two values differ in two entries: exact ε = ε where some h_j separates them.
* **HCMS** (ibid., Alg. 3; m a power of two): j and l uniform; w = H[h_j(v), l] (Sylvester–Hadamard) times a
  sign b = −1 w.p. 1/(1 + e^ε). Report (b·w, j, l). Exact ε = ε where some h_j separates the pair.
* **PCS** (private count sketch; Charikar, Chen & Farach-Colton's count sketch with the randomizer of
  Bassily & Smith STOC 2015): pairs (h_j: [k] → [w], g_j: [k] → ±1), j uniform; the report is a uniform ±1
  vector except entry h_j(v), which is g_j(v) kept w.p. e^ε/(1 + e^ε), else negated. Exact ε = ε where some
  pair separates the values.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError

from .hadamard import hadamard_sign
from .hashed import fixed_family
from .hashing import universal_hash
from .oracle import Oracle, checked_values, log_ratio


def sketch_table(count: int, k: int, width: int, seed: int) -> np.ndarray:
    """(count, k) public hash values into [width]."""
    a, b = fixed_family(count, seed)
    return universal_hash(np.arange(k)[None, :], a[:, None], b[:, None], width)


class CountMeanSketch(Oracle):
    def __init__(
        self,
        k: int,
        epsilon: float,
        sketch_hashes: int = 8,
        width: int = 128,
        hadamard: bool = False,
        hash_seed: int = 0,
        table=None,
    ):
        """``table``: the (sketch_hashes, k) values of given public hash functions."""
        super().__init__(k, epsilon)
        self.hadamard = bool(hadamard)
        self.name = "HCMS" if self.hadamard else "CMS"
        self.sketch_hashes, self.m, self.hash_seed = int(sketch_hashes), int(width), int(hash_seed)
        if self.hadamard and self.m & (self.m - 1):
            raise UserError(f"HCMS needs a power-of-two sketch width, got {width!r}")
        self.table = (
            sketch_table(self.sketch_hashes, self.k, self.m, self.hash_seed)
            if table is None
            else np.asarray(table, dtype=np.int64)
        )
        exponent = self.epsilon if self.hadamard else self.epsilon / 2.0
        self.flip = 1.0 / (1.0 + math.exp(exponent))
        self.width = 3 if self.hadamard else self.m + 1

    def parameters(self) -> dict:
        return {
            **super().parameters(),
            "sketch_hashes": self.sketch_hashes,
            "sketch_width": self.m,
            "flip": self.flip,
            "hash_seed": self.hash_seed,
        }

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        j = rng.integers(0, self.sketch_hashes, size=v.size)
        cell = self.table[j, v]
        if self.hadamard:
            col = rng.integers(0, self.m, size=v.size)
            b = np.where(rng.random(v.size) < self.flip, -1, 1)
            return np.stack([b * hadamard_sign(cell, col), j, col], axis=1).astype(np.float64)
        vector = -np.ones((v.size, self.m))
        vector[np.arange(v.size), cell] = 1.0
        vector[rng.random((v.size, self.m)) < self.flip] *= -1.0
        return np.concatenate([vector, j[:, None].astype(np.float64)], axis=1)

    def support(self, reports, candidates) -> np.ndarray:
        r = np.asarray(reports)
        u = np.asarray(candidates, dtype=np.int64)[None, :]
        if self.hadamard:
            j, col = r[:, 1:2].astype(np.int64), r[:, 2:3].astype(np.int64)
            return r[:, :1] * hadamard_sign(self.table[j, u], col)
        cells = self.table[r[:, -1:].astype(np.int64), u]
        return np.take_along_axis(r[:, : self.m], cells, axis=1)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        v_prime = self.k - 1 if v_prime is None else v_prime
        if not np.any(self.table[:, v] != self.table[:, v_prime]):
            return 0.0
        per_entry = log_ratio(1.0 - self.flip, self.flip)
        return per_entry if self.hadamard else 2.0 * per_entry


class PrivateCountSketch(Oracle):
    name = "PCS"

    def __init__(
        self,
        k: int,
        epsilon: float,
        sketch_hashes: int = 8,
        width: int = 128,
        hash_seed: int = 0,
        table=None,
        signs=None,
    ):
        """``table`` (sketch_hashes, k) into [width] and ``signs`` (sketch_hashes, k) of ±1: given public pairs."""
        super().__init__(k, epsilon)
        self.sketch_hashes, self.m, self.hash_seed = int(sketch_hashes), int(width), int(hash_seed)
        self.table = (
            sketch_table(self.sketch_hashes, self.k, self.m, self.hash_seed)
            if table is None
            else np.asarray(table, dtype=np.int64)
        )
        self.signs = (
            2 * sketch_table(self.sketch_hashes, self.k, 2, self.hash_seed + 1) - 1
            if signs is None
            else np.asarray(signs, dtype=np.int64)
        )
        self.keep = math.exp(self.epsilon) / (1.0 + math.exp(self.epsilon))
        self.width = self.m + 1

    def parameters(self) -> dict:
        return {
            **super().parameters(),
            "sketch_hashes": self.sketch_hashes,
            "sketch_width": self.m,
            "hash_seed": self.hash_seed,
        }

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        j = rng.integers(0, self.sketch_hashes, size=v.size)
        vector = 2.0 * rng.integers(0, 2, size=(v.size, self.m)) - 1.0
        kept = np.where(rng.random(v.size) < self.keep, 1.0, -1.0)
        vector[np.arange(v.size), self.table[j, v]] = self.signs[j, v] * kept
        return np.concatenate([vector, j[:, None].astype(np.float64)], axis=1)

    def support(self, reports, candidates) -> np.ndarray:
        r = np.asarray(reports)
        j, u = r[:, -1:].astype(np.int64), np.asarray(candidates, dtype=np.int64)[None, :]
        return np.take_along_axis(r[:, : self.m], self.table[j, u], axis=1) * self.signs[j, u]

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        v_prime = self.k - 1 if v_prime is None else v_prime
        differ = (self.table[:, v] != self.table[:, v_prime]) | (self.signs[:, v] != self.signs[:, v_prime])
        return log_ratio(self.keep, 1.0 - self.keep) if np.any(differ) else 0.0
