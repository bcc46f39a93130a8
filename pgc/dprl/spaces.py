"""Secret spaces: neighbouring pairs as a function of a point of the unit box, for the worst-pair search.

A secret space has ``relation`` (what makes two secrets neighbours, in words), ``dim`` (the box's
dimension) and ``pair(x)`` → ``(secret, secret_prime)`` for any ``x`` in [0, 1]^dim; every pair it returns
is neighbouring under ``relation``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pgc.errors import UserError


@dataclass(frozen=True)
class SecretSpace:
    relation: str
    dim: int
    make_pair: Callable[[np.ndarray], tuple[Any, Any]]

    def __post_init__(self) -> None:
        if self.dim < 1:
            raise UserError("a secret space has at least one dimension")

    def pair(self, x) -> tuple[Any, Any]:
        x = np.clip(np.asarray(x, dtype=np.float64).reshape(-1), 0.0, 1.0)
        if x.shape != (self.dim,):
            raise UserError(f"a point of this secret space has {self.dim} coordinates, got {x.shape}")
        return self.make_pair(x)


def index_from(u: float, count: int) -> int:
    """An index in 0..count-1 from a coordinate u in [0, 1]."""
    return min(count - 1, int(u * count))


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, stable for very large logits (an infinite utility selects its maximum)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def sample_rows(probabilities: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n independent draws from each row's categorical distribution: an (n, rows) index array."""
    cdf = np.cumsum(probabilities, axis=-1)
    cdf[..., -1] = 1.0
    u = rng.random((n, probabilities.shape[0]))
    return (u[:, :, None] > cdf[None, :, :]).sum(axis=-1)
