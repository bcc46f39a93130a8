"""The auditor's contracts, all in one place (dp_auditorium style).

* :class:`Sampler` — draws n outputs of whatever is audited under ONE hypothesis (one canary input,
  one environment ψ): ``sampler(n, rng) -> (n, k) float array``. Mechanism canaries, PRS internals
  (white box) and transcript channels of real rollouts are all samplers.
* :class:`Statistic` — a family of scalar test statistics; ``fit`` learns its parameters from the
  TRAINING split of both hypotheses and returns a :class:`Scorer` (higher = "looks like x").
* :class:`Tester` — keeps the two questions apart: :meth:`Tester.lower_bound` returns the certified
  bound (a number with its context), :meth:`Tester.rejects` only answers "is this claim refuted at
  the stated confidence?".

The contract of an audited SYSTEM (structural: a system never imports ``audit``):

* :class:`PrivacyClaim` — ``epsilon`` (per release; ``math.inf`` = no claim), ``delta`` (0.0 for pure
  ε-DP) and ``covers``, the channels the claim covers; any other channel is unprotected.
* :class:`System` — ``name``, ``claim``, ``channels`` and ``release(secret, n, rng, *, broadcast=None)``:
  n independent releases of ONE participant holding ``secret`` (opaque to the auditor: a gravity, a
  user stream), as a mapping channel → (n, k) float array. ``broadcast`` is what the aggregator sends
  (a model θ, synced statistics); None is the honest default. Randomness comes only from ``rng``.

Optional members of a system, used when present:

* ``broadcast_space`` → ``(lower, upper)`` arrays: the box a black-box search of an adversarial
  broadcast explores (CMA-ES);
* ``crafted_broadcasts(secret, secret_prime, rng)`` → a list of broadcasts: the system's own crafted
  family (PGC-A3C's bang-bang controller with a value-flip detector);
* ``canaries()`` → ``{name: (secret, secret_prime)}``: named neighbouring pairs;
* ``claim_for(channel)`` → a :class:`PrivacyClaim` for a channel whose claim differs from ``claim``
  (k submissions of one participant: k·ε by composition);
* ``dp_event()`` → a ``dp_accounting.DpEvent``: the noise one release actually adds, for the
  accountant (:mod:`audit.accountant`); ``dp_event_for(channel)`` where a channel composes more;
* ``describe_secret(secret)`` → a short text for reports.

The pure bound math lives in :mod:`audit.bounds`, the implementations in :mod:`audit.tester`,
:mod:`audit.selection` and :mod:`audit.statistics`, the system audit in :mod:`audit.system_audit`.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

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


@runtime_checkable
class PrivacyClaim(Protocol):
    epsilon: float  # per release; math.inf = no claim
    delta: float  # 0.0 for pure ε-DP
    covers: tuple[str, ...]  # channels the claim covers; any other channel is unprotected


@runtime_checkable
class System(Protocol):
    name: str
    claim: PrivacyClaim
    channels: tuple[str, ...]

    def release(self, secret: Any, n: int, rng: np.random.Generator, *,
                broadcast: Any = None) -> Mapping[str, np.ndarray]:
        """n independent releases of one participant holding ``secret``: channel → (n, k) floats."""
        ...
