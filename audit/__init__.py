"""The auditor: certified empirical ε and δ lower bounds next to the claimed (ε, δ).

    from audit import audit_mechanism, audit_system
    result = audit_mechanism(mechanism, dim=112, samples=1_000_000, confidence=0.95, seed=0)
    result.epsilon_lower_bound, result.claimed_epsilon, result.violation
    result = audit_system(system, secret, secret_prime, samples=100_000, adversarial=True)
    result.rows, result.verdict

Modules: :mod:`audit.certification.bounds` (pure bound math), :mod:`pgc.contracts` (the auditor's Protocols:
Sampler, Scorer, Statistic, Tester; a system's contract is :mod:`pgc.contracts`),
:mod:`audit.certification.claims` (the claim audited, and where the claimant's accounting contradicts it),
:mod:`audit.verdicts` (the one verdict rule and the one Holm rule), :mod:`audit.power.measured` (the power of the
test that ran),
:mod:`audit.statistics`, :mod:`audit.statistics.selection` and :mod:`audit.certification.tester` (select on a training
split,
certify on fresh samples), :mod:`audit.engine.system_audit` (any System, per channel, honest or adversarial
broadcast; :class:`AuditSettings`), :mod:`audit.engine.releases` (a target's releases, per-channel tests),
:mod:`audit.engine.broadcast_search` (the adversary's broadcasts), :mod:`audit.certification.accountant` (ε(δ) of the
noise added,
dp-accounting's PLD), :mod:`audit.engine.blackbox` (canary audit of any Mechanism), :mod:`audit.engine.whitebox` (PRS
ũ, M),
:mod:`audit.one_run.bounds` and :mod:`audit.one_run` (the one-run audit), :mod:`audit.selftest.mutants` (planted
bugs), :mod:`audit.selftest`, :mod:`audit.engine.progress`. The auditor imports no system package: PGC-A3C's
own audits (environment, adversarial, studies) are in :mod:`pgc.audits`.
"""

from __future__ import annotations

import importlib

# public name -> the module that defines it; imported on first use, so ``import audit`` (and a command's
# ``--help``) loads neither statsmodels nor scipy
_EXPORTS = {
    **dict.fromkeys(
        ["CanaryPair", "DeltaTestResult", "MechanismAuditResult", "audit_mechanism", "canary_pairs", "delta_test"],
        ".engine.blackbox",
    ),
    **dict.fromkeys(
        [
            "cp_lower",
            "cp_upper",
            "delta_lower_bound",
            "epsilon_from_rates",
            "epsilon_lower_bound",
            "max_certifiable_epsilon",
            "smallest_detectable_delta",
        ],
        ".certification.bounds",
    ),
    **dict.fromkeys(["CertifiedTest", "EpsilonBound", "HypothesisPair"], ".certification.tester"),
    **dict.fromkeys(["AuditSettings", "SystemAuditResult", "audit_system"], ".engine.system_audit"),
    **dict.fromkeys(["decide", "family_verdict", "judge"], ".verdicts"),
    **dict.fromkeys(["AuditRow", "Verdict"], "pgc.schemas.audit_rows"),
    "audit_prs_whitebox": ".engine.whitebox",
    "scorer_from_witness": ".statistics.fitted",
}

__all__ = [
    "audit_system",
    "AuditSettings",
    "SystemAuditResult",
    "AuditRow",
    "Verdict",
    "decide",
    "judge",
    "family_verdict",
    "audit_mechanism",
    "audit_prs_whitebox",
    "MechanismAuditResult",
    "DeltaTestResult",
    "delta_test",
    "CanaryPair",
    "canary_pairs",
    "CertifiedTest",
    "EpsilonBound",
    "HypothesisPair",
    "cp_lower",
    "cp_upper",
    "delta_lower_bound",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "max_certifiable_epsilon",
    "smallest_detectable_delta",
    "scorer_from_witness",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
