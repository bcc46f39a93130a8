"""A Flower client with local differential privacy: a small torch classifier on scikit-learn's digits.

The client holds 40 handwritten digits (8×8 images), trains the global softmax-regression model for a
few full-batch gradient steps and replies with the new parameters; Flower's ``LocalDpMod`` clips the
update to L2 norm ``CLIP`` and adds Gaussian noise for (ε, δ) = (1, 1e-5) before the reply leaves.

What pgc-audit reads from this module (``pgc audit --flower examples/flower/digits_app.py:app``):

* ``app`` — the ClientApp, mods included;
* ``initial_parameters()`` — the global model the server sends;
* ``AUDIT_PAIRS`` — neighbouring local data sets by the names ``client_fn`` reads from the run config
  (``DATASET_KEY``): ``D`` (the 40 records), ``D-replaced`` (record 0 replaced by another digit) and
  ``D-removed`` (record 0 removed).
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from flwr.app import Context
from flwr.client import ClientApp, NumPyClient
from flwr.client.mod import LocalDpMod
from sklearn.datasets import load_digits

from pgc.flower import DATASET_KEY

CLIP = 1.0  # L2 norm the update is clipped to
SENSITIVITY = 2.0 * CLIP  # two clipped updates lie at most 2·CLIP apart
EPSILON, DELTA = 1.0, 1e-5
LOCAL_RECORDS = 40
STEPS, LEARNING_RATE = 5, 0.5

AUDIT_PAIRS = {"one record replaced": ("D", "D-replaced"), "one record removed": ("D", "D-removed")}
AUDIT_RELATION = "one record replaced, or one record removed"


@functools.cache
def local_data(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The client's records: the first 40 digits (D), with record 0 replaced by digit 1,500 (D-replaced), or
    without record 0 (D-removed)."""
    digits = load_digits()
    x, y = digits.data.astype(np.float32) / 16.0, digits.target.astype(np.int64)
    keep = np.arange(LOCAL_RECORDS)
    if name == "D":
        return x[keep], y[keep]
    if name == "D-replaced":
        return np.concatenate([x[[1500]], x[keep[1:]]]), np.concatenate([y[[1500]], y[keep[1:]]])
    if name == "D-removed":
        return x[keep[1:]], y[keep[1:]]
    raise ValueError(f"unknown local data set {name!r}; known: D, D-replaced, D-removed")


def initial_parameters() -> list[np.ndarray]:
    """The global softmax-regression model (64 → 10), seeded."""
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(10, 64, generator=generator) * 0.01
    return [weight.numpy().astype(np.float64), np.zeros(10)]


@functools.lru_cache(maxsize=64)
def _trained(name: str, parameters: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Full-batch gradient descent from the global model (deterministic: computed once per data set and model)."""
    w0 = np.frombuffer(parameters, dtype=np.float64)
    x, y = (torch.from_numpy(a) for a in local_data(name))
    weight = torch.tensor(w0[:640].reshape(10, 64), dtype=torch.float32, requires_grad=True)
    bias = torch.tensor(w0[640:], dtype=torch.float32, requires_grad=True)
    for _ in range(STEPS):
        loss = torch.nn.functional.cross_entropy(x @ weight.T + bias, y)
        gw, gb = torch.autograd.grad(loss, [weight, bias])
        with torch.no_grad():
            weight -= LEARNING_RATE * gw
            bias -= LEARNING_RATE * gb
    return weight.detach().numpy().astype(np.float64), bias.detach().numpy().astype(np.float64)


class DigitsClient(NumPyClient):
    def __init__(self, name: str):
        self.name = name

    def fit(self, parameters, config):
        flat = np.concatenate([np.asarray(p, dtype=np.float64).ravel() for p in parameters])
        weight, bias = _trained(self.name, flat.tobytes())
        return [weight.copy(), bias.copy()], len(local_data(self.name)[1]), {}


def client_fn(context: Context):
    return DigitsClient(str(context.run_config.get(DATASET_KEY, "D"))).to_client()


app = ClientApp(
    client_fn=client_fn, mods=[LocalDpMod(clipping_norm=CLIP, sensitivity=SENSITIVITY, epsilon=EPSILON, delta=DELTA)]
)
