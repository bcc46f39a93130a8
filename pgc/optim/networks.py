"""A small MLP whose initial weights come from a caller's ``torch.Generator`` (the project's rule: no global
RNG), shared by the learned attacker and the thesis' DQN agent. Imports torch; nothing of the project."""

from __future__ import annotations

import torch
from torch import nn


def seeded_mlp(n_in: int, hidden: int, n_out: int, gen: torch.Generator) -> nn.Sequential:
    """n_in → hidden → hidden → n_out with ReLUs, built on the meta device (no global-RNG default init), then
    Glorot-uniform weights drawn from ``gen`` and zero biases."""
    net = nn.Sequential(
        nn.Linear(n_in, hidden, device="meta"),
        nn.ReLU(),
        nn.Linear(hidden, hidden, device="meta"),
        nn.ReLU(),
        nn.Linear(hidden, n_out, device="meta"),
    ).to_empty(device="cpu")
    with torch.no_grad():
        for layer in net:
            if isinstance(layer, nn.Linear):
                bound = (6.0 / (layer.in_features + layer.out_features)) ** 0.5
                layer.weight.uniform_(-bound, bound, generator=gen)
                layer.bias.zero_()
    return net
