"""Small locally private systems with known answers, correct and deliberately broken: for checking an
auditor, and as short examples of the System contract (``pgc.contracts.System``, structural: nothing
here imports ``audit``). Each is one class whose ``release`` is vectorized over n releases.

* :class:`GaussianVectorSystem` — a user's vector, L2-clipped and released with Gaussian noise;
  ``sensitivity_factor`` < 1 calibrates the noise to a wrong (too small) sensitivity.
* :class:`BatchedSumSystem` — a user stream summed per batch and sent with Gaussian noise; channels
  ``messages`` and ``schedule``. ``adaptive=True`` sends a batch early when the stream's own running sum
  passes a threshold: the schedule then depends on the data, and the claim that covers it fails.
* :class:`LaplaceCountSystem` — a pure ε-LDP count (x ∈ [0, 1] plus Lap(1/ε)).
* :class:`RandomizedResponseSystem`, :class:`UnaryEncodingSystem`, :class:`HashedReportSystem`
  (:mod:`pgc.toysystems.frequency`) — local frequency oracles in the report formats deployments use (the hashed
  report as (bit, hash seed), with an optional decoder offered to the auditor).
* :class:`SubsampledGaussianSystem` (:mod:`pgc.toysystems.dpsgd`) — one record's view of DP-SGD, claimed with
  the Poisson-subsampling accountant's privacy profile; ``sampling="shuffle"`` or ``"always"`` is what many
  implementations run instead.
"""

from .dpsgd import SubsampledGaussianSystem, dp_sgd_system
from .frequency import HashedReportSystem, RandomizedResponseSystem, UnaryEncodingSystem
from .systems import (
    BatchedSumSystem,
    GaussianVectorSystem,
    LaplaceCountSystem,
    batched_sum_system,
    gaussian_vector_system,
    laplace_count_system,
)

__all__ = [
    "BatchedSumSystem",
    "GaussianVectorSystem",
    "HashedReportSystem",
    "LaplaceCountSystem",
    "RandomizedResponseSystem",
    "SubsampledGaussianSystem",
    "UnaryEncodingSystem",
    "batched_sum_system",
    "dp_sgd_system",
    "gaussian_vector_system",
    "laplace_count_system",
]
