"""Federated linear contextual bandits under silo-level local differential privacy.

A core package (imports nothing from audit/attacks/reports): M silos each serve a stream of users for
T rounds; a user brings a context c whose K arms have features x = φ(c, a) ∈ R^d, ‖x‖ ≤ 1, and a
linear reward y = xᵀθ* + η clipped to [−1, 1]. Three algorithms, all vectorized over silos and
independent runs:

* :func:`pgc.fedlinucb.algorithms.fedlinucb` — non-private, fixed batch B;
* :func:`pgc.fedlinucb.algorithms.dp20_feducb` — Dubey & Pentland (2020) FedUCB: tree-based Gaussian
  noise on the synced statistics, *adaptive* sync triggered by each silo's non-private data;
* :func:`pgc.fedlinucb.algorithms.private_fedlinucb` — Zhou & Chowdhury: fixed batch B = √(T/M) and the
  distributed tree-based Gaussian mechanism.

:mod:`pgc.fedlinucb.systems` wraps each algorithm as a System (one silo's releases) for the auditor.
"""

from .config import BanditConfig, DP20Config, PrivacyConfig
from .privacy import (
    accuracy_ceiling,
    lowest_set_bit,
    private_fedlinucb_sigma,
    regularizer,
    tree_levels,
)

__all__ = [
    "BanditConfig",
    "DP20Config",
    "PrivacyConfig",
    "accuracy_ceiling",
    "lowest_set_bit",
    "private_fedlinucb_sigma",
    "regularizer",
    "tree_levels",
]
