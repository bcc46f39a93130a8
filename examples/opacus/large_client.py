"""A client whose model has about 100,000 parameters: an MLP (100 → 980 → 2, 100,942 parameters) trained with Opacus
on the data of ``linear_client.py`` (200 synthetic records of 100 features, a linear label), batch 10, one local
step, σ = 1, C = 1, ``loss_reduction="sum"``. ``pgc audit opacus examples/opacus/large_client.py:make --samples 20000
--workers 2`` audits what the server sees (results/opacus/large-model/)."""

from __future__ import annotations

import torch

from pgc.opacus import OpacusClient

HIDDEN = 980  # 100·980 + 980 + 980·2 + 2 = 100,942 parameters


def make(
    noise_multiplier: float = 1.0,
    local_steps: int = 1,
    batch_size: int = 10,
    loss_reduction: str = "sum",
    hidden: int = HIDDEN,
):
    generator = torch.Generator().manual_seed(0)  # the same records and labels as linear_client.py's
    x = torch.randn(200, 100, generator=generator)
    y = (x @ torch.randn(100, generator=generator) > 0).long()
    torch.manual_seed(0)  # the initial model: the user's own choice of initialisation
    model = torch.nn.Sequential(torch.nn.Linear(100, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 2))
    return OpacusClient(
        model=model,
        features=x,
        labels=y,
        noise_multiplier=noise_multiplier,
        max_grad_norm=1.0,
        batch_size=batch_size,
        local_steps=local_steps,
        lr=0.5,
        loss_reduction=loss_reduction,
    )
