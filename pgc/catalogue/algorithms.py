"""The catalogue's noise-adding algorithms (all but the sparse vector variants, :mod:`pgc.catalogue.svt`), each
written from its definition as DP-Sniper implements it (``dpsniper/mechanisms/*.py``) and vectorised over n runs.

Every function takes the input ``a`` (a 1-d array), ``n`` and a numpy Generator and returns the n outputs as an
(n, k) float64 array, one row per run, in the algorithm's own output format (an index, a value, bits).
"""

from __future__ import annotations

import math

import numpy as np

from .murmur import murmur3_32


def laplace(a: np.ndarray, n: int, rng: np.random.Generator, eps: float = 0.1) -> np.ndarray:
    """The Laplace mechanism on the identity query: a[0] + Lap(1/ε)."""
    return a[0] + rng.laplace(0.0, 1.0 / eps, size=(n, 1))


def laplace_parallel(
    a: np.ndarray, n: int, rng: np.random.Generator, eps: float = 0.005, n_parallel: int = 20
) -> np.ndarray:
    """``n_parallel`` independent Laplace mechanisms at ε each on a[0] (sequential composition: n_parallel·ε)."""
    return a[0] + rng.laplace(0.0, 1.0 / eps, size=(n, n_parallel))


def geometric_cdf_table(c: int, eps: float = 0.1, size: int = 5) -> tuple[np.ndarray, int]:
    """F(0..size) and d of GeoSample (Balcer & Vadhan 2018, Alg. 4.8, Step 2) for the count c, in exact integers:
    the output is the smallest z with F(z) ≥ u for u uniform on 1..d."""
    k = math.ceil(math.log(2.0 / eps))
    d = (2 ** (k + 1) + 1) * (2**k + 1) ** (size - 1)
    f = [2 ** (k * (c - z)) * (2**k + 1) ** (size - (c - z)) for z in range(c)]
    f += [d - 2 ** (k * (z - c + 1)) * (2**k + 1) ** (size - 1 - (z - c)) for z in range(c, size)]
    return np.asarray(f + [d], dtype=np.int64), d


def truncated_geometric(a: np.ndarray, n: int, rng: np.random.Generator, eps: float = 0.1, size: int = 5) -> np.ndarray:
    """The truncated geometric mechanism GeoSample(ε, size) on a count a[0] in 0..size."""
    f, d = geometric_cdf_table(int(a[0]), eps, size)
    u = rng.integers(1, d + 1, size=n)
    return np.searchsorted(f, u, side="left").astype(np.float64)[:, None]


def geometric_epsilon(eps: float = 0.1) -> float:
    """ln(1 + 2^−k), k = ⌈ln(2/ε)⌉: the ε GeoSample(ε, ·) satisfies (Balcer & Vadhan 2018, Thm. 4.7)."""
    return math.log1p(2.0 ** -math.ceil(math.log(2.0 / eps)))


def noisy_hist1(a: np.ndarray, n: int, rng: np.random.Generator, eps: float = 0.1) -> np.ndarray:
    """Every bin + Lap(1/ε) (Ding et al. 2018, Alg. 9)."""
    return a[None, :] + rng.laplace(0.0, 1.0 / eps, size=(n, a.shape[0]))


def noisy_hist2(a: np.ndarray, n: int, rng: np.random.Generator, eps: float = 0.1) -> np.ndarray:
    """Every bin + Lap(ε): the scale inverted (Ding et al. 2018, Alg. 10)."""
    return a[None, :] + rng.laplace(0.0, eps, size=(n, a.shape[0]))


def _noisy(a: np.ndarray, n: int, rng: np.random.Generator, eps: float, exponential: bool) -> np.ndarray:
    size = (n, a.shape[0])
    noise = rng.exponential(2.0 / eps, size=size) if exponential else rng.laplace(0.0, 2.0 / eps, size=size)
    return a[None, :] + noise


def report_noisy_max1(a, n, rng, eps: float = 0.1) -> np.ndarray:
    """argmax of a + Lap(2/ε) (Ding et al. 2018, Alg. 5)."""
    return np.argmax(_noisy(a, n, rng, eps, False), axis=1).astype(np.float64)[:, None]


