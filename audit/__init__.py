"""The auditor: certified empirical ε and δ lower bounds next to the claimed (ε, δ).

    from audit import audit_mechanism, audit_system
    result = audit_mechanism(mechanism, dim=112, samples=1_000_000, confidence=0.95, seed=0)
    result.epsilon_lower_bound, result.claimed_epsilon, result.violation
    result = audit_system(system, secret, secret_prime, samples=100_000, adversarial=True)
    result.rows, result.verdict

Modules: :mod:`audit.bounds` (pure bound math), :mod:`audit.interfaces` (Protocols: Sampler,
Statistic, Tester, PrivacyClaim, System), :mod:`audit.statistics`, :mod:`audit.selection` and
:mod:`audit.tester` (select on a training split, certify on fresh samples), :mod:`audit.system_audit`
(any System, per channel, honest or adversarial broadcast), :mod:`audit.accountant` (ε(δ) of the noise
added, dp-accounting's PLD), :mod:`audit.blackbox` (canary audit of any Mechanism),
:mod:`audit.whitebox` (PRS ũ, M), :mod:`audit.pgc_system` (PGC-A3C as a System),
:mod:`audit.environment` (per transcript channel at a model), :mod:`audit.crafted` (the crafted
family and its search), :mod:`audit.adversarial` (the aggregator crafts the model),
:mod:`audit.studies` (curves, false-alarm study), :mod:`audit.mutants` (planted bugs),
:mod:`audit.selftest`, :mod:`audit.progress`.
"""

from .adversarial import AdversarialAuditResult, SearchSettings, adversarial_audit, search_crafted_model
from .blackbox import CanaryPair, DeltaTestResult, MechanismAuditResult, audit_mechanism, canary_pairs, delta_test
from .bounds import (cp_lower, cp_upper, delta_lower_bound, epsilon_from_rates, epsilon_lower_bound,
                     max_certifiable_epsilon, smallest_detectable_delta)
from .environment import EnvironmentAuditResult, environment_audit
from .tester import CertifiedTest, EpsilonBound, HypothesisPair
from .interfaces import PrivacyClaim, System
from .system_audit import Claim, SystemAuditResult, SystemAuditRow, audit_system
from .whitebox import audit_prs_whitebox

__all__ = ["audit_system", "Claim", "PrivacyClaim", "System", "SystemAuditResult", "SystemAuditRow", "adversarial_audit", "search_crafted_model", "AdversarialAuditResult", "SearchSettings",
           "audit_mechanism", "audit_prs_whitebox", "environment_audit", "MechanismAuditResult",
           "DeltaTestResult", "delta_test",
           "EnvironmentAuditResult", "CanaryPair", "canary_pairs", "CertifiedTest", "EpsilonBound",
           "HypothesisPair", "cp_lower", "cp_upper", "delta_lower_bound", "epsilon_from_rates",
           "epsilon_lower_bound", "max_certifiable_epsilon", "smallest_detectable_delta"]
