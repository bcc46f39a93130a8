"""Hash functions of the LDP protocols, vectorized over many reports.

* :func:`xxh32_of_text` — XXH32 (Collet's xxHash, 32-bit variant) of a short byte string under an array of
  seeds, bit for bit what ``xxhash.xxh32(text, seed=s).intdigest()`` returns (the seed taken modulo 2³², as
  the xxhash package does). multi-freq-ldpy's and pure-ldp's local hashing hash ``str(value)`` with one
  fresh seed per report, so decoding their reports means one hash per (report, candidate value); this runs
  it as a dozen numpy operations per candidate instead of one Python call per pair.
* :func:`universal_hash` — the reference oracles' own hash family (Carter–Wegman, ``((a·x + b) mod P) mod g``
  with P prime), the "universal hash family H" of Wang et al. (USENIX Security 2017, §4.4); its seeds
  (a, b) stay below 2³⁰ so a report's float columns hold them exactly.
* :func:`hash_table` — a fixed hash function (a library's ``lambda data: ...``) over a whole domain, once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pgc.errors import UserError

_P1, _P2, _P3, _P4, _P5 = (np.uint32(x) for x in (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1))
UNIVERSAL_PRIME = 1_073_741_789  # 2³⁰ − 35, prime: seeds a, b < 2³⁰ are exact in a report's float columns


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def xxh32_of_text(text: bytes, seeds: np.ndarray) -> np.ndarray:
    """XXH32 of ``text`` (shorter than 16 bytes: the inputs the libraries hash) under each seed, as uint32."""
    if len(text) >= 16:
        raise UserError("xxh32_of_text hashes inputs shorter than 16 bytes (the str() of a domain value)")
    with np.errstate(over="ignore"):
        h = np.asarray(seeds).astype(np.uint64).astype(np.uint32) + _P5 + np.uint32(len(text))
        tail = 0
        while tail + 4 <= len(text):
            word = np.uint32(int.from_bytes(text[tail : tail + 4], "little"))
            h = _rotl(h + word * _P3, 17) * _P4
            tail += 4
        for byte in text[tail:]:
            h = _rotl(h + np.uint32(byte) * _P5, 11) * _P1
        h ^= h >> np.uint32(15)
        h *= _P2
        h ^= h >> np.uint32(13)
        h *= _P3
        h ^= h >> np.uint32(16)
    return h


def xxh32_mod(values: Sequence[int], seeds: np.ndarray, g: int) -> np.ndarray:
    """``xxh32(str(v), seed) % g`` for every seed (rows) and value (columns): an (n, len(values)) int array."""
    seeds = np.asarray(seeds)
    out = np.empty((seeds.size, len(values)), dtype=np.int64)
    for j, v in enumerate(values):
        out[:, j] = xxh32_of_text(str(int(v)).encode(), seeds) % np.uint32(g)
    return out


def universal_hash(values: np.ndarray, a: np.ndarray, b: np.ndarray, g: int) -> np.ndarray:
    """``((a·x + b) mod P) mod g`` elementwise (broadcasting), P = :data:`UNIVERSAL_PRIME`; exact in int64."""
    x = np.asarray(values, dtype=np.int64)
    return ((np.asarray(a, dtype=np.int64) * x + np.asarray(b, dtype=np.int64)) % UNIVERSAL_PRIME) % g


def universal_seeds(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n seeds (a, b) of :func:`universal_hash`: a uniform in [1, P), b uniform in [0, P)."""
    return rng.integers(1, UNIVERSAL_PRIME, size=n), rng.integers(0, UNIVERSAL_PRIME, size=n)


def hash_table(
    functions: Sequence[Callable[[object], int]], domain: int, key: Callable[[int], object] = str
) -> np.ndarray:
    """``functions[j](key(v))`` for every function j and value v in range(domain): a (len(functions), domain)
    int array (a library's fixed hash functions, evaluated once)."""
    return np.array([[int(f(key(v))) for v in range(domain)] for f in functions], dtype=np.int64)
