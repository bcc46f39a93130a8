"""The attacker's threat model and its view of the submissions, kept apart from the ground truth.

Threat model: an honest-but-curious aggregator, or agents colluding with it. It

* sees every submission as the transcript holds it: the privatized gradient g̃ and, when the threat
  model allows, the side channels — the reported score ζ and the timing (start/arrival ticks);
* knows θ' each submission was computed at (``Transcript.submission_thetas()``), the protocol
  (exploration α of the agent by start index), the mechanism and its parameters;
* knows the candidate set Ψ (uniform prior) or a range [lo, hi] (uniform prior) for ψ;
* can simulate the environment family itself (*shadow simulation*, :func:`pgc.a3c.rollout.simulate_episodes`)
  with a budget of ``budget`` episodes per candidate ψ (and per target θ when θ varies).

It never reads the ground truth: an :class:`AttackView` holds only aggregator-visible arrays, and the
ground truth (ψ per target) is passed to :func:`attacks.a3c.evaluate.evaluate` alone.

Channels, by name:

* ``gradient`` — the privatized gradient; the ONLY channel the mechanism protects (ε-LDP).
* ``score`` — the reported episode length ζ; NOT protected.
* ``timing`` — arrival − start tick; in this simulator's timing model (one env step per tick) it is
  exactly ζ, so it leaks what the score leaks; NOT protected.
* ``prs_internals`` — white-box PRS release (matrices M and bits ũ); stronger than the aggregator's
  view (it sees Mᵀũ only); still covered by ε-LDP since (M, ũ) is the mechanism's full release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pgc.a3c.env import CartPoleParams
from pgc.a3c.rollout import A3CHyperparams
from pgc.errors import UserError
from pgc.mechanisms import Mechanism, ProjectedRandomSign

CHANNELS = ("gradient", "score", "timing", "prs_internals")
PROTECTED_CHANNELS = frozenset({"gradient", "prs_internals"})


def parse_channels(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``"gradient,score"`` → ("gradient", "score"); validated, order of :data:`CHANNELS`."""
    items = [c.strip() for c in text.split(",")] if isinstance(text, str) else [str(c).strip() for c in text]
    items = [c for c in items if c]
    if not items:
        raise UserError("at least one channel is needed")
    unknown = sorted(set(items) - set(CHANNELS))
    if unknown:
        raise UserError(f"unknown channel(s) {unknown}; known: {', '.join(CHANNELS)}")
    return tuple(c for c in CHANNELS if c in items)


