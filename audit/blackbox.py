"""Black-box mechanism audit: canary input pairs → outputs → certified ε lower bound.

``audit_mechanism(mechanism, dim=112, samples=1_000_000, confidence=0.95, seed=0)`` works on any
object satisfying :class:`pgc.mechanisms.Mechanism` (an ``epsilon`` attribute and
``__call__(gradients (n, d), rng) -> outputs (n, k)``); only the outputs are used. A ``clip``
attribute, when present, only sets the canaries' magnitude.

Canary pairs (x, x'), all with magnitude G ≫ C so that any sane clipping saturates them:

* ``±G·e_1`` — one coordinate; Laplace: the exact LR statistic is y_1, tight; PRS: the LR of y_1 is
  exactly e^{(ε/d̂)·y_1/(√3C)} whatever the hidden matrix M.
* ``0 vs G·e_1`` — half the distance (detects mechanisms that are wrong only near 0).
* ``±G·1`` — dense: all PRS rows saturate (the reference "naive" canary); L2-clipping bugs.
* ``G·e_1 vs −G·1`` — sparse versus dense.
* ``±G·10⁶·(1, 10⁻², 10⁻⁴, 10⁻⁶, 0, …)`` — lexicographic: every PRS row whose first four entries
  are not all zero saturates with the sign of its first non-zero entry; the joint histogram of
  (y_1..y_4), or for a mechanism with PRS's structure (``reduced_dim_for``) the exact likelihood
  ratio of the claimed algorithm (:class:`audit.statistics.PRSLexicographicLikelihoodRatio`),
  reads the votes.

The statistic and threshold are chosen on a training split (``train_fraction`` × samples per side
per canary pair) and certified on ``samples`` fresh outputs per side (:mod:`audit.tester`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .statistics import PRSLexicographicLikelihoodRatio, default_statistics
from .tester import CertifiedTest, EpsilonBound, HypothesisPair

CANARY_MAGNITUDE = 1e4  # G / C
RESOLUTION = 2.0**-30  # default output rounding, relative to C (ulps of C-scale float64 are ~2^-52·C)
LEX_COLUMNS = 4  # non-zero coordinates of the lexicographic canary (weights 1, 10⁻², 10⁻⁴, 10⁻⁶)


@dataclass(frozen=True)
class CanaryPair:
    name: str
    positive: np.ndarray
    negative: np.ndarray


def canary_pairs(dim: int, scale: float = 1.0) -> list[CanaryPair]:
    """The default canary pairs for gradients of dimension ``dim`` (see module docstring)."""
    if not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    g = CANARY_MAGNITUDE * scale
    e1 = np.zeros(dim)
    e1[0] = g
    ones = np.full(dim, g)
    lex = np.zeros(dim)
    lex[: min(LEX_COLUMNS, dim)] = (g * 1e6 * 0.01 ** np.arange(LEX_COLUMNS))[: min(LEX_COLUMNS, dim)]
    pairs = [CanaryPair("+G·e1 vs −G·e1", e1, -e1), CanaryPair("0 vs G·e1", e1, np.zeros(dim)),
             CanaryPair("+G·1 vs −G·1", ones, -ones), CanaryPair("G·e1 vs −G·1", e1, -ones)]
    if dim >= 2:
        pairs.append(CanaryPair("+G·lex vs −G·lex", lex, -lex))
    return pairs


def naive_canary(dim: int, scale: float = 1.0) -> list[CanaryPair]:
    """The reference: the dense all-ones canary only (with the same statistic search)."""
    return [p for p in canary_pairs(dim, scale) if p.name == "+G·1 vs −G·1"]


class MechanismSampler:
    """Outputs of ``mechanism`` on n copies of one input row, optionally rounded to ``resolution``.

    Rounding is post-processing, so a bound certified on rounded outputs is valid for the mechanism
    itself; it only blinds the statistics to the last bits of the floating-point outputs.
    """

    def __init__(self, mechanism, row: np.ndarray, resolution: float | None = None):
        self.mechanism = mechanism
        self.row = np.asarray(row, dtype=np.float64)
        self.resolution = resolution

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        inputs = np.repeat(self.row[None, :], n, axis=0)
        out = np.asarray(self.mechanism(inputs, rng))
        if out.ndim != 2 or out.shape[0] != n:
            raise ValueError(f"mechanism returned shape {out.shape} for {n} inputs; expected ({n}, k)")
        if self.resolution is not None:
            out = np.round(np.asarray(out, dtype=np.float64) / self.resolution) * self.resolution
        return out


@dataclass
class MechanismAuditResult:
    """``epsilon_lower_bound`` vs ``claimed_epsilon``; ``violation`` iff LB > claim at ``confidence``."""

    mechanism: str
    claimed_epsilon: float
    epsilon_lower_bound: float
    confidence: float
    violation: bool
    bound: EpsilonBound
    mode: str  # "black-box" or "white-box"
    wall_time_s: float
    candidates: list[dict] = field(default_factory=list)
    cpu_time_s: float = float("nan")  # process CPU time (the machine may be shared)

    @property
    def ratio(self) -> float:
        return self.epsilon_lower_bound / self.claimed_epsilon if math.isfinite(self.claimed_epsilon) else 0.0

    @property
    def verdict(self) -> str:
        return "violated" if self.violation else "consistent"

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "mode": self.mode, "claimed_epsilon": self.claimed_epsilon,
                "epsilon_lower_bound": self.epsilon_lower_bound, "confidence": self.confidence,
                "violation": self.violation, "verdict": self.verdict, "ratio": self.ratio,
                "wall_time_s": self.wall_time_s, "cpu_time_s": self.cpu_time_s, "bound": self.bound.to_dict(), "candidates": self.candidates}


def describe(mechanism) -> str:
    fields_ = []
    for name in ("epsilon", "clip", "reduced_dim", "rounds"):
        if hasattr(mechanism, name):
            fields_.append(f"{name}={getattr(mechanism, name)!r}")
    return f"{type(mechanism).__name__}({', '.join(fields_)})"


def _check_common(mechanism, dim: int, samples: int, confidence: float) -> float:
    if not callable(mechanism) or not hasattr(mechanism, "epsilon"):
        raise TypeError("mechanism must satisfy pgc.mechanisms.Mechanism (epsilon attribute, callable)")
    claimed = float(mechanism.epsilon)
    if math.isnan(claimed) or claimed <= 0:
        raise ValueError(f"mechanism.epsilon must be a positive number, got {mechanism.epsilon!r}")
    if not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    if not isinstance(samples, (int, np.integer)) or samples < 100:
        raise ValueError(f"samples must be an integer >= 100, got {samples!r}")
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return claimed


def _candidates(test: CertifiedTest) -> list[dict]:
    return [{"hypothesis": c.label, "statistic": c.statistic, "projected_epsilon": c.projected_epsilon,
             "train_samples": c.train_samples} for c in test.candidates]


def audit_mechanism(mechanism, dim: int = 112, samples: int = 1_000_000, confidence: float = 0.95,
                    seed: int = 0, *, delta: float = 0.0, train_fraction: float = 0.1,
                    canaries: Sequence[CanaryPair] | None = None, statistics: Sequence | None = None,
                    float_exact: bool = False, progress: bool = False) -> MechanismAuditResult:
    """Black-box audit (see module docstring). ``samples``: certification outputs per side.

    By default the outputs are rounded to ``RESOLUTION``·C before any statistic sees them: the
    audit then measures the mechanism's arithmetic, not the last bits of its floating-point
    implementation. ``float_exact=True`` audits the exact float64 outputs, where the core's
    Laplace shows a Mironov (2012) style violation (see docs/README-audit.md).
    """
    claimed = _check_common(mechanism, dim, samples, confidence)
    if not (0.0 < train_fraction <= 1.0):
        raise ValueError(f"train_fraction must lie in (0, 1], got {train_fraction!r}")
    scale = float(getattr(mechanism, "clip", None) or 1.0)
    if float_exact:
        resolution = None
    else:
        resolution = RESOLUTION * scale
    pairs = [HypothesisPair(c.name, MechanismSampler(mechanism, c.positive, resolution),
                            MechanismSampler(mechanism, c.negative, resolution))
             for c in (canary_pairs(dim, scale) if canaries is None else canaries)]
    if statistics is None:
        statistics = default_statistics()
        if callable(getattr(mechanism, "reduced_dim_for", None)) and math.isfinite(claimed):
            statistics.append(PRSLexicographicLikelihoodRatio(scale, mechanism.reduced_dim_for(dim), claimed,
                                                              min(LEX_COLUMNS, dim)))
    train = max(2_000, min(200_000, int(train_fraction * samples)))
    start, cpu = time.perf_counter(), time.process_time()
    test = CertifiedTest(pairs, samples=samples, train_samples=train, confidence=confidence, delta=delta,
                         seed=seed, statistics=statistics, detectable_delta_at=claimed, progress=progress)
    bound = test.lower_bound()
    wall = time.perf_counter() - start
    return MechanismAuditResult(describe(mechanism), claimed, bound.epsilon_lower_bound, confidence,
                                test.rejects(claimed), bound, "black-box" + (" float-exact" if float_exact else ""),
                                wall, _candidates(test),
                                time.process_time() - cpu)
