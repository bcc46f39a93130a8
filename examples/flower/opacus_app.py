"""A Flower client that trains with Opacus: each TRAIN message runs DP-SGD on the client's local data with
``PrivacyEngine.make_private`` (Poisson batches, per-sample clipping, Gaussian noise), as Flower's Opacus example
does, and replies with the new parameters, the number of local records (as Flower's examples do: a server weighs
the update by it) and no metrics. The audit reads both parts as channels: ``update``, which Opacus's claim covers,
and ``num_examples``, which it does not (100 records against 99: it tells the two data sets apart in every reply).

What pgc-audit reads from this module (``pgc audit flower examples/flower/opacus_app.py:app``):

* ``app`` — the ClientApp (no mod: the privacy is Opacus's, inside ``fit``);
* ``initial_parameters()`` — the global model the server sends (logistic regression, 10 features → 2 classes);
* ``AUDIT_PAIRS`` — neighbouring local data sets by the names ``client_fn`` reads from the run config
  (``DATASET_KEY``): ``D`` (100 records) and ``D-removed`` (record 0 removed), the relation Opacus accounts for;
* ``AUDIT_CLAIM`` — the client's promise: Opacus's own PRV accountant's ε for the configuration as run (no mod
  states one).

Opacus draws its batches and noise from a ``torch.Generator`` seeded from numpy's global generator, which the audit
seeds per block of messages from its own stream: releases are reproducible from the audit's seed.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from flwr.app import Context
from flwr.client import ClientApp, NumPyClient

from pgc.contracts import PrivacyClaim
from pgc.flower import DATASET_KEY
from pgc.opacus.claims import opacus_epsilon

RECORDS, FEATURES = 100, 10
BATCH, STEPS, NOISE, CLIP, LEARNING_RATE, DELTA = 10, 1, 1.0, 1.0, 0.5, 1e-5
REDUCTION = "sum"  # the noisy sum of clipped gradients; Opacus's default "mean" divides it by a size-dependent count

# a release is a few hundred tiny tensor operations: one intra-op thread runs them far faster than a pool of threads
torch.set_num_threads(1)

AUDIT_PAIRS = {"one record removed": ("D", "D-removed")}
AUDIT_RELATION = "one record removed (add/remove, Opacus's accounting)"
AUDIT_CLAIM = PrivacyClaim(opacus_epsilon("prv", BATCH / RECORDS, NOISE, STEPS, DELTA), DELTA, ("update",))


def local_data(name: str) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(RECORDS, FEATURES, generator=generator)
    y = (x[:, 0] > 0).long()
    if name == "D":
        return x, y
    if name == "D-removed":
        return x[1:], y[1:]
    raise ValueError(f"unknown local data set {name!r}; known: D, D-removed")


def initial_parameters() -> list[np.ndarray]:
    return [np.zeros((2, FEATURES)), np.zeros(2)]


class OpacusTrainedClient(NumPyClient):
    def __init__(self, name: str):
        self.features, self.labels = local_data(name)

    def fit(self, parameters, config):
        from opacus import PrivacyEngine

        model = torch.nn.Linear(FEATURES, 2)
        with torch.no_grad():
            model.weight.copy_(torch.as_tensor(parameters[0]))
            model.bias.copy_(torch.as_tensor(parameters[1]))
        generator = torch.Generator().manual_seed(int(np.random.randint(2**31)))  # the audit seeds numpy's
        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(self.features, self.labels), batch_size=BATCH, generator=generator
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # secure mode off, and Opacus's hooks on inputs that need no gradient
            model, optimizer, loader = PrivacyEngine(accountant="prv").make_private(
                module=model,
                optimizer=torch.optim.SGD(model.parameters(), lr=LEARNING_RATE),
                data_loader=loader,
                noise_multiplier=NOISE,
                max_grad_norm=CLIP,
                noise_generator=generator,
                loss_reduction=REDUCTION,
            )
            for _, (x, y) in zip(range(STEPS), loader, strict=False):
                optimizer.zero_grad(set_to_none=True)
                if len(x):
                    torch.nn.functional.cross_entropy(model(x), y, reduction=REDUCTION).backward()
                else:  # an empty Poisson batch: the step adds noise only
                    for p in model.parameters():
                        p.grad_sample = torch.zeros((0, *p.shape))
                optimizer.step()
        weight, bias = (p.detach().double().numpy().copy() for p in model.parameters())
        return [weight, bias], len(self.labels), {}


def client_fn(context: Context):
    return OpacusTrainedClient(str(context.run_config.get(DATASET_KEY, "D"))).to_client()


app = ClientApp(client_fn=client_fn)
