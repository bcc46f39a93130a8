"""Mechanisms by name: the registry the CLI, the tuner and run folders read."""

from __future__ import annotations

import math
from collections.abc import Callable

from pgc.errors import UserError

from .core import Gaussian, Laplace, Mechanism, NoNoise, ProjectedRandomSign

MechanismFactory = Callable[..., Mechanism]
_DEFAULT_CLIP = {
    "laplace": 0.01,
    "prs": 1.0,
    "none": 0.01,
    "gaussian": 0.01,
}  # laplace-secure uses laplace's  # paper §4 "Hyper Parameters"


def _make_laplace(epsilon: float, clip: float | None = None, reduced_dim: int | None = None) -> Mechanism:
    if reduced_dim is not None:
        raise UserError("reduced_dim only applies to the 'prs' mechanism")
    return Laplace(epsilon=epsilon, clip=_DEFAULT_CLIP["laplace"] if clip is None else clip)


def _make_secure_laplace(epsilon: float, clip: float | None = None, reduced_dim: int | None = None) -> Mechanism:
    if reduced_dim is not None:
        raise UserError("reduced_dim only applies to the 'prs' mechanism")
    return Laplace(epsilon=epsilon, clip=_DEFAULT_CLIP["laplace"] if clip is None else clip, secure=True)


def _make_prs(epsilon: float, clip: float | None = None, reduced_dim: int | None = None) -> Mechanism:
    return ProjectedRandomSign(
        epsilon=epsilon, clip=_DEFAULT_CLIP["prs"] if clip is None else clip, reduced_dim=reduced_dim
    )


def _gaussian_factory(analytic: bool) -> MechanismFactory:
    def make(
        epsilon: float, clip: float | None = None, reduced_dim: int | None = None, delta: float | None = None
    ) -> Mechanism:
        if reduced_dim is not None:
            raise UserError("reduced_dim only applies to the 'prs' mechanism")
        if delta is None:
            raise UserError("the Gaussian mechanism needs delta (its (epsilon, delta) claim)")
        return Gaussian(
            epsilon=epsilon, delta=delta, clip=_DEFAULT_CLIP["gaussian"] if clip is None else clip, analytic=analytic
        )

    return make


def _make_none(epsilon: float = math.inf, clip: float | None = None, reduced_dim: int | None = None) -> Mechanism:
    if epsilon is not None and not (isinstance(epsilon, (int, float)) and math.isinf(epsilon)):
        raise UserError("the 'none' mechanism has epsilon = inf")
    if reduced_dim is not None:
        raise UserError("reduced_dim only applies to the 'prs' mechanism")
    return NoNoise(clip=_DEFAULT_CLIP["none"] if clip is None else (None if clip == math.inf else clip))


MECHANISMS: dict[str, MechanismFactory] = {
    "laplace": _make_laplace,
    "laplace-secure": _make_secure_laplace,
    "prs": _make_prs,
    "none": _make_none,
    "gaussian": _gaussian_factory(analytic=False),
    "gaussian-analytic": _gaussian_factory(analytic=True),
}
DELTA_MECHANISMS = frozenset({"gaussian", "gaussian-analytic"})  # registry names whose factory takes delta


def register_mechanism(name: str, factory: MechanismFactory) -> None:
    """Make a third-party mechanism available by name (``factory(epsilon, clip, reduced_dim)``)."""
    if not name or name in MECHANISMS:
        raise UserError(f"mechanism name {name!r} is empty or already registered")
    MECHANISMS[name] = factory


def make_mechanism(
    name: str,
    epsilon: float = math.inf,
    clip: float | None = None,
    reduced_dim: int | None = None,
    delta: float | None = None,
) -> Mechanism:
    """Build a registered mechanism; ``clip=None`` takes the paper's C for that mechanism. ``delta`` is the
    claim's δ, for the mechanisms that take one (the Gaussian ones); others refuse a positive δ."""
    if name not in MECHANISMS:
        raise UserError(f"unknown mechanism {name!r}; known: {', '.join(sorted(MECHANISMS))}")
    if name in DELTA_MECHANISMS:
        return MECHANISMS[name](epsilon=epsilon, clip=clip, reduced_dim=reduced_dim, delta=delta)
    if delta:
        raise UserError(f"mechanism {name!r} is pure epsilon-DP; delta applies to the Gaussian mechanisms")
    return MECHANISMS[name](epsilon=epsilon, clip=clip, reduced_dim=reduced_dim)
