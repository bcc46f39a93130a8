"""A client that trains a logistic-regression model with Opacus: 200 synthetic records of 100 features, batch 10,
one local step per round. ``pgc audit opacus examples/opacus/linear_client.py:make`` audits what the server sees;
``make_sum`` takes Opacus's ``loss_reduction="sum"``, ``make_gdp`` Opacus's GDP accountant; ``make_opposed`` is the
auditor's worst-case data set for shuffled batches."""

from __future__ import annotations

import torch

from pgc.opacus import OpacusClient


def _data(records: int = 200, features: int = 100, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(records, features, generator=generator)
    w = torch.randn(features, generator=generator)
    y = (x @ w > 0).long()
    return x, y


def make(
    noise_multiplier: float = 1.0,
    accountant: str = "prv",
    local_steps: int = 1,
    poisson_sampling: bool = True,
    loss_reduction: str = "mean",
    records: int = 200,
    batch_size: int = 10,
):
    torch.manual_seed(0)  # the initial model: the user's own choice of initialisation
    x, y = _data(records=records)
    model = torch.nn.Linear(x.shape[1], 2)
    return OpacusClient(
        model=model,
        features=x,
        labels=y,
        noise_multiplier=noise_multiplier,
        max_grad_norm=1.0,
        batch_size=batch_size,
        local_steps=local_steps,
        lr=0.5,
        accountant=accountant,
        poisson_sampling=poisson_sampling,
        loss_reduction=loss_reduction,
    )


def make_sum():
    """The sum of clipped gradients plus noise, not divided by a batch size that depends on the data set."""
    return make(loss_reduction="sum")


def make_low_noise():
    return make(noise_multiplier=0.3)


def make_gdp():
    return make(accountant="gdp")


def make_full_batch(noise_multiplier: float = 1.0, records: int = 50, local_steps: int = 1):
    """Full-batch DP-SGD (every record in every step, sample rate 1): each round is exactly a Gaussian mechanism,
    μ = √steps / σ, the curve the claim states; ``loss_reduction="sum"``."""
    return make(noise_multiplier, local_steps=local_steps, loss_reduction="sum", records=records, batch_size=records)


def make_poisson(noise_multiplier: float = 1.0, sample_rate: float = 0.1, local_steps: int = 1):
    """Poisson batches of expected size ``sample_rate`` × 200 records, ``loss_reduction="sum"``."""
    batch_size = max(1, round(sample_rate * 200))
    return make(noise_multiplier, local_steps=local_steps, loss_reduction="sum", batch_size=batch_size)


def make_opposed(
    noise_multiplier: float = 0.8,
    batches: int = 100,
    batch_size: int = 2,
    poisson_sampling: bool = False,
    features: int = 4,
):
    """The auditor's worst-case data set for one pass of fixed-size batches: record 0 at +z, the other
    ``batches × batch_size`` records at −z, all of class 0, so that at any model every other record's clipped gradient
    points against record 0's (a linear model's cross-entropy gradient of a class-0 record x is p₁(x)·(−1, 1) ⊗ x,
    clipped to C; the bias part aside, which clipping shrinks to 1/|z| of it). One round is one pass of ``batches``
    steps (``local_steps = records // batch_size``, the last batch of one record left out), ``loss_reduction="sum"``,
    a zero-initialised model and a learning rate small enough that no record's gradient shrinks below C during the
    pass (its logits move by less than 0.3). Shuffled batches (``poisson_sampling=False``): adding record 0
    to a batch of fixed size pushes one −z record out of the pass, so its batch moves by 2C, not C; Opacus still
    accounts the round as Poisson sampling at q = 1 / ⌈records / batch_size⌉."""
    records = batches * batch_size + 1
    x = torch.full((records, features), -10.0)
    x[0] = 10.0
    y = torch.zeros(records, dtype=torch.long)
    model = torch.nn.Linear(features, 2)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    return OpacusClient(
        model=model,
        features=x,
        labels=y,
        noise_multiplier=noise_multiplier,
        max_grad_norm=1.0,
        batch_size=batch_size,
        local_steps=batches,
        lr=1e-4,
        accountant="prv",
        poisson_sampling=poisson_sampling,
        loss_reduction="sum",
    )
