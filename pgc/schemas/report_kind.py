"""pgc report's JSON summary (report.json): the result kind the report writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    every_field,
)

__all__ = ["Report"]


@dataclass(frozen=True, kw_only=True)
class Report(Result):
    """pgc report's JSON summary (report.json): the verdict, the inputs, the findings and audit rows (flat parts),
    the references' findings, utility, tuning and the figures. Every field is written, an unset one as null."""

    KIND = "report"
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

    def to_dict(self) -> dict[str, Any]:
        out = every_field(self)
        return {
            "kind": self.KIND,
            "format_version": self.FORMAT_VERSION,
            **{k: v for k, v in out.items() if k not in ("kind", "format_version")},
        }
