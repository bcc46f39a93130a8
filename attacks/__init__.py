"""Adversaries that recover a secret from what a system releases.

* :mod:`attacks.bounds` — the pure math every attack is scored by: ε-LDP accuracy ceilings, exact binomial
  intervals, the normalized advantage, regression baselines;
* :mod:`attacks.a3c` — PGC-A3C's attackers (dynamics inference of an agent's gravity ψ from its submissions:
  likelihood, learned and side-channel attackers, the active aggregator, crafted layouts, sweeps over ε) with
  their threat model, shadow simulation, targets and evaluator;
* :mod:`attacks.bandit` — the federated bandit's first-user inference; :mod:`attacks.map_recovery` — a map from a
  grid agent's behaviour (thesis ch. 4); :mod:`attacks.membership` — membership behind the one-parameter defence
  (thesis ch. 6).

Every attacker meets :class:`pgc.contracts.Attacker` and returns :class:`pgc.contracts.AttackScores`.
"""

from pgc.contracts import Attacker, AttackScores

from .bounds import chance_level, clopper_pearson, ldp_ceiling, normalized_advantage, regression_baseline

__all__ = [
    "Attacker",
    "AttackScores",
    "chance_level",
    "clopper_pearson",
    "ldp_ceiling",
    "normalized_advantage",
    "regression_baseline",
]
