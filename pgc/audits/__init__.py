"""PGC-A3C's own audits, built on the auditor's one engine (:func:`audit.engine.system_audit.audit_system`)
and PGC-A3C's System (:class:`pgc.a3c.system.PGCA3CSystem`): per transcript channel at a model
(:mod:`pgc.audits.environment`), with a model the aggregator crafts (:mod:`pgc.audits.adversarial`),
and the studies over them (:mod:`pgc.audits.studies`); a training run's audits, its one-run audit of canary
agents included (:mod:`pgc.audits.run`); a mechanism named by registry name (:mod:`pgc.audits.mechanism`);
and the one-run audit of a Flower simulation (:mod:`pgc.audits.flower`)."""

from importlib import import_module
from typing import Any

# public name → the submodule that defines it; imported on first use, so that a mechanism's numpy audit
# (pgc.audits.mechanism) does not load PGC-A3C's torch model through the adversarial audit
_LAZY = {
    "AdversarialAuditResult": "adversarial",
    "adversarial_audit": "adversarial",
    "EnvironmentAuditResult": "environment",
    "environment_audit": "environment",
}

__all__ = ["AdversarialAuditResult", "EnvironmentAuditResult", "adversarial_audit", "environment_audit"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_LAZY[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
