"""The trainer's compiled fast path for the built-in mechanisms: which kernel twin
(:func:`pgc.a3c.kernel.privatize_row`) stands for a :class:`pgc.mechanisms.Mechanism`, with its parameters."""

from __future__ import annotations

import math

from pgc.mechanisms import Gaussian, Laplace, Mechanism, NoNoise, ProjectedRandomSign, snapping_grid

from .mechanism_codes import MECH_GAUSSIAN, MECH_LAPLACE, MECH_LAPLACE_SECURE, MECH_NONE, MECH_PRS


def compiled_spec(mechanism: Mechanism, dim: int) -> tuple[int, float, float, int, float] | None:
    """``(kind, ε, C, d̂, scale)`` for the trainer's compiled fast path, or None; ``dim`` is the
    gradient's d (112, or 131 with biases) and ``scale`` the kind's extra float: the snapping grid of
    the secure Laplace, σ of the Gaussian, 0 otherwise.

    Only the exact built-in classes qualify (a subclass may override ``__call__``); any other
    mechanism is called through the Protocol. :func:`pgc.a3c.kernel.privatize_row` is the compiled twin
    of each ``__call__`` on one row, with the same draws in the same order.
    """
    kind = type(mechanism)
    if kind is NoNoise:
        return MECH_NONE, math.inf, math.inf if mechanism.clip is None else mechanism.clip, 1, 0.0
    if kind is Laplace:
        if mechanism.secure:
            return (MECH_LAPLACE_SECURE, mechanism.epsilon, mechanism.clip, 1, snapping_grid(mechanism.noise_scale))
        return MECH_LAPLACE, mechanism.epsilon, mechanism.clip, 1, 0.0
    if kind is ProjectedRandomSign:
        return MECH_PRS, mechanism.epsilon, mechanism.clip, mechanism.reduced_dim_for(dim), 0.0
    if kind is Gaussian:
        return MECH_GAUSSIAN, mechanism.epsilon, mechanism.clip, 1, mechanism.noise_scale
    return None