def report_noisy_max2(a, n, rng, eps: float = 0.1) -> np.ndarray:
    """argmax of a + Exp(2/ε) (Ding et al. 2018, Alg. 6)."""
    return np.argmax(_noisy(a, n, rng, eps, True), axis=1).astype(np.float64)[:, None]


def report_noisy_max3(a, n, rng, eps: float = 0.1) -> np.ndarray:
    """max of a + Lap(2/ε): the noisy value instead of its index (Ding et al. 2018, Alg. 7)."""
    return np.max(_noisy(a, n, rng, eps, False), axis=1)[:, None]


def report_noisy_max4(a, n, rng, eps: float = 0.1) -> np.ndarray:
    """max of a + Exp(2/ε): the noisy value instead of its index (Ding et al. 2018, Alg. 8)."""
    return np.max(_noisy(a, n, rng, eps, True), axis=1)[:, None]


def prefix_sum(a: np.ndarray, n: int, rng: np.random.Generator, eps: float = 0.1) -> np.ndarray:
    """The prefix sums of a + Lap(1/ε) per entry (Wang et al., PLDI 2019)."""
    return np.cumsum(a[None, :] + rng.laplace(0.0, 1.0 / eps, size=(n, a.shape[0])), axis=1)


def bloom_filter(value: int, n_hashes: int = 4, filter_size: int = 20) -> np.ndarray:
    """RAPPOR's Bloom filter of one value: bit ``murmur3(str(value), seed=i) mod filter_size`` set for each hash i."""
    bits = np.zeros(filter_size)
    for i in range(n_hashes):
        bits[murmur3_32(str(value), i) % filter_size] = 1.0
    return bits


def _permanent(bits: np.ndarray, n: int, rng: np.random.Generator, f: float) -> np.ndarray:
    """RAPPOR's permanent randomized response per run: each bit set w.p. f/2, cleared w.p. f/2, kept w.p. 1 − f."""
    choice = rng.choice(3, size=(n, bits.shape[0]), p=[0.5 * f, 0.5 * f, 1.0 - f])
    return np.where(choice == 0, 1.0, np.where(choice == 1, 0.0, bits[None, :]))


def rappor(
    a: np.ndarray,
    n: int,
    rng: np.random.Generator,
    n_hashes: int = 4,
    filter_size: int = 20,
    f: float = 0.75,
    p: float = 0.45,
    q: float = 0.55,
) -> np.ndarray:
    """RAPPOR, Steps 1–3 (Erlingsson et al. 2014): Bloom filter, permanent then instantaneous randomized response
    (a set bit reports 1 w.p. q, a clear bit w.p. p), the permanent response drawn afresh per run."""
    prr = _permanent(bloom_filter(int(a[0]), n_hashes, filter_size), n, rng, f)
    u = rng.random(size=prr.shape)
    return np.where(prr == 1.0, u < q, u < p).astype(np.float64)


def one_time_rappor(
    a: np.ndarray, n: int, rng: np.random.Generator, n_hashes: int = 4, filter_size: int = 20, f: float = 0.95
) -> np.ndarray:
    """One-time RAPPOR, Steps 1–2 (Erlingsson et al. 2014): Bloom filter and permanent randomized response."""
    return _permanent(bloom_filter(int(a[0]), n_hashes, filter_size), n, rng, f)


def rappor_epsilon(n_hashes: int = 4, f: float = 0.75, p: float | None = 0.45, q: float | None = 0.55) -> float:
    """RAPPOR's ε for one report (Erlingsson et al. 2014, Sec. 3): h·ln(q*(1 − p*)/(p*(1 − q*))) with
    q* = f(p + q)/2 + (1 − f)q, p* = f(p + q)/2 + (1 − f)p; without the instantaneous step (p = q = None),
    one-time RAPPOR's 2h·ln((1 − f/2)/(f/2))."""
    if p is None or q is None:
        return 2 * n_hashes * math.log((1.0 - 0.5 * f) / (0.5 * f))
    q_star = 0.5 * f * (p + q) + (1.0 - f) * q
    p_star = 0.5 * f * (p + q) + (1.0 - f) * p
    return n_hashes * math.log(q_star * (1.0 - p_star) / (p_star * (1.0 - q_star)))
