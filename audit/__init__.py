"""The auditor: certified empirical ε lower bounds next to the claimed ε.

    from audit import audit_mechanism
    result = audit_mechanism(mechanism, dim=112, samples=1_000_000, confidence=0.95, seed=0)
    result.epsilon_lower_bound, result.claimed_epsilon, result.violation

Modules: :mod:`audit.bounds` (pure bound math), :mod:`audit.interfaces` (Protocols),
:mod:`audit.statistics` and :mod:`audit.tester` (select on a training split, certify on fresh
samples), :mod:`audit.blackbox` (canary audit of any Mechanism), :mod:`audit.whitebox` (PRS ũ, M),
:mod:`audit.environment` (per transcript channel at a model), :mod:`audit.adversarial` (the
aggregator crafts the model: adversary instantiation), :mod:`audit.mutants` (planted bugs),
:mod:`audit.selftest`.
"""

from .adversarial import AdversarialAuditResult, SearchSettings, adversarial_audit, search_crafted_model
from .blackbox import CanaryPair, DeltaTestResult, MechanismAuditResult, audit_mechanism, canary_pairs, delta_test
from .bounds import (cp_lower, cp_upper, delta_lower_bound, epsilon_from_rates, epsilon_lower_bound,
                     max_certifiable_epsilon, smallest_detectable_delta)
from .environment import EnvironmentAuditResult, environment_audit
from .tester import CertifiedTest, EpsilonBound, HypothesisPair
from .whitebox import audit_prs_whitebox

__all__ = ["adversarial_audit", "search_crafted_model", "AdversarialAuditResult", "SearchSettings",
           "audit_mechanism", "audit_prs_whitebox", "environment_audit", "MechanismAuditResult",
           "DeltaTestResult", "delta_test",
           "EnvironmentAuditResult", "CanaryPair", "canary_pairs", "CertifiedTest", "EpsilonBound",
           "HypothesisPair", "cp_lower", "cp_upper", "delta_lower_bound", "epsilon_from_rates",
           "epsilon_lower_bound", "max_certifiable_epsilon", "smallest_detectable_delta"]
