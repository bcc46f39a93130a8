"""The report's JSON summary (report.json) as a typed :class:`pgc.schemas.Report`, built from the report's content:
each part by its own constructor from the rows, findings and studies the sections assembled."""

from __future__ import annotations

from typing import Any

from pgc.schemas.report_kind import Report
from pgc.schemas.report_parts import (
    AttackScore,
    BoundContext,
    BoundMeasure,
    FamilyFinding,
    PaperNumbers,
    ReportAttack,
    ReportAudits,
    ReportBound,
    ReportFamily,
    ReportFindings,
    ReportInput,
    ReportReferences,
    ReportSummaryRow,
    ReportTuning,
    ReportUtility,
    ReportWarning,
    SummaryWorst,
)

from .content import AttackRow, BoundRow, Findings, ReportContent, UtilityRow, summary_rows
from .summary import overall_verdict

FORMAT = "pgc-report/1"


def bound(b: BoundRow) -> ReportBound:
    """A bound row: its fields, and from the audit's row its verdict's reason and power."""
    judged = b.judged
    measure = BoundMeasure(
        claimed=b.claimed,
        lower_bound=b.lower_bound,
        confidence=b.confidence,
        cap=b.cap,
        samples=b.samples,
        delta=b.delta,
        k=b.k,
        test=b.test,
    )
    context = BoundContext(
        group=b.group,
        accountant=b.accountant,
        reference=b.reference,
        covered=b.covered,
        system=b.system,
        budget_limited=b.budget_limited,
        verdict_reason=b.row.verdict_reason if judged else None,
        detectable_epsilon=b.row.detectable_epsilon if judged else None,
        detectable_delta=b.row.detectable_delta if judged else None,
    )
    return ReportBound(
        source=b.source,
        subject=b.subject,
        channel=b.channel,
        measure=measure,
        verdict=b.verdict,
        notes=list(b.notes),
        p_value=b.p_value,
        model=b.model,
        holm_significant=b.holm_significant,
        protect=list(b.protect),
        context=context,
    )


def attack(a: AttackRow) -> ReportAttack:
    score = AttackScore(accuracy=a.accuracy, ci_low=a.ci_low, ci_high=a.ci_high, chance=a.chance, ceiling=a.ceiling)
    return ReportAttack(
        source=a.source,
        attacker=a.attacker,
        channels=a.channels,
        epsilon=a.epsilon,
        k=a.k,
        candidates=a.candidates,
        score=score,
        setting=a.setting,
        budget=a.budget,
        given_verdict=a.given_verdict,
        given_below_chance=a.given_below_chance,
        reference=a.reference,
        above_ceiling=a.above_ceiling,
        uses_side_channel=a.uses_side_channel,
        attacker_defect=a.attacker_defect,
    )


def utility(u: UtilityRow) -> ReportUtility:
    paper = u.paper
    return ReportUtility(
        source=u.source,
        setting=u.setting,
        mechanism=u.mechanism,
        epsilon=u.epsilon,
        trials=u.trials,
        horizon=u.horizon,
        fst_median=u.fst_median,
        success_ratio=u.success_ratio,
        relative_auc=u.relative_auc,
        final_mu=u.final_mu,
        paper=None
        if paper is None
        else PaperNumbers(
            fst_median=paper.get("fst_median"),
            success_ratio=paper.get("success_ratio"),
            relative_auc=paper.get("relative_auc"),
        ),
        note=u.note,
    )


def summary_row(r: dict[str, Any]) -> ReportSummaryRow:
    """A row of the summary table (:func:`reports.content.summary_rows`)."""
    worst = SummaryWorst(
        lower_bound=r["lower_bound"],
        cap=r["cap"],
        worst_subject=r["worst_subject"],
        worst_channel=r["worst_channel"],
        worst_claimed=r["worst_claimed"],
    )
    return ReportSummaryRow(
        group=r["group"],
        family=r["family"],
        channel_label=r["channel_label"],
        claimed=r["claimed"],
        claims=list(r["claims"]),
        accountant=r["accountant"],
        worst=worst,
        rows=r["rows"],
        verdict=r["verdict"],
        holm=r["holm"],
        outside_claim=r["outside_claim"],
        budget_limited=r["budget_limited"],
    )


def family(d: dict[str, Any]) -> ReportFamily:
    """Holm's family over the report's rows (:func:`reports.content.holm_family`)."""
    significant = [
        FamilyFinding(
            subject=s["subject"],
            channel=s["channel"],
            verdict=s["verdict"],
            p_value=s["p_value"],
            adjusted_p_value=s["adjusted_p_value"],
            model=s["model"],
            covered=s["covered"],
        )
        for s in d["significant"]
    ]
    return ReportFamily(
        alpha=d["alpha"],
        size=d["size"],
        excluded=d["excluded"],
        significant=significant,
        method=d["method"],
        verdict=d["verdict"],
    )


def findings(f: Findings) -> ReportFindings:
    return ReportFindings(
        warnings=[ReportWarning(level=w["level"], title=w["title"], text=w["text"]) for w in f.warnings],
        family=family(f.family),
        summary=[summary_row(r) for r in summary_rows(f)],
    )


def tuning(t: dict[str, Any]) -> ReportTuning:
    study = t["study"]
    return ReportTuning(
        source=t["source"],
        pareto_front=list(study.pareto_front),
        best_constrained=study.best_constrained,
        counts=study.counts,
    )


def report_json(c: ReportContent, generated: str, verdict: str, figures: list[str]) -> Report:
    """The report's JSON summary of content ``c``."""
    audits = ReportAudits(
        bounds=[bound(b) for b in c.bounds],
        attacks=[attack(a) for a in c.attacks],
        adversarial=c.own.adversarial + c.reference.adversarial,
        system_audits=c.own.system_audits + c.reference.system_audits,
        bandit_attacks=c.own.bandit_attacks + c.reference.bandit_attacks,
    )
    ref = findings(c.reference)
    references = (
        ReportReferences(
            verdict=overall_verdict(c.reference), family=ref.family, warnings=ref.warnings, summary=ref.summary
        )
        if c.reference
        else None
    )
    return Report(
        format=FORMAT,
        generated=generated,
        verdict=verdict,
        inputs=[ReportInput(kind=s.kind, label=s.label, path=s.shown_path, reference=s.reference) for s in c.sources],
        findings=findings(c.own),
        audits=audits,
        references=references,
        protection=c.protection,
        utility=[utility(u) for u in c.utility],
        mitigation_costs=c.mitigation_costs,
        tuning=[tuning(t) for t in c.tuning],
        figures=figures,
    )
