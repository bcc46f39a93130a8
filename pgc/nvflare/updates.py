"""The client updates an NVFlare filter is audited on: real training updates of a small model, and updates at a
filter's clipping bound.

Under local DP any two updates of one client are neighbours; the audit compares two, named here:

* ``trained`` pairs — the real one-epoch updates (WEIGHT_DIFF: weights after minus before, as a PyTorch
  client sends them) of a small network, 64 → 32 → BatchNorm → ReLU → 10 (2,538 parameters and the scalar
  ``num_batches_tracked``), trained by SGD (lr 0.1, batch 32) from one seeded initial model on two clients'
  shards of scikit-learn's digits: ``trained, equal steps`` (600 rows each: 19 local steps each) and
  ``trained, unequal steps`` (600 vs 900 rows: 19 vs 29 steps). Their entries are of order 10⁻³ to 10⁻¹ —
  far outside SVTPrivacy's default clipping bound γ = 10⁻⁵.
* ``at the bound`` — every array entry at +b against every entry at −b (b: the filter's clipping bound, γ for
  SVTPrivacy and PercentilePrivacy; 1 for a filter without one), the scalar entries equal, the same number of
  steps: the worst pair clipping allows for the arrays alone.

Each update is ``(entries, steps)``: the name → array dictionary a client puts in its DXO, and the number of
local steps it states in the DXO's meta (``NUM_STEPS_CURRENT_ROUND``). Everything is seeded (one torch
Generator, one numpy SeedSequence); no global generator is touched.
"""

from __future__ import annotations

from functools import cache

import numpy as np

BATCH, LEARNING_RATE, HIDDEN = 32, 0.1, 32
EQUAL, UNEQUAL, BOUND = "trained, equal steps", "trained, unequal steps", "at the bound"
SHARDS = {"client A": (0, 600), "client B": (600, 1200), "client C": (600, 1500)}  # rows of digits


def small_model(generator):
    """The audited network with its initial weights drawn from ``generator`` (PyTorch's default init scheme)."""
    import torch

    model = torch.nn.Sequential(
        torch.nn.Linear(64, HIDDEN), torch.nn.BatchNorm1d(HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10)
    )
    with torch.no_grad():
        for layer in (model[0], model[3]):
            bound = 1.0 / layer.in_features**0.5
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-bound, bound, generator=generator)
    return model


def local_update(rows: tuple[int, int], seed: int = 0) -> tuple[dict[str, np.ndarray], int]:
    """One epoch of SGD on digits rows [a, b) from the seeded initial model: (weights after − before, steps)."""
    import torch
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = torch.tensor(digits.data[rows[0] : rows[1]] / 16.0, dtype=torch.float32)
    y = torch.tensor(digits.target[rows[0] : rows[1]], dtype=torch.long)
    generator = torch.Generator().manual_seed(seed)
    model = small_model(generator)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    order = torch.randperm(len(x), generator=generator)
    steps = 0
    model.train()
    for start in range(0, len(x), BATCH):
        batch = order[start : start + BATCH]
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
        optimizer.step()
        steps += 1
    after = model.state_dict()
    diff = {k: (after[k] - before[k]).numpy() for k in after}
    return {k: (v.astype(np.float64) if v.dtype.kind == "f" else v) for k, v in diff.items()}, steps


def initial_weights(seed: int = 0) -> dict[str, np.ndarray]:
    """The seeded initial model every client starts from (what the server broadcast): the global model a
    ``WEIGHTS`` result is sent relative to."""
    import torch

    model = small_model(torch.Generator().manual_seed(seed))
    return {
        k: v.numpy().astype(np.float64) if v.dtype.is_floating_point else v.numpy()
        for k, v in model.state_dict().items()
    }


@cache
def trained_updates() -> dict[str, tuple[dict[str, np.ndarray], int]]:
    """Each client's real update (cached: it is deterministic)."""
    return {name: local_update(rows) for name, rows in SHARDS.items()}


def bound_pair(like: dict[str, np.ndarray], bound: float, steps: int):
    """Every array entry at +bound vs −bound (scalars 0 in both), the shapes of ``like``."""

    def filled(sign: float):
        return {
            k: (np.zeros_like(v) if np.ndim(v) == 0 else np.full(np.shape(v), sign * bound)) for k, v in like.items()
        }

    return (filled(1.0), steps), (filled(-1.0), steps)


def update_pairs(bound: float) -> dict[str, tuple[str, str]]:
    """The named neighbouring pairs (secret names), and the secrets they name are in :func:`updates_for`."""
    return {EQUAL: ("client A", "client B"), UNEQUAL: ("client A", "client C"), BOUND: ("+bound", "-bound")}


def updates_for(bound: float) -> dict[str, tuple[dict[str, np.ndarray], int]]:
    """Secret name → (entries, steps): the trained clients and the two updates at ±bound."""
    trained = trained_updates()
    plus, minus = bound_pair(trained["client A"][0], bound, trained["client A"][1])
    return {**trained, "+bound": plus, "-bound": minus}
