"""pgc report's JSON summary (report.json): the result kind the report writes."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Result
from .report_parts import (
    ReportAudits,
    ReportFindings,
    ReportInput,
    ReportMitigationCosts,
    ReportProtection,
    ReportReferences,
    ReportTuning,
    ReportUtility,
)

__all__ = ["Report"]


@dataclass(frozen=True, kw_only=True)
class Report(Result):
    """pgc report's JSON summary (report.json): the verdict, the inputs, the findings and audit rows (flat parts),
    the references' findings, utility, tuning and the figures. Every field is written, an unset one as null."""

    KIND = "report"
    WRITE_NULLS = True
    format: str
    generated: str | None = None
    verdict: str
    inputs: list[ReportInput]
    findings: ReportFindings | None = field(default=None, metadata={"flat": True})
    audits: ReportAudits | None = field(default=None, metadata={"flat": True})
    references: ReportReferences | None = None
    protection: list[ReportProtection] = field(default_factory=list)
    utility: list[ReportUtility] = field(default_factory=list)
    mitigation_costs: list[ReportMitigationCosts] = field(default_factory=list)
    tuning: list[ReportTuning] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
