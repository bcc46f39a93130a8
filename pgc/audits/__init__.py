"""PGC-A3C's own audits, built on the auditor's one engine (:func:`audit.system_audit.audit_system`)
and PGC-A3C's System (:class:`pgc.a3c.system.PGCA3CSystem`): per transcript channel at a model
(:mod:`pgc.audits.environment`), with a model the aggregator crafts (:mod:`pgc.audits.adversarial`),
and the studies over them (:mod:`pgc.audits.studies`); a training run's audits, its one-run audit of canary
agents included (:mod:`pgc.audits.run`); a mechanism named by registry name (:mod:`pgc.audits.mechanism`);
and the one-run audit of a Flower simulation (:mod:`pgc.audits.flower`)."""

from .adversarial import AdversarialAuditResult, adversarial_audit
from .environment import EnvironmentAuditResult, environment_audit

__all__ = ["AdversarialAuditResult", "EnvironmentAuditResult", "adversarial_audit", "environment_audit"]
