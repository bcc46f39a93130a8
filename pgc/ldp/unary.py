"""Reference oracles that report bit vectors: unary encoding (SUE, OUE) and RAPPOR.

* **UE** (unary encoding; Wang et al. USENIX Security 2017 §4.2): the one-hot vector of the value, each bit
  reported 1 w.p. p where it is 1 and w.p. q where it is 0. **SUE** (basic one-time RAPPOR):
  p = e^{ε/2}/(e^{ε/2} + 1), q = 1 − p; **OUE**: p = 1/2, q = 1/(e^ε + 1). Exact ε = ln(p(1 − q)/((1 − p)q)) = ε:
  two values differ in two bits.
* **RAPPOR** (Erlingsson, Pihur & Korolova, CCS 2014): the value's Bloom filter B (``hashes`` hash functions
  into ``bits`` bits, one family per cohort; each user in a uniformly drawn cohort), the permanent randomized
  response B′ (each bit 1 w.p. f/2, 0 w.p. f/2, else B's), then the instantaneous one S (1 w.p. q where B′ is 1,
  w.p. p where it is 0). Report: S and the cohort. The paper's promise is ε∞ = 2h·ln((1 − f/2)/(f/2)) (§3.3,
  the permanent response, h = ``hashes``); this reference sets f from ε by that equation. Without the
  instantaneous step (p = 0, q = 1, as pure-ldp ships it) one report's exact ε for a pair is
  max over cohorts of |B_c(v) Δ B_c(v′)|·ln((1 − f/2)/(f/2)): ε∞ when the two filters share no bit.
  The hash functions are a fixed random table (``hash_seed``), public like any RAPPOR deployment's.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError

from .oracle import Oracle, checked_values, log_ratio


class UnaryEncoding(Oracle):
    def __init__(self, k: int, epsilon: float, optimized: bool = False):
        super().__init__(k, epsilon)
        self.optimized = bool(optimized)
        self.name = "OUE" if self.optimized else "SUE"
        if self.optimized:
            self.p, self.q = 0.5, 1.0 / (math.exp(self.epsilon) + 1.0)
        else:
            half = math.exp(self.epsilon / 2.0)
            self.p, self.q = half / (half + 1.0), 1.0 / (half + 1.0)
        self.width = self.k

    def parameters(self) -> dict:
        return {**super().parameters(), "p": self.p, "q": self.q}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        bits = rng.random((v.size, self.k)) < self.q
        bits[np.arange(v.size), v] = rng.random(v.size) < self.p
        return bits.astype(np.float64)

    def support(self, reports, candidates) -> np.ndarray:
        return np.asarray(reports)[:, np.asarray(candidates)].astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return log_ratio(self.p * (1.0 - self.q), (1.0 - self.p) * self.q)


def rappor_f(epsilon: float, hashes: int) -> float:
    """f with 2h·ln((1 − f/2)/(f/2)) = ε (Erlingsson et al. 2014, §3.3)."""
    return 2.0 / (1.0 + math.exp(epsilon / (2.0 * hashes)))


class Rappor(Oracle):
    name = "RAPPOR"

    def __init__(
        self,
        k: int,
        epsilon: float,
        hashes: int = 1,
        bits: int = 128,
        cohorts: int = 8,
        p: float = 0.0,
        q: float = 1.0,
        hash_seed: int = 0,
        f: float | None = None,
        positions=None,
    ):
        """``f``: a given PRR probability instead of the one ε sets; ``positions``: given Bloom positions
        (cohorts, hashes, k) instead of the random table."""
        super().__init__(k, epsilon)
        if hashes < 1 or bits < 2 * hashes or cohorts < 1 or not (0.0 <= p < q <= 1.0):
            raise UserError("RAPPOR needs hashes >= 1, bits >= 2·hashes, cohorts >= 1 and 0 <= p < q <= 1")
        self.hashes, self.bits, self.cohorts, self.p, self.q = int(hashes), int(bits), int(cohorts), float(p), float(q)
        self.f = rappor_f(self.epsilon, self.hashes) if f is None else float(f)
        if not (0.0 < self.f < 1.0):
            raise UserError(f"RAPPOR's f lies in (0, 1), got {f!r}")
        if positions is None:
            table_rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(hash_seed)))
            positions = table_rng.integers(0, self.bits, size=(self.cohorts, self.hashes, self.k))
        self.positions = np.asarray(positions, dtype=np.int64)
        self.hash_seed = int(hash_seed)
        self.width = self.bits + 1  # the reported bits, then the cohort

    @property
    def claim_reading(self) -> str:
        return (
            f"epsilon={self.epsilon:g}, hashes={self.hashes} → f = {self.f:.4g} with ε∞ = 2h·ln((1 − f/2)/(f/2)) "
            f"= {self.epsilon:g} (Erlingsson et al. §3.3): claim ε = {self.epsilon:g} per report"
        )

    def parameters(self) -> dict:
        return {
            **super().parameters(),
            "f": self.f,
            "hashes": self.hashes,
            "bits": self.bits,
            "cohorts": self.cohorts,
            "p": self.p,
            "q": self.q,
            "hash_seed": self.hash_seed,
        }

    def filters(self, cohort: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The Bloom filters B_c(v), one row per (cohort, value) pair."""
        out = np.zeros((v.size, self.bits), dtype=bool)
        for j in range(self.hashes):
            out[np.arange(v.size), self.positions[cohort, j, v]] = True
        return out

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        cohort = rng.integers(0, self.cohorts, size=v.size)
        bloom = self.filters(cohort, v)
        u = rng.random((v.size, self.bits))
        permanent = np.where(u < self.f / 2.0, True, np.where(u < self.f, False, bloom))
        if (self.p, self.q) != (0.0, 1.0):
            permanent = rng.random((v.size, self.bits)) < np.where(permanent, self.q, self.p)
        return np.concatenate([permanent.astype(np.float64), cohort[:, None].astype(np.float64)], axis=1)

    def support(self, reports, candidates) -> np.ndarray:
        reports = np.asarray(reports)
        cohort = reports[:, -1].astype(np.int64)
        out = np.zeros((reports.shape[0], len(candidates)))
        for i, u in enumerate(np.asarray(candidates, dtype=np.int64)):
            for j in range(self.hashes):
                out[:, i] += reports[np.arange(reports.shape[0]), self.positions[cohort, j, u]]
        return out

    def bit_log_ratios(self) -> tuple[float, float]:
        """(ln(q*/p*), ln((1 − p*)/(1 − q*))): one differing bit's largest log ratio when S = 1 and when S = 0."""
        half = self.f / 2.0
        q_star = (1.0 - half) * self.q + half * self.p
        p_star = half * self.q + (1.0 - half) * self.p
        return log_ratio(q_star, p_star), log_ratio(1.0 - p_star, 1.0 - q_star)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return bloom_pair_epsilon(self.positions, v, self.k - 1 if v_prime is None else v_prime, *self.bit_log_ratios())


def bloom_pair_epsilon(positions: np.ndarray, v: int, v_prime: int, when_set: float, when_clear: float) -> float:
    """The exact ε of a Bloom-filter report for the pair (v, v′): the largest, over cohorts and both directions,
    of Σ over the bits only one filter sets of that bit's largest log ratio (``when_set`` where the report's
    bit is 1, ``when_clear`` where it is 0). ``positions``: (cohorts, hashes, k)."""
    worst = 0.0
    for cohort in positions:
        own, other = set(cohort[:, v].tolist()), set(cohort[:, v_prime].tolist())
        only_own, only_other = len(own - other), len(other - own)
        for a, b in ((only_own, only_other), (only_other, only_own)):
            worst = max(worst, (a * when_set if a else 0.0) + (b * when_clear if b else 0.0))
    return worst
