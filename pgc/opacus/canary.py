"""The white-box gradient canary of an Opacus client (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini,
Terzis, USENIX Security 2023, the "Dirac canary"): a per-sample gradient that is zero but for one parameter
coordinate, where it equals the clipping norm C, inserted into every batch that samples it.

The auditor of a white-box threat model controls the differing record's gradient. The canary is not a record of the
data set: after the batch's backward pass (Opacus's hooks have written each parameter's ``grad_sample``), the
canary's row is appended to ``grad_sample`` when the batch samples it, and Opacus clips, sums, noises and scales the
batch as shipped. The batch samples the canary as it would sample one more record:

* Poisson batches (Opacus's ``DPDataLoader``): independently with probability q, the client's sample rate;
* shuffled batches: once per pass over the data, in the batch of a uniformly drawn position among records + 1
  (the last batch where that position lies past it).

The coordinate is the one whose clipped per-record gradients at the initial model are smallest in mean absolute
value (Nasr et al. place the Dirac canary where the other records' gradients are smallest, so that the batch's
other records hide it least).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def dirac_coordinates(client: Any, count: int = 1, records: int = 2000) -> list[int]:
    """The flat indices, over the trainable parameters, of the ``count`` coordinates with the smallest mean absolute
    clipped per-record gradient at the client's initial model (over its first ``records`` records), smallest first."""
    from .statistics import clipped_gradients

    total = sum(np.abs(g) for g in clipped_gradients(client, client.features[:records], client.labels[:records]))
    return [int(i) for i in np.argsort(total, kind="stable")[:count]]


def dirac_direction(size: int, coordinate: int, max_grad_norm: float) -> np.ndarray:
    """The canary's gradient, flattened over the trainable parameters: C at ``coordinate``, zero elsewhere."""
    direction = np.zeros(size)
    direction[coordinate] = max_grad_norm
    return direction


class GradientCanary:
    """Appends the rows of the canaries a batch samples to every parameter's ``grad_sample``: canary k a Dirac
    gradient of norm C at ``coordinates[k]``, each sampled as one more record would be."""

    def __init__(self, params: list, coordinates: list[int], client: Any, batches: int) -> None:
        import torch

        flat = torch.zeros((len(coordinates), sum(p.numel() for p in params)), dtype=params[0].dtype)
        flat[torch.arange(len(coordinates)), torch.as_tensor(coordinates)] = client.max_grad_norm
        self.rows, start = [], 0
        for p in params:
            self.rows.append(flat[:, start : start + p.numel()].reshape(len(coordinates), *p.shape))
            start += p.numel()
        self.count = len(coordinates)
        self.poisson, self.rate = client.poisson_sampling, client.sample_rate
        self.records, self.batch_size, self.batches = client.records, client.batch_size, batches
        self.batch_of_pass = torch.full((self.count,), -1)

    def start_pass(self, generator: Any) -> None:
        """A new pass over the shuffled data: the batch that holds each canary this pass."""
        import torch

        if not self.poisson:
            positions = torch.randint(self.records + 1, (self.count,), generator=generator)
            self.batch_of_pass = (positions // self.batch_size).clamp(max=self.batches - 1)

    def sampled(self, batch: int, generator: Any) -> Any:
        """The canaries batch ``batch`` of the pass samples (a boolean tensor, one entry per canary)."""
        import torch

        if self.poisson:
            return torch.rand(self.count, generator=generator) < self.rate
        return self.batch_of_pass == batch

    def insert(self, params: list, sampled: Any) -> None:
        import torch

        if not bool(sampled.any()):
            return
        for p, rows in zip(params, self.rows, strict=True):
            p.grad_sample = torch.cat([p.grad_sample, rows[sampled].to(p.grad_sample.dtype)])
