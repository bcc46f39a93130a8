"""The DP-testing catalogue: the 20 algorithms of DP-Sniper's evaluation (Bichsel, Steffen, Bogunovic & Vechev,
IEEE S&P 2021) as Systems, nine of them known not to keep their claim (docs/CATALOGUE.md).

:data:`CATALOGUE` lists them (:class:`pgc.catalogue.registry.Algorithm`: parameters, domain, claim, ``broken``,
source); :func:`catalogue_system` builds one's System, whose ``canaries()`` are DP-Sniper's input pairs.
"""

from .patterns import InputDomain, input_pairs
from .registry import BROKEN, BY_NAME, CATALOGUE, CORRECT, EPSILON, Algorithm
from .system import CHANNEL, CatalogueSystem, catalogue_system

__all__ = [
    "Algorithm",
    "BROKEN",
    "BY_NAME",
    "CATALOGUE",
    "CHANNEL",
    "CORRECT",
    "CatalogueSystem",
    "EPSILON",
    "InputDomain",
    "catalogue_system",
    "input_pairs",
]
