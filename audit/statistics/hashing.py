"""Exact-value hashing of output rows, shared by the statistics that read which exact values recur
(:mod:`audit.statistics`) and which entries are absent (:mod:`audit.statistics.shapes`)."""

from __future__ import annotations

import numpy as np

from audit.statistics.memo import by_row_blocks

_HASH_MULTIPLIERS = np.random.Generator(np.random.PCG64(np.random.SeedSequence(20260422))).integers(
    1, 2**63, size=4096, dtype=np.uint64
) | np.uint64(1)


def row_hash(values: np.ndarray) -> np.ndarray:
    """64-bit hash of each row's exact float64 bit pattern (−0.0 and 0.0 identified, every NaN alike), computed a
    block of rows at a time (a sum modulo 2⁶⁴: the same hash whatever the blocks)."""
    return by_row_blocks(_row_hash)(values)


def _row_hash(values: np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64) + 0.0
    arr = np.ascontiguousarray(np.where(np.isnan(arr), np.nan, arr))  # one bit pattern for every NaN
    bits = arr.view(np.uint64)
    k = bits.shape[1]
    mult = np.resize(_HASH_MULTIPLIERS, k) if k > _HASH_MULTIPLIERS.size else _HASH_MULTIPLIERS[:k]
    mixed = bits ^ (bits >> np.uint64(29))
    with np.errstate(over="ignore"):
        return (mixed * mult[None, :]).sum(axis=1, dtype=np.uint64)
