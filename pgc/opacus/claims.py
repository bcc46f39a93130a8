"""The claim of an Opacus client: what its accountant states for the configuration as run, never measured.

* add or remove one record (the relation Opacus's accounting is for): Opacus's own accountant (RDP, PRV or GDP)
  with the history (σ, q, steps);
* replace one record: dp-accounting's privacy-loss distribution of the same Poisson-subsampled Gaussian event
  under ``REPLACE_ONE`` (Opacus states no replace-one ε);
* beside either, dp-accounting's PLD ε under ``ADD_OR_REMOVE_ONE`` (a second accountant of the same event).
"""

from __future__ import annotations

import math
import warnings

RELATIONS = ("add-remove", "replace-one")


def opacus_epsilon(accountant: str, sample_rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """ε at ``delta`` that Opacus's accountant ``accountant`` ("rdp", "prv", "gdp") states for ``steps`` DP-SGD steps
    at sample rate q and noise multiplier σ (σ = 0: no privacy, ε = ∞)."""
    if noise_multiplier == 0:
        return math.inf
    from opacus.accountants import create_accountant

    account = create_accountant(mechanism=accountant)
    account.history = [(float(noise_multiplier), float(sample_rate), int(steps))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the GDP accountant warns that it is experimental: the docs say so
        return float(account.get_epsilon(delta))


def pld_epsilon(relation: str, sample_rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """dp-accounting's PLD ε at ``delta`` of ``steps`` Poisson-subsampled Gaussian steps, for ``relation``."""
    if noise_multiplier == 0:
        return math.inf
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import pld_privacy_accountant

    from pgc.mechanisms.accounting import poisson_gaussian_event

    neighbours = {
        "add-remove": privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE,
        "replace-one": privacy_accountant.NeighboringRelation.REPLACE_ONE,
    }[relation]
    account = pld_privacy_accountant.PLDAccountant(neighboring_relation=neighbours)
    account.compose(poisson_gaussian_event(sample_rate, noise_multiplier, steps))
    return float(account.get_epsilon(delta))
