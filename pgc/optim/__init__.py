"""Pure search helpers that the systems, the auditor and the attacks share: one CMA-ES loop
(:func:`pgc.optim.cmaes_search.cmaes_maximize`) and, in :mod:`pgc.optim.networks` (imported on its own, as it
loads torch), a seeded MLP. Imports nothing of the project."""

from .cmaes_search import CMAESResult, cmaes_maximize

__all__ = ["CMAESResult", "cmaes_maximize"]
