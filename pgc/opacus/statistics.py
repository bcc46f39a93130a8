"""The white-box auditor's tests for an Opacus client: projections of the releases on the differing record's clipped
gradient at the initial model (what a gradient canary makes known), offered to the audit's selection beside its own
tests; like any candidate they are chosen on the training split, so they cannot bias a certified bound.

* ``update``: the update's projection on the direction;
* ``steps``: the sum of the steps' projections, and their maximum (a record in one batch of the round), oriented
  towards the side that holds the record.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np


def clipped_gradients(client: Any, features: Any, labels: Any) -> Iterator[np.ndarray]:
    """Each record's gradient at the client's initial model, flattened over the trainable parameters and clipped to
    the client's ``max_grad_norm`` (the per-sample clipping DP-SGD applies), one record after the other."""
    import copy

    import torch

    model = copy.deepcopy(client.model)
    params = [p for p in model.parameters() if p.requires_grad]
    loss = torch.nn.functional.cross_entropy if client.loss == "cross_entropy" else torch.nn.functional.mse_loss
    for x, y in zip(features, labels, strict=True):
        grads = torch.autograd.grad(loss(model(x[None]), y[None], reduction="sum"), params)
        g = torch.cat([t.reshape(-1) for t in grads]).double().numpy()
        norm = float(np.linalg.norm(g))
        yield g * min(1.0, client.max_grad_norm / norm) if norm > 0 else g


def clipped_gradient(client: Any, features: Any, label: Any) -> np.ndarray:
    """One record's clipped gradient (:func:`clipped_gradients`)."""
    return next(clipped_gradients(client, features[None], label[None]))


# a generic statistic replaces the projection on a gradient canary's exact direction only by projecting this much more
# on the selection half (pgc.contracts.OffersStatistics): the direction is known, a fitted one is estimated
EXACT_DIRECTION_MARGIN = 0.25


class Projection:
    """A candidate test on the projections of a release on ``direction`` (per step for ``steps``);
    ``preferred_margin``: set where the direction is known exactly (a gradient canary's)."""

    def __init__(
        self, name: str, direction: np.ndarray, reduce: str | None, preferred_margin: float | None = None
    ) -> None:
        self.name, self.direction, self.reduce = name, direction, reduce
        self.preferred_margin = preferred_margin

    def _projections(self, y: Any) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        if self.reduce is None:
            return y @ self.direction
        steps = y.reshape(len(y), -1, len(self.direction)) @ self.direction
        return steps.sum(axis=1) if self.reduce == "sum" else steps

    def fit(self, pos: Any, neg: Any):
        if np.asarray(pos).shape[-1] % len(self.direction):
            return None
        a, b = self._projections(pos), self._projections(neg)
        sign = 1.0 if float(np.mean(a)) >= float(np.mean(b)) else -1.0  # the side of the direction pos lies on
        if self.reduce != "max":
            return lambda y: sign * self._projections(y)
        # the maximum over the steps finds the one step the record moved. Where pos holds the record, that step lies
        # on pos's side, and the maximum there is high for pos; where neg holds it, the step lies on neg's side, and
        # the negated maximum on that side is high for pos. The fit keeps the orientation that separates its
        # releases more (the other one barely moves: one step in many).
        candidates = (
            lambda y: (sign * self._projections(y)).max(axis=1),
            lambda y: -(-sign * self._projections(y)).max(axis=1),
        )
        return max(candidates, key=lambda score: separation(score(pos), score(neg)))


def separation(s_pos: np.ndarray, s_neg: np.ndarray) -> float:
    """How far a score puts pos above neg: the difference of its means over their pooled standard deviation."""
    spread = math.sqrt(0.5 * (float(np.var(s_pos)) + float(np.var(s_neg))))
    difference = float(np.mean(s_pos)) - float(np.mean(s_neg))
    return difference / spread if spread > 0 else math.copysign(math.inf, difference) if difference else 0.0


def projection_tests(channel: str, direction: np.ndarray, exact: bool = False) -> list:
    """The candidate tests for ``channel`` (none for a channel the direction does not describe); ``exact``: the
    direction is the differing gradient itself (a gradient canary), and the tests are preferred in selection."""
    margin = EXACT_DIRECTION_MARGIN if exact else None
    if channel == "update":
        return [Projection("canary-gradient", direction, None, margin)]
    if channel == "steps":
        return [
            Projection("canary-gradient-sum", direction, "sum", margin),
            Projection("canary-gradient-max", direction, "max", margin),
        ]
    return []
