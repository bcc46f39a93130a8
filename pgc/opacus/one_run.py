"""One real Opacus training with M white-box gradient canaries, audited in one run (Steinke, Nasr & Jagielski,
NeurIPS 2023; the f-DP bound of Mahloujifar, Melis & Chaudhuri, ICML 2025: :mod:`audit.one_run`).

Canary k is a Dirac gradient of norm C at its own parameter coordinate (:mod:`.canary`, the M coordinates where the
data's clipped gradients are smallest), included in the training by a fair coin and, when included, sampled into
batches as one more record would be. The client trains once, by Opacus as shipped; the auditor sees every step's
model (white-box). Canary k's per-step observation is the step's change on its coordinate in units of the canary's
contribution, ``x = −Δθ · b / (lr · C)`` (b: Opacus's expected batch size under ``loss_reduction="mean"``, else 1):
under the configuration's promise, ``x`` is the sampled count plus Gaussian noise of standard deviation σ, plus the
data's own drift on that coordinate. The auditor trains the client and knows its data: at every step it sums the
batch's records' clipped gradients at the canaries' coordinates before the canaries join the batch (Opacus's flat
clipping, :meth:`pgc.opacus.system._Trainer._clipped_data_sum`) — the drift, in the same units. The records' batches
are drawn independently of the canaries' coins (Poisson: each record by its own coin; shuffled: the canaries join
batches without moving a record), and the subsampled Gaussian's privacy for one canary holds whatever the rest of
the batch sums to, so the drift reveals nothing the promise does not already allow.

Two observers, each a row at half the audit's α (Bonferroni over the two):

* **every step** — the drift removed (x − drift: the sampled count plus the promised noise); Poisson batches: Σ over
  steps of log(1 − q + q·exp((x − ½)/σ²)), the likelihood ratio of one step under the promise; shuffled batches (one
  appearance per pass): Σ x;
* **the final model** — the final parameters only: Σ x, drift included (the sum of the steps' changes is the final
  model's; the drift needs every step's model).

How many canaries to guess on, and the centre that splits guesses into "in" and "out", are chosen on scores
simulated under the promised noise (never on the real coins), by :mod:`pgc.audits.opacus`, which certifies the
rows. The claim is the configuration's own: Opacus's accountant's ε at δ for add/remove of one record, and
μ = √steps / σ where every record is in every step.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from pgc.errors import UserError

from .client import OpacusClient

SIMULATED_CANARIES = 10_000  # canaries simulated under the promise to choose the guess count and centre


@dataclass(frozen=True)
class OneRunObservation:
    """What one training with canaries gave the auditor: each canary's per-step observation (steps, M), its coin;
    ``data_drift`` (steps, M), where known, the data's clipped gradients at each canary's coordinate in the same
    units."""

    per_step: np.ndarray
    coins: np.ndarray
    coordinates: list[int]
    training_s: float
    data_drift: np.ndarray | None = None

    def every_step(self) -> np.ndarray:
        """The per-step observations the white-box observer reads: the data's drift removed where known."""
        return self.per_step if self.data_drift is None else self.per_step - self.data_drift


def train_with_canaries(client: OpacusClient, canaries: int, seed: int) -> OneRunObservation:
    """One Opacus training of ``client`` with ``canaries`` gradient canaries, each included by a fair coin."""
    from .canary import dirac_coordinates
    from .pool import one_thread
    from .system import _Trainer

    size = sum(p.numel() for p in client.model.parameters() if p.requires_grad)
    if not 1 <= canaries <= size:
        raise UserError(f"--canaries must lie in [1, {size}] (one parameter coordinate each), got {canaries}")
    coin_seed, train_seed = np.random.SeedSequence(seed).spawn(2)
    coins = np.random.default_rng(coin_seed).integers(0, 2, size=canaries)
    coordinates = dirac_coordinates(client, canaries)
    included = [c for c, coin in zip(coordinates, coins, strict=True) if coin]
    initial = [p.detach().clone() for p in client.model.parameters() if p.requires_grad]
    start = time.perf_counter()
    trainer = _Trainer(
        client,
        client.features,
        client.labels,
        initial,
        True,
        canary=included or None,
        watch=coordinates,
        data_drift=True,
    )
    with one_thread():
        release = trainer.release(int(train_seed.generate_state(1)[0]))
    steps = release[size:].reshape(client.local_steps, canaries)
    scale = float(trainer.optimizer.expected_batch_size) if client.loss_reduction == "mean" else 1.0
    per_step = -steps * scale / (client.lr * client.max_grad_norm)
    drift = np.stack(trainer.data_drift or []) / client.max_grad_norm  # one row a step: local_steps ≥ 1
    return OneRunObservation(per_step, coins, coordinates, time.perf_counter() - start, drift)


def step_scores(per_step: np.ndarray, client: OpacusClient, observer: str) -> np.ndarray:
    """Each canary's score from its (steps, M) observations: the per-step likelihood ratio summed (``"steps"``,
    Poisson batches), else the sum of the observations."""
    sigma, q = client.noise_multiplier, client.sample_rate
    if observer == "steps" and client.poisson_sampling and sigma > 0 and q < 1:
        return np.logaddexp(math.log1p(-q), math.log(q) + (per_step - 0.5) / sigma**2).sum(axis=0)
    return per_step.sum(axis=0)


def simulate_promise(client: OpacusClient, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(steps, n) observations of n canaries with fair coins under the promised configuration (no data drift)."""
    steps, q = client.local_steps, client.sample_rate
    coins = rng.integers(0, 2, size=n)
    if client.poisson_sampling:
        counts = (rng.random((steps, n)) < q) * coins
    else:
        batches = math.ceil(client.records / client.batch_size)
        counts = np.zeros((steps, n))
        for first in range(0, steps, batches):  # one pass: each canary in one batch of it
            position = np.minimum(rng.integers(0, client.records + 1, size=n) // client.batch_size, batches - 1)
            rows = first + position
            keep = rows < steps
            counts[rows[keep], np.flatnonzero(keep)] = 1
        counts *= coins
    return counts + rng.normal(0.0, client.noise_multiplier, size=(steps, n)), coins


def describe(client: OpacusClient) -> dict[str, Any]:
    """The training's configuration as the result records it."""
    return {
        "records": client.records,
        "parameters": sum(p.numel() for p in client.model.parameters() if p.requires_grad),
        "steps": client.local_steps,
        "sample_rate": client.sample_rate,
        "noise_multiplier": client.noise_multiplier,
        "max_grad_norm": client.max_grad_norm,
        "accountant": client.accountant,
        "poisson_sampling": client.poisson_sampling,
        "loss_reduction": client.loss_reduction,
    }
