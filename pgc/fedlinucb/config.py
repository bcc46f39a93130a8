"""Frozen, validated settings for the bandit simulator and the privacy protocols."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pgc.errors import UserError

_MAX_DIM = 512
_MAX_ARMS = 100_000
_MAX_SILOS = 100_000
_MAX_HORIZON = 10_000_000


def _int_in(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int,)) or not low <= value <= high:
        raise UserError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


@dataclass(frozen=True)
class BanditConfig:
    """The bandit family and the UCB settings shared by the three algorithms.

    ``n_silos`` M, ``horizon`` T, ``n_arms`` K, ``dim`` d, ``noise_std`` of the Gaussian reward noise,
    ``runs`` independent runs simulated together, ``batch`` B (``None`` = ⌈√(T/M)⌉, Theorem 1 of Zhou &
    Chowdhury), ``confidence`` α of the ellipsoid width and ``exploration_scale`` (multiplies the
    width; 1 = the theoretical width).
    """

    n_silos: int = 100
    horizon: int = 10_000
    n_arms: int = 100
    dim: int = 10
    noise_std: float = 0.5
    runs: int = 1
    batch: int | None = None
    confidence: float = 0.01
    exploration_scale: float = 1.0

    def __post_init__(self) -> None:
        _int_in("n_silos (M)", self.n_silos, 1, _MAX_SILOS)
        _int_in("horizon (T)", self.horizon, 1, _MAX_HORIZON)
        _int_in("n_arms (K)", self.n_arms, 1, _MAX_ARMS)
        _int_in("dim (d)", self.dim, 2, _MAX_DIM)
        _int_in("runs", self.runs, 1, 100_000)
        if not (math.isfinite(self.noise_std) and self.noise_std >= 0):
            raise UserError(f"noise_std must be finite and >= 0, got {self.noise_std!r}")
        if self.batch is not None:
            _int_in("batch (B)", self.batch, 1, _MAX_HORIZON)
            if self.batch > self.horizon:
                raise UserError(f"batch B={self.batch} exceeds the horizon T={self.horizon}")
        if not 0.0 < self.confidence < 1.0:
            raise UserError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if not (math.isfinite(self.exploration_scale) and self.exploration_scale >= 0):
            raise UserError(f"exploration_scale must be finite and >= 0, got {self.exploration_scale!r}")

    @property
    def batch_size(self) -> int:
        """B; default ⌈√(T/M)⌉ (Zhou & Chowdhury, Theorem 1), at least 1 and at most T."""
        if self.batch is not None:
            return self.batch
        return int(min(self.horizon, max(1, math.ceil(math.sqrt(self.horizon / self.n_silos)))))

    @property
    def n_batches(self) -> int:
        return self.horizon // self.batch_size


@dataclass(frozen=True)
class PrivacyConfig:
    """The claimed silo-level (ε, δ)-LDP of one release."""

    epsilon: float = 1.0
    delta: float = 0.1

    def __post_init__(self) -> None:
        if not (isinstance(self.epsilon, (int, float)) and math.isfinite(self.epsilon) and self.epsilon > 0):
            raise UserError(f"epsilon must be a finite number > 0, got {self.epsilon!r}")
        if not (isinstance(self.delta, (int, float)) and 0.0 < self.delta < 1.0):
            raise UserError(f"delta must be in (0, 1), got {self.delta!r}")


@dataclass(frozen=True)
class DP20Config:
    """DP20 FedUCB's adaptive sync rule: a silo asks for a sync when
    (t − t_last) · log(det V_local / det V_last) > ``threshold`` (DisLinUCB form; ``None`` = the
    DisLinUCB choice D = (T / (d M)) · log(M T))."""

    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None and not (math.isfinite(self.threshold) and self.threshold > 0):
            raise UserError(f"sync threshold D must be finite and > 0, got {self.threshold!r}")

    def value(self, cfg: BanditConfig) -> float:
        if self.threshold is not None:
            return float(self.threshold)
        return cfg.horizon / (cfg.dim * cfg.n_silos) * math.log(cfg.n_silos * cfg.horizon)
