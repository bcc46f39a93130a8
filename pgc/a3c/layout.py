"""The actor-critic's sizes (see :mod:`pgc.a3c.model` for its layout), importable without torch."""

from __future__ import annotations

STATE_DIM = 4
HIDDEN = 16
ACTIONS = 2
DIM = HIDDEN * STATE_DIM + ACTIONS * HIDDEN + HIDDEN  # 112: the paper's d, no biases
DIM_BIASED = DIM + HIDDEN + ACTIONS + 1  # 131: Dense layers with biases
DIMS = (DIM, DIM_BIASED)


def model_dim(biases: bool) -> int:
    """d of the actor-critic: 112 (the paper's, no biases) or 131 (Dense layers with biases)."""
    return DIM_BIASED if biases else DIM
