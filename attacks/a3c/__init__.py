"""PGC-A3C's attackers: dynamics inference from the submissions, recovering an agent's gravity ψ.

Layering: depends on :mod:`pgc`, :mod:`pgc.mechanisms` and the auditor's search helpers. Public API:

* :class:`Attacker` and :class:`AttackScores` — the contract every attacker meets
  (:mod:`pgc.contracts`); :func:`register_attacker` adds one by name;
* :class:`ThreatModel`, :class:`AttackView`, :data:`CHANNELS` — what the attacker knows and sees
  (:mod:`attacks.a3c.threat`);
* :class:`LikelihoodAttacker`, :class:`LearnedAttacker`, :class:`SideChannelAttacker`;
* :func:`run_attack` — shadow simulation, attackers, k-linking, evaluation; :mod:`attacks.a3c.modes` — the four
  ways ``pgc attack`` attacks (a model, a run's transcript, an active aggregator, a sweep over ε);
* targets: :func:`draw_truth`, :func:`fresh_submissions` (at a checkpoint), :func:`run_submissions`
  (a ``pgc train`` transcript); :class:`TargetTruth` is evaluation-only;
* pure math: :func:`ldp_ceiling`, :func:`clopper_pearson`, :func:`normalized_advantage`,
  :func:`regression_baseline`; :func:`evaluate_classification`, :func:`evaluate_regression`.
"""

from attacks.bounds import chance_level, clopper_pearson, ldp_ceiling, normalized_advantage, regression_baseline
from pgc.contracts import Attacker, AttackScores

from .evaluate import evaluate_classification, evaluate_regression
from .learned import LearnedAttacker
from .likelihood import LikelihoodAttacker, SideChannelAttacker
from .runner import ATTACKERS, register_attacker, run_attack
from .targets import TargetTruth, draw_truth, fresh_submissions, run_submissions
from .threat import CHANNELS, AttackView, ThreatModel, parse_channels

__all__ = [
    "ATTACKERS",
    "CHANNELS",
    "Attacker",
    "AttackScores",
    "register_attacker",
    "AttackView",
    "LearnedAttacker",
    "LikelihoodAttacker",
    "SideChannelAttacker",
    "TargetTruth",
    "ThreatModel",
    "chance_level",
    "clopper_pearson",
    "draw_truth",
    "evaluate_classification",
    "evaluate_regression",
    "fresh_submissions",
    "ldp_ceiling",
    "normalized_advantage",
    "parse_channels",
    "regression_baseline",
    "run_attack",
    "run_submissions",
]
