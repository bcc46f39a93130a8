"""Mitigations for the channels the gradient mechanism leaves open.

The paper's ε covers the gradient only. The aggregator also sees, per submission, the score ζ
(episode length) in the clear, the arrival tick (start + ζ) and the arrival order. Three
mitigations close them (``TrainConfig(protect=...)``, ``pgc train --protect``):

* ``score`` — the score passes through its own ε-LDP mechanism before it leaves the agent
  (:class:`ScoreLaplace`: clip to [0, cap], add Lap(cap/ε_score); sensitivity cap). The budget is
  split: the user's ε is the TOTAL per agent, ε = ε_gradient + ε_score, so the gradient mechanism
  runs at ε − ε_score. Default ε_score = :data:`DEFAULT_SCORE_FRACTION` · ε.
* ``timing`` — fixed schedule: a worker whose episode ends early waits and submits at tick
  start + cap. Arrival − start is the constant cap, and with the workers started together (the
  trainer starts them all at tick 0, and then they stay in lockstep) every submission of a round
  arrives in the same tick: arrival time and arrival order across ticks carry nothing about the
  episode. Costs: fewer submissions per tick (a round of W submissions takes cap ticks) and more
  staleness in wall-clock terms; no ε is spent.
* ``order`` — shuffler: the submissions that arrive in one tick reach the aggregator in a uniformly
  random order (a dedicated generator), and the transcript's worker column is not recorded (−1).
  Alone it hides only the order *within* a tick and the worker slot; the order *across* ticks still
  follows arrival time (use ``timing`` for that). No amplification by shuffling is claimed.

The total claim of one agent is ε (gradient + score) only when ``score`` AND ``timing`` are
protected: with ``score`` alone, the arrival tick still reveals the true score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError

CHANNELS = ("score", "timing", "order")
DEFAULT_SCORE_FRACTION = 0.1  # ε_score = 10 % of the total ε unless given


def parse_protect(value) -> tuple[str, ...]:
    """``"score,timing"`` / ``"all"`` / an iterable of names → a sorted tuple of channel names."""
    if value is None:
        return ()
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    else:
        items = [str(v).strip() for v in value]
    out: set[str] = set()
    for item in items:
        if item == "all":
            out.update(CHANNELS)
        elif item in CHANNELS:
            out.add(item)
        else:
            raise UserError(f"unknown protected channel {item!r}; known: {', '.join(CHANNELS)}, all")
    return tuple(c for c in CHANNELS if c in out)


@dataclass(frozen=True)
class ScoreLaplace:
    """ε-LDP score release: clip ζ to [0, cap], add Lap(0, cap/ε). Sensitivity cap (eq. 20's analogue).

    Same draws as the trainer's compiled twin (numpy's ``Generator.laplace`` formula, one uniform
    per score), so scores privatized here with the trial's score stream equal the transcript's.
    """

    epsilon: float
    cap: float

    def __post_init__(self) -> None:
        if not (
            isinstance(self.epsilon, (int, float, np.floating)) and math.isfinite(self.epsilon) and self.epsilon > 0
        ):
            raise UserError(f"score epsilon must be a positive finite number, got {self.epsilon!r}")
        if not (math.isfinite(self.cap) and self.cap > 0):
            raise UserError(f"score cap must be a positive finite number, got {self.cap!r}")

    @property
    def scale(self) -> float:
        return self.cap / self.epsilon

    def __call__(self, scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = np.clip(np.asarray(scores, dtype=np.float64), 0.0, self.cap)
        return s + rng.laplace(0.0, self.scale, size=s.shape)

    def log_density(self, output: np.ndarray, score: float) -> np.ndarray:
        """log p(output | score): the exact law, for likelihood-ratio checks."""
        s = min(max(float(score), 0.0), self.cap)
        b = self.scale
        return -np.abs(np.asarray(output, dtype=np.float64) - s) / b - math.log(2.0 * b)


def split_budget(epsilon: float, score_epsilon: float | None, protect: tuple[str, ...]) -> tuple[float, float]:
    """(ε_gradient, ε_score) per agent for a total ε; ε_score = 0 when the score is not protected."""
    if "score" not in protect:
        if score_epsilon is not None:
            raise UserError("score_epsilon is set but the score channel is not protected (add 'score' to protect)")
        return epsilon, 0.0
    if not math.isfinite(epsilon):
        raise UserError("a privatized score needs a finite total ε (ε = ε_gradient + ε_score)")
    eps_s = DEFAULT_SCORE_FRACTION * epsilon if score_epsilon is None else float(score_epsilon)
    if not (math.isfinite(eps_s) and 0 < eps_s < epsilon):
        raise UserError(
            f"score_epsilon must lie in (0, ε = {epsilon:g}) so that the gradient keeps a positive "
            f"share, got {score_epsilon!r}"
        )
    return epsilon - eps_s, eps_s


def stop_margin(score_epsilon: float, cap: float, window: int, z: float = 1.645) -> float:
    """Half-width z·σ/√m of the one-sided confidence bound of a trailing mean of m privatized scores.

    The noise of one score is Lap(cap/ε_score), standard deviation √2·cap/ε_score; the mean of m
    independent draws has σ/√m (normal approximation). A noise-aware stop at the target μ* needs
    mean − margin ≥ μ*, i.e. a trailing mean of at least μ* + margin."""
    if not (score_epsilon > 0 and cap > 0 and window >= 1):
        raise UserError("need score_epsilon > 0, cap > 0 and window >= 1")
    return z * math.sqrt(2.0) * cap / score_epsilon / math.sqrt(window)


def min_stop_window(score_epsilon: float, cap: float, target: float, z: float = 1.645) -> int:
    """Smallest window m at which a noise-aware stop can fire at all: the true mean is at most cap, so
    target + stop_margin(m) ≤ cap, i.e. m ≥ (z·√2·cap / (ε_score·(cap − target)))²."""
    if not 0 <= target < cap:
        raise UserError("need 0 <= target < cap")
    return math.ceil((z * math.sqrt(2.0) * cap / (score_epsilon * (cap - target))) ** 2)
