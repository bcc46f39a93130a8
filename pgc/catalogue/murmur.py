"""MurmurHash3 x86 32-bit (Austin Appleby's public-domain reference), as the ``mmh3`` package's ``hash`` returns
it (a signed 32-bit integer): RAPPOR's Bloom filter in DP-Sniper hashes ``str(value)`` with it."""

from __future__ import annotations

_C1, _C2, _MASK = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _fmix(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def murmur3_32(text: str, seed: int = 0) -> int:
    """The signed 32-bit MurmurHash3 of ``text`` (UTF-8) with ``seed``, equal to ``mmh3.hash(text, seed)``."""
    data = text.encode("utf-8")
    h = seed & _MASK
    blocks = len(data) // 4
    for i in range(blocks):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = _rotl((k * _C1) & _MASK, 15)
        h ^= (k * _C2) & _MASK
        h = (_rotl(h, 13) * 5 + 0xE6546B64) & _MASK
    tail = data[4 * blocks :]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= (_rotl((k * _C1) & _MASK, 15) * _C2) & _MASK
    h = _fmix(h ^ len(data))
    return h - (1 << 32) if h & 0x80000000 else h