@dataclass(frozen=True)
class ThreatModel:
    """What the attacker knows and sees. Validated on construction.

    Exactly one of ``candidates`` (a finite Ψ, uniform prior) and ``psi_range`` ((lo, hi), uniform
    prior) is set. ``budget`` is the number of shadow episodes per candidate ψ (per grid point for a
    range) and per distinct target θ.
    """

    mechanism: Mechanism
    channels: tuple[str, ...] = ("gradient",)
    candidates: tuple[float, ...] | None = (9.7, 9.8, 9.9)
    psi_range: tuple[float, float] | None = None
    budget: int = 500
    hyper: A3CHyperparams = field(default_factory=A3CHyperparams)
    physics: CartPoleParams = field(default_factory=CartPoleParams)  # ψ replaces its gravity
    knows_theta: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise TypeError("mechanism must implement mechanisms.Mechanism")
        object.__setattr__(self, "channels", parse_channels(self.channels))
        if (self.candidates is None) == (self.psi_range is None):
            raise UserError("give exactly one of candidates (a set Ψ) and psi_range (lo, hi)")
        if self.candidates is not None:
            cands = tuple(float(c) for c in self.candidates)
            if len(cands) < 2 or len(set(cands)) != len(cands) or not all(math.isfinite(c) for c in cands):
                raise UserError(f"candidates must be >= 2 distinct finite numbers, got {self.candidates}")
            object.__setattr__(self, "candidates", cands)
        else:
            lo, hi = (float(x) for x in self.psi_range)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise UserError(f"psi_range must be finite with lo < hi, got {self.psi_range}")
            object.__setattr__(self, "psi_range", (lo, hi))
        if not isinstance(self.budget, (int, np.integer)) or isinstance(self.budget, bool) or self.budget < 2:
            raise UserError(f"budget must be an integer >= 2 (shadow episodes per ψ), got {self.budget!r}")
        if "prs_internals" in self.channels and not isinstance(self.mechanism, ProjectedRandomSign):
            raise UserError("channel prs_internals only exists for the prs mechanism")
        if not self.knows_theta:
            raise UserError("attackers here need θ for each submission (the aggregator knows it)")

    @property
    def epsilon(self) -> float:
        return float(self.mechanism.epsilon)

    @property
    def is_regression(self) -> bool:
        return self.psi_range is not None

    @property
    def protected_only(self) -> bool:
        """True when every channel used is covered by the mechanism's ε-LDP guarantee."""
        return set(self.channels) <= PROTECTED_CHANNELS

    def uses(self, channel: str) -> bool:
        return channel in self.channels

    def describe(self) -> dict:
        m = self.mechanism
        mech = {"name": type(m).__name__, "epsilon": m.epsilon, "clip": getattr(m, "clip", None)}
        if isinstance(m, ProjectedRandomSign):
            mech["reduced_dim"] = m.reduced_dim_for(self.hyper.dim)
        return {
            "adversary": "honest-but-curious aggregator (or colluding agents)",
            "mechanism": mech,
            "channels": list(self.channels),
            "protected_only": self.protected_only,
            "candidates": None if self.candidates is None else list(self.candidates),
            "psi_range": None if self.psi_range is None else list(self.psi_range),
            "prior": "uniform",
            "budget_per_psi": int(self.budget),
            "knows_theta": self.knows_theta,
            "hyper": {
                k: getattr(self.hyper, k)
                for k in ("gamma", "lam", "beta", "cap", "bootstrap_truncated", "action_selection")
            },
        }


@dataclass(frozen=True)
class AttackView:
    """Everything the attacker sees about the attacked submissions — and nothing else.

    Row i is one submission; ``group`` links submissions the attacker knows come from the same
    environment (same agent across rounds, or a repeat submitter); targets are the distinct groups.
    ``prs_matrices``/``prs_signs`` are present only for a white-box PRS view.
    """

    gradients: np.ndarray  # (n, d) privatized
    thetas: np.ndarray  # (n, 112) θ' each was computed at
    alphas: np.ndarray  # (n,) exploration probability of the submitting agent (protocol knowledge)
    scores: np.ndarray  # (n,) reported ζ
    durations: np.ndarray  # (n,) arrival − start tick
    group: np.ndarray  # (n,) int target id, 0..n_targets−1
    prs_matrices: np.ndarray | None = None
    prs_signs: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.gradients)
        if self.gradients.ndim != 2:
            raise UserError("gradients must be (n, d)")
        for name in ("thetas", "alphas", "scores", "durations", "group"):
            if len(getattr(self, name)) != n:
                raise UserError(f"AttackView.{name} has {len(getattr(self, name))} rows, expected {n}")
        if n and (self.group.min() < 0 or np.unique(self.group).size != self.group.max() + 1):
            raise UserError("group ids must be 0..n_targets-1 without gaps")

    def __len__(self) -> int:
        return len(self.gradients)

    @property
    def n_targets(self) -> int:
        return int(self.group.max()) + 1 if len(self.group) else 0

    def first_k(self, k: int) -> AttackView:
        """Keep each group's first k submissions (row order) — the view for k linked submissions."""
        order = np.argsort(self.group, kind="stable")
        rank = np.empty(len(order), np.int64)
        g = self.group[order]
        starts = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
        counts = np.diff(np.r_[starts, len(g)])
        rank[order] = np.arange(len(g)) - np.repeat(starts, counts)
        keep = rank < k
        return self.select(keep)

    def select(self, mask: np.ndarray) -> AttackView:
        pick = lambda a: None if a is None else a[mask]  # noqa: E731
        return AttackView(
            self.gradients[mask],
            self.thetas[mask],
            self.alphas[mask],
            self.scores[mask],
            self.durations[mask],
            self.group[mask],
            pick(self.prs_matrices),
            pick(self.prs_signs),
        )

    def group_sizes(self) -> np.ndarray:
        return np.bincount(self.group, minlength=self.n_targets)
