"""A client that trains a small MLP (100 → 64 → 2, 6,594 parameters) on 10,000 synthetic records with Opacus,
batches of 1,000 (sample rate 0.1), 100 steps (10 epochs), σ = 1.4: Opacus's PRV ε ≈ 4 at δ = 1e-5.
``pgc audit opacus-one-run examples/opacus/mlp_client.py:make --canaries 1000`` audits it in one training."""

from __future__ import annotations

import torch

from pgc.opacus import OpacusClient


def make(
    records: int = 10_000,
    noise_multiplier: float = 1.4,
    batch_size: int = 1_000,
    local_steps: int = 100,
    poisson_sampling: bool = True,
    loss_reduction: str = "sum",
):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(records, 100, generator=generator)
    y = (x[:, :5] @ torch.randn(5, generator=generator) > 0).long()  # the label depends on five features
    torch.manual_seed(0)  # the initial model: the user's own choice of initialisation
    model = torch.nn.Sequential(torch.nn.Linear(100, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    return OpacusClient(
        model=model,
        features=x,
        labels=y,
        noise_multiplier=noise_multiplier,
        max_grad_norm=1.0,
        batch_size=batch_size,
        local_steps=local_steps,
        lr=0.05,
        poisson_sampling=poisson_sampling,
        loss_reduction=loss_reduction,
    )
