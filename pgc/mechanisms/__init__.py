"""Privacy mechanisms that every system uses: the :class:`Mechanism` contract, the ε-LDP and
(ε, δ)-LDP gradient mechanisms, their pure calibration math, the registry by name and the records
a run folder stores.

Modules: :mod:`pgc.mechanisms.core` (the contract, pure building blocks, the mechanism classes),
:mod:`pgc.mechanisms.calibration` (Gaussian σ, ε and δ in closed form), :mod:`pgc.mechanisms.registry`
(name → factory), :mod:`pgc.mechanisms.records` (what a run folder stores, and rebuilding from it).
This package imports nothing from the systems, the auditor, the attacks or the reports.
"""

from .calibration import analytic_gaussian_sigma, classic_gaussian_sigma, gaussian_delta, gaussian_epsilon
from .core import (
    SNAP_BOUND_SCALES,
    SQRT3,
    Gaussian,
    Laplace,
    Mechanism,
    NoNoise,
    ProjectedRandomSign,
    PRSRelease,
    achlioptas_matrices,
    bit_flip_plus_probability,
    check_gradients,
    check_rng,
    claimed_delta,
    l1_clip,
    l2_clip,
    nonfinite_rows,
    prs_reduced_dim,
    sanitize,
    snapping_grid,
    split_rounds,
)
from .records import (
    MechanismUnavailableError,
    mechanism_fingerprint,
    mechanism_params,
    mechanism_record,
    rebuild_mechanism,
    registered_name,
)
from .registry import DELTA_MECHANISMS, MECHANISMS, MechanismFactory, make_mechanism, register_mechanism

__all__ = [
    "Mechanism",
    "Laplace",
    "ProjectedRandomSign",
    "Gaussian",
    "NoNoise",
    "PRSRelease",
    "split_rounds",
    "claimed_delta",
    "check_gradients",
    "check_rng",
    "nonfinite_rows",
    "sanitize",
    "l1_clip",
    "l2_clip",
    "prs_reduced_dim",
    "bit_flip_plus_probability",
    "achlioptas_matrices",
    "snapping_grid",
    "SNAP_BOUND_SCALES",
    "SQRT3",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "MECHANISMS",
    "DELTA_MECHANISMS",
    "MechanismFactory",
    "make_mechanism",
    "register_mechanism",
    "registered_name",
    "mechanism_params",
    "mechanism_fingerprint",
    "mechanism_record",
    "MechanismUnavailableError",
    "rebuild_mechanism",
]
