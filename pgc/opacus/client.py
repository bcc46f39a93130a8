"""What a user's factory returns for ``pgc audit opacus MODULE:FACTORY``: one client's model, data and DP-SGD
settings, checked when it is built (a bad value is a one-line error)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pgc.errors import UserError

ACCOUNTANTS = ("rdp", "prv", "gdp")  # Opacus's accountants (opacus.accountants: RDP, PRV, GDP)
LOSSES = ("cross_entropy", "mse")


@dataclass(frozen=True, kw_only=True)
class OpacusClient:
    """One client's local DP-SGD training with Opacus.

    ``model`` (a ``torch.nn.Module`` Opacus supports), ``features`` and ``labels`` (tensors: the local data set,
    one row per record), ``loss`` ("cross_entropy": integer labels; "mse"), ``noise_multiplier`` σ, ``max_grad_norm``
    C, ``batch_size`` (the expected batch: Opacus's sample rate is batch_size / records), ``local_steps`` (batches
    per round), ``lr`` (plain SGD), ``accountant`` (Opacus's: "rdp", "prv" or "gdp"), ``poisson_sampling``
    (Opacus's default; False: shuffled batches, still accounted as Poisson by Opacus), ``loss_reduction`` (Opacus's
    "mean" divides the noisy sum by its expected batch size, ``int(records × sample rate)``, which depends on the
    data set's size; "sum" does not), ``delta``.
    """

    model: Any
    features: Any
    labels: Any
    noise_multiplier: float
    max_grad_norm: float
    batch_size: int
    local_steps: int = 1
    lr: float = 0.1
    loss: str = "cross_entropy"
    accountant: str = "prv"
    poisson_sampling: bool = True
    loss_reduction: str = "mean"  # Opacus's: "mean" divides by int(records × sample rate), "sum" by nothing
    delta: float = 1e-5

    def __post_init__(self) -> None:
        import torch

        if not isinstance(self.model, torch.nn.Module):
            raise UserError(f"OpacusClient.model must be a torch.nn.Module, got {type(self.model).__name__}")
        for name in ("features", "labels"):
            if not isinstance(getattr(self, name), torch.Tensor):
                raise UserError(f"OpacusClient.{name} must be a torch.Tensor")
        records = len(self.features)
        if records < 2 or len(self.labels) != records:
            raise UserError(
                f"OpacusClient: features and labels need the same number of rows (≥ 2), got "
                f"{records} and {len(self.labels)}"
            )
        if not (math.isfinite(self.noise_multiplier) and self.noise_multiplier >= 0):
            raise UserError(f"OpacusClient.noise_multiplier must be ≥ 0, got {self.noise_multiplier!r}")
        if not (math.isfinite(self.max_grad_norm) and self.max_grad_norm > 0):
            raise UserError(f"OpacusClient.max_grad_norm must be > 0, got {self.max_grad_norm!r}")
        if not (isinstance(self.batch_size, int) and 1 <= self.batch_size <= records):
            raise UserError(f"OpacusClient.batch_size must be an integer in [1, {records}], got {self.batch_size!r}")
        if not (isinstance(self.local_steps, int) and self.local_steps >= 1):
            raise UserError(f"OpacusClient.local_steps must be a positive integer, got {self.local_steps!r}")
        if self.accountant not in ACCOUNTANTS:
            raise UserError(f"OpacusClient.accountant must be one of {', '.join(ACCOUNTANTS)}, got {self.accountant!r}")
        if self.loss not in LOSSES:
            raise UserError(f"OpacusClient.loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.loss_reduction not in ("mean", "sum"):
            raise UserError(f"OpacusClient.loss_reduction must be 'mean' or 'sum', got {self.loss_reduction!r}")
        if not (0 < self.delta < 1):
            raise UserError(f"OpacusClient.delta must lie in (0, 1), got {self.delta!r}")

    @property
    def records(self) -> int:
        return len(self.features)

    @property
    def sample_rate(self) -> float:
        """Opacus's sample rate for the data set as given: ``1 / len(data_loader)``, the loader of ``batch_size``
        without drop_last holding ⌈records / batch_size⌉ batches (batch_size / records only where it divides)."""
        return 1.0 / math.ceil(self.records / self.batch_size)
