"""Reference oracles built on the Sylvester–Hadamard matrix H[i, j] = (−1)^{popcount(i & j)}: Hadamard response
and the Hadamard mechanism.

* **HR** (Hadamard response; Acharya, Sun & Zhang, AISTATS 2019, the general scheme): B = 2^⌊log₂ min(e^ε, 2k)⌋
  blocks of b = 2^⌈log₂(k/B + 1)⌉ outputs each (K = B·b outputs); value x sits in block x // (b − 1) at row
  r = x mod (b − 1) + 1, and owns the b/2 outputs S_x of its block where H[r, ·] = +1. The report is uniform
  over all K outputs w.p. u = 2B/(2B − 1 + e^ε), else uniform over S_x, so
  P(y | x) = u/K + (1 − u)·(2/b)·[y ∈ S_x] and the exact ε is ln(1 + (1 − u)·2B/u) = ε. With B = 1 this is the
  scheme for the high-privacy regime (K = 2^⌈log₂(k + 1)⌉, x on row x + 1).
* **HM** (Hadamard mechanism; Cormode, Maddock & Maple PVLDB 2021): t coefficients (j_i, H[x, j_i]) with the j_i
  uniform over [k], reported as they are w.p. p = e^ε/(e^ε + 2^t − 1), else replaced by one of the other
  2^t − 1 sign vectors, uniformly; t = ⌈log₂(e^ε + 1)⌉. Exact ε = ln(p(2^t − 1)/(1 − p)) = ε.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError

from .oracle import Oracle, checked_values, log_ratio


def hadamard_sign(i, j) -> np.ndarray:
    """H[i, j] = (−1)^{popcount(i & j)} elementwise, as ±1 integers."""
    parity = np.bitwise_count(np.asarray(i, dtype=np.int64) & np.asarray(j, dtype=np.int64)) & 1
    return 1 - 2 * parity.astype(np.int64)


def hr_blocks(k: int, epsilon: float) -> int:
    """B = 2^⌊log₂ min(e^ε, 2k)⌋ (at least 1)."""
    return 2 ** max(0, int(math.floor(math.log2(min(math.exp(epsilon), 2 * k)))))


class HadamardResponse(Oracle):
    name = "HR"
    width = 1

    def __init__(self, k: int, epsilon: float, blocks: int | None = None, permutation=None):
        """``permutation``: a public permutation of the values applied before the blocks (pure-ldp's server draws
        one for the general scheme); None: the identity."""
        super().__init__(k, epsilon)
        self.permutation = np.arange(self.k) if permutation is None else np.asarray(permutation, dtype=np.int64)
        if sorted(self.permutation.tolist()) != list(range(self.k)):
            raise UserError("HR's permutation must be a permutation of 0..k−1")
        self.blocks = hr_blocks(self.k, self.epsilon) if blocks is None else int(blocks)
        if self.blocks < 1 or self.blocks & (self.blocks - 1):
            raise UserError(f"HR needs a power-of-two number of blocks, got {blocks!r}")
        self.block_size = 2 ** int(math.ceil(math.log2(self.k / self.blocks + 1)))
        self.outputs = self.blocks * self.block_size
        self.uniform = 2 * self.blocks / (2 * self.blocks - 1 + math.exp(self.epsilon))

    def parameters(self) -> dict:
        return {**super().parameters(), "blocks": self.blocks, "block_size": self.block_size, "outputs": self.outputs}

    def place(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(block, row) of each value (after the permutation)."""
        x = self.permutation[x]
        return x // (self.block_size - 1), x % (self.block_size - 1) + 1

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        x = checked_values(values, self.k)
        block, row = self.place(x)
        position = rng.integers(0, self.block_size, size=x.size)
        lowest = row & -row  # flipping a bit where the row has a one flips the sign: the partner in S_x
        position = np.where(hadamard_sign(row, position) < 0, position ^ lowest, position)
        own = block * self.block_size + position
        anywhere = rng.integers(0, self.outputs, size=x.size)
        return np.where(rng.random(x.size) < self.uniform, anywhere, own).astype(np.float64)[:, None]

    def support(self, reports, candidates) -> np.ndarray:
        y = np.asarray(reports)[:, :1].astype(np.int64)
        block, row = self.place(np.asarray(candidates, dtype=np.int64)[None, :])
        inside = (y // self.block_size) == block
        return (inside & (hadamard_sign(row, y % self.block_size) > 0)).astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        base = self.uniform / self.outputs
        return log_ratio(base + (1.0 - self.uniform) * 2.0 / self.block_size, base)


def optimal_coefficients(epsilon: float) -> int:
    """HM's t = ⌈log₂(e^ε + 1)⌉."""
    return int(math.ceil(math.log2(math.exp(epsilon) + 1.0)))


class HadamardMechanism(Oracle):
    name = "HM"

    def __init__(self, k: int, epsilon: float, coefficients: int | None = None):
        super().__init__(k, epsilon)
        self.t = optimal_coefficients(self.epsilon) if coefficients is None else int(coefficients)
        if self.t < 1:
            raise UserError("HM needs at least one coefficient")
        self.p = math.exp(self.epsilon) / (math.exp(self.epsilon) + 2**self.t - 1)
        self.width = 2 * self.t  # j_1, c_1, ..., j_t, c_t

    def parameters(self) -> dict:
        return {**super().parameters(), "coefficients": self.t, "p": self.p}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        x = checked_values(values, self.k)
        j = rng.integers(0, self.k, size=(x.size, self.t))
        negative = hadamard_sign(x[:, None], j) < 0  # the true sign vector as bits
        weights = 1 << np.arange(self.t, dtype=np.int64)
        true_code = negative.astype(np.int64) @ weights
        other = rng.integers(0, 2**self.t - 1, size=x.size)
        other += other >= true_code  # uniform over the other 2^t − 1 sign vectors
        code = np.where(rng.random(x.size) < self.p, true_code, other)
        signs = 1 - 2 * ((code[:, None] >> np.arange(self.t)) & 1)
        return np.stack([j, signs], axis=2).reshape(x.size, 2 * self.t).astype(np.float64)

    def support(self, reports, candidates) -> np.ndarray:
        r = np.asarray(reports).astype(np.int64)
        j, signs = r[:, 0::2], r[:, 1::2]
        u = np.asarray(candidates, dtype=np.int64)
        agree = hadamard_sign(u[None, :, None], j[:, None, :]) == signs[:, None, :]
        return np.all(agree, axis=2).astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return log_ratio(self.p * (2**self.t - 1), 1.0 - self.p)
