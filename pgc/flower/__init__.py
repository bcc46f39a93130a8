"""Flower clients as Systems (a system package: it imports Flower; the auditor imports nothing of it).

* :class:`FlowerClientSystem` — a ``ClientApp`` (its mods included) audited through Flower's Message path;
  the secret names the client's local data set (:data:`DATASET_KEY` in the run config); every part of the
  reply is a channel (``update``, ``num_examples``, ``metrics.KEY``).
* :func:`crafted_update_system`, :func:`local_dp_update_system` — update-level audits of a mod on its own.
* :func:`claim_from_mods` — the claim a client's ``LocalDpMod`` states, with its μ-GDP curve.
* :mod:`pgc.flower.simulation` — canary clients inside a real Flower simulation (the one-run audit).
"""

from .mods import claim_from_mods, local_dp_sigma, mods_event, mods_of
from .system import (
    CHANNEL,
    DATASET_KEY,
    EXAMPLES_CHANNEL,
    METRIC_PREFIX,
    FlowerClientSystem,
    crafted_update_app,
    crafted_update_system,
    local_dp_update_system,
)

__all__ = [
    "CHANNEL",
    "DATASET_KEY",
    "EXAMPLES_CHANNEL",
    "METRIC_PREFIX",
    "FlowerClientSystem",
    "claim_from_mods",
    "crafted_update_app",
    "crafted_update_system",
    "local_dp_sigma",
    "local_dp_update_system",
    "mods_event",
    "mods_of",
]
