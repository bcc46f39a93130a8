"""The auditor's contracts, all in one place (dp_auditorium style).

* :class:`Sampler` — draws n outputs of whatever is audited under ONE hypothesis (one canary input,
  one environment ψ): ``sampler(n, rng) -> (n, k) float array``. Mechanism canaries, PRS internals
  (white box) and transcript channels of real rollouts are all samplers.
* :class:`Statistic` — a family of scalar test statistics; ``fit`` learns its parameters from the
  TRAINING split of both hypotheses and returns a :class:`Scorer` (higher = "looks like x").
* :class:`Tester` — keeps the two questions apart: :meth:`Tester.lower_bound` returns the certified
  bound (a number with its context), :meth:`Tester.rejects` only answers "is this claim refuted at
  the stated confidence?".

An audited system meets :class:`systems.contract.System` (with its one claim type,
:class:`systems.contract.PrivacyClaim`); the auditor reads systems only through that contract.

The pure bound math lives in :mod:`audit.bounds`, the implementations in :mod:`audit.tester`,
:mod:`audit.selection` and :mod:`audit.statistics`, the system audit in :mod:`audit.system_audit`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Sampler(Protocol):
    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray: ...


@runtime_checkable
class Scorer(Protocol):
    def __call__(self, outputs: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Statistic(Protocol):
    name: str

    def fit(self, train_pos: np.ndarray, train_neg: np.ndarray) -> Scorer | None:
        """Learn from the training split; ``None`` when the statistic does not apply to this data."""
        ...


@runtime_checkable
class Tester(Protocol):
    def lower_bound(self) -> "object":
        """The certified lower bound (an :class:`audit.tester.EpsilonBound`)."""
        ...

    def rejects(self, claimed_epsilon: float) -> bool:
        """True iff the claim is refuted (lower bound > claim) at the tester's confidence."""
        ...
