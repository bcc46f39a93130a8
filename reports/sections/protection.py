"""Protection: which channels the audited configurations protect and the total ε their claim covers."""

from __future__ import annotations

import pgc.schemas as schemas
from pgc.schemas.report_parts import ReportProtection

from ..content import Findings, ReportContent, fmt_eps
from ..document import Document
from ..loaders import Source
from ..section import Section
from .utility import setting_of


def protection_records(sources: list[Source]) -> list[ReportProtection]:
    """Which channels each protected run / audit covers (pgc.a3c.protect) and its total ε."""
    out: list[ReportProtection] = []

    def add(src, subject, protect, total, gradient, score):
        rec = ReportProtection(
            source=src.label,
            subject=subject,
            protect=list(protect),
            total_epsilon=total,
            gradient_epsilon=gradient,
            score_epsilon=score,
        )
        if rec not in out:
            out.append(rec)

    for src in sources:
        r = src.result
        if isinstance(r, schemas.TrainRun):
            for t in r.trials:
                if t.protect:
                    add(
                        src,
                        f"run: {setting_of(t.config)[2]}",
                        t.protect,
                        t.claimed_epsilon_total,
                        t.gradient_epsilon,
                        t.score_epsilon,
                    )
        elif isinstance(r, schemas.RowsAudit):
            recorded = getattr(r, "protection", None)
            if isinstance(recorded, schemas.Protection) and recorded.protect:
                add(
                    src,
                    "audit (adversarial model)",
                    recorded.protect,
                    recorded.claimed_epsilon_total,
                    recorded.gradient_epsilon,
                    recorded.score_epsilon,
                )
            pairs = [("audit", a) for a in getattr(r, "environment_audits", None) or []]
            pairs += [("audit (adversarial model)", a) for a in getattr(r, "adversarial_audits", None) or []]
            for label, a in pairs:
                if a.protection is not None:
                    p = a.protection
                    add(src, label, p.protect, a.claimed_epsilon, p.gradient_epsilon, p.score_epsilon)
    return out


def _protection(doc: Document, c: ReportContent) -> None:
    """Which channels the audited runs protect (pgc.a3c.protect) and the total ε their claim covers."""
    if not c.protection:
        return
    with doc.section(
        "Protection",
        "Which channels beside the gradient the audited configurations protect, and the total ε their claim covers.",
        "protection",
    ):
        doc.para(
            "Mitigations of the channels beside the gradient (privatized score, fixed schedule, shuffler; "
            "docs/README-mitigations.md). The claim is the TOTAL ε = ε_gradient + ε_score per agent; the audits "
            "of these configurations compare every channel with it."
        )
        doc.table(
            ["source", "subject", "protected channels", "total ε", "ε gradient", "ε score"],
            [
                [
                    p.source,
                    p.subject,
                    ", ".join(p.protect),
                    fmt_eps(p.total_epsilon),
                    fmt_eps(p.gradient_epsilon),
                    fmt_eps(p.score_epsilon),
                ]
                for p in c.protection
            ],
        )


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    c.protection.extend(r for r in protection_records([src]) if r not in c.protection)


SECTION = Section("protection", ("train", *(kind.KIND for kind in schemas.AUDIT_KINDS)), _protection, _extract)
