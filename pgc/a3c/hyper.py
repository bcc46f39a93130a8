"""The A3C loss and episode settings, importable without the compiled kernel."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError

from .env import EPISODE_CAP
from .layout import model_dim


@dataclass(frozen=True)
class A3CHyperparams:
    """Loss and episode settings; paper §4: γ = 0.99, λ = 0.5, β = 0.01, cap 200."""

    gamma: float = 0.99
    lam: float = 0.5
    beta: float = 0.01
    cap: int = EPISODE_CAP
    bootstrap_truncated: bool = True  # V(s_T; θ') as eq. 18's bootstrap when cut by the cap
    action_selection: str = "greedy"  # "greedy": argmax π as Alg. 1; "sample": a ~ π (usual A3C)
    # Reading knobs the paper leaves open (defaults: its literal reading). The alternatives are those
    # of the Keras A3C CartPole example whose exploration schedule §4 reproduces (0.5 → 0 over 1,800).
    # "unit": r_t = 1 per step (CartPole, §2.2); "terminal": 0 per step, −1 on a fall, +1 at the cap
    reward: str = "unit"
    n_step: int = 0  # 0: eq. 18 over the whole episode; n ≥ 1: n-step returns bootstrapped with V(s_{t+n})
    loss_reduction: str = "sum"  # "sum": eqs. 16–17 sum over steps; "mean": averaged over the episode's steps
    biases: bool = False  # False: the paper's d = 112 (no biases); True: Dense layers with biases, d = 131

    def __post_init__(self) -> None:
        if not (0.0 < self.gamma < 1.0):
            raise UserError(f"gamma must lie in (0, 1), got {self.gamma}")
        for name in ("lam", "beta"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise UserError(f"{name} must be a finite number >= 0, got {value}")
        if self.action_selection not in ("greedy", "sample"):
            raise UserError(f"action_selection must be 'greedy' or 'sample', got {self.action_selection!r}")
        if self.reward not in ("unit", "terminal"):
            raise UserError(f"reward must be 'unit' or 'terminal', got {self.reward!r}")
        if self.loss_reduction not in ("sum", "mean"):
            raise UserError(f"loss_reduction must be 'sum' or 'mean', got {self.loss_reduction!r}")
        if (
            not isinstance(self.n_step, (int, np.integer))
            or isinstance(self.n_step, bool)
            or not 0 <= self.n_step <= 10_000
        ):
            raise UserError(f"n_step must be an integer in [0, 10000] (0: whole episode), got {self.n_step!r}")
        if not isinstance(self.cap, (int, np.integer)) or not 1 <= self.cap <= 10_000:
            raise UserError(f"cap must be an integer in [1, 10000], got {self.cap!r}")
        if not isinstance(self.biases, (bool, np.bool_)):
            raise UserError(f"biases must be true or false, got {self.biases!r}")

    @property
    def dim(self) -> int:
        """d of the model these settings train: 112, or 131 with biases."""
        return model_dim(bool(self.biases))
