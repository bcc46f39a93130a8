"""The attackers' contract (dp_auditorium style: the protocol in one place).

An :class:`Attacker` says what it applies to (``applies_to(threat)``: the channels and mechanism a threat
model gives it), which channels it reads (``channels_used(threat)``), and turns what an observer sees into
per-submission scores (``scores(threat, view, contexts, shadow, rng)``), learning from the shadow bank
only: it never sees the ground truth, which the runner uses afterwards to evaluate it. Attackers are
registered by name (:data:`attacks.runner.ATTACKERS`); the runner dispatches through this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class AttackScores:
    """What an attacker makes of a view: per-submission log-likelihoods over the candidates (or grid) for a
    classifier, or point predictions for a regressor; ``kde_bandwidth`` where the attacker chose one."""

    loglik: np.ndarray | None = None  # (n, P)
    regression: np.ndarray | None = None  # (n,)
    kde_bandwidth: float | None = None


@runtime_checkable
class Attacker(Protocol):
    name: str

    def applies_to(self, threat: Any) -> bool:
        """Whether the threat model gives this attacker what it reads (channels, mechanism)."""
        ...

    def channels_used(self, threat: Any) -> list[str]:
        """The channels this attacker reads under ``threat``."""
        ...

    def scores(self, threat: Any, view: Any, contexts: Any, shadow: Any, rng: np.random.Generator) -> AttackScores:
        """Per-submission scores of ``view``, learned from the ``shadow`` bank with randomness from ``rng``."""
        ...
